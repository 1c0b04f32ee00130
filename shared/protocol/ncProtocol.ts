/**
 * CC → NC operations (served at NC_PATH on port 8775). Names follow Eucalyptus's NC API.
 * Every request and response is validated with these schemas on both sides.
 */
import { z } from 'zod';
import {
  hostSchema, instanceIdSchema, instanceStateSchema, migrationStateSchema, nodeStateSchema,
  reservationIdSchema, resourcesSchema, vmTypeSchema,
} from './common.js';
import { incomingSchema, ncMigrateRequestSchema, ncMigrateResponseSchema, planSchema } from './migrationProtocol.js';
import { ncVolumeAttachmentSchema, volumeAttachmentSpecSchema, volumeIdSchema } from './volumes.js';

/**
 * A copy made by re-homing a stopped instance (cc/rehome.ts: StartInstances elsewhere, a drain's cold
 * move): the node of the copy it replaces and the move's generation (that copy's generation + 1; a
 * copy never moved so is generation 0). The CC forgets the older copy by it (cc/moveRepair.ts).
 */
export const movedSchema = z.object({ from: hostSchema, generation: z.number().int().min(1) });
export type Moved = z.infer<typeof movedSchema>;

/** Why a terminate was asked: `user` (TerminateInstances: the instance ends everywhere), `move` (cc/rehome.ts forgetting the copy it replaced). */
export const terminateReasonSchema = z.enum(['user', 'move']);
export type TerminateReason = z.infer<typeof terminateReasonSchema>;

export const ncInstanceSchema = z.object({
  instanceId: instanceIdSchema,
  reservationId: reservationIdSchema,
  imageId: z.string(),
  ownerId: z.string(),
  vmType: vmTypeSchema,
  state: instanceStateSchema,
  /** The hypervisor's own word for it (running, paused, shutoff, crashed), 'missing', or 'unknown' before the NC has seen its hypervisor. */
  hypervisorState: z.string(),
  launchTime: z.number(),
  migrationState: migrationStateSchema,
  /**
   * True: the NC lost its store and re-adopted this running domain (issue 16): it knows the id, image,
   * resources and start time; reservationId, ownerId and the VM type's name are placeholders, so the
   * CLC's own record of the instance says them. Absent otherwise, and from NCs before it.
   */
  adopted: z.boolean().optional(),
  /** Its volumes (issue 18), as the NC's record holds them; absent when none, and from NCs before volumes. */
  volumes: z.array(ncVolumeAttachmentSchema).optional(),
  /** Paused by an administrator (issue 18, ncPauseInstance): its domain is suspended. Absent when not, and from older NCs. */
  paused: z.literal(true).optional(),
  /**
   * Stopped by its user (issue 18, ncStopInstance): its domain is shut off on purpose and holds no
   * capacity; host HA never powers it on nor restarts it elsewhere. Absent when not, and from older NCs.
   */
  userStopped: z.literal(true).optional(),
  /**
   * Its last RebootInstances (issue 18): when the guest was asked, and how it rebooted — `guest` (it
   * honoured the ACPI request) or `reset` (it ignored it; the NC reset it after its bound). Absent
   * before any, and from older NCs.
   */
  lastReboot: z.object({ at: z.number(), how: z.enum(['guest', 'reset']) }).optional(),
  /** This copy re-homes the one on `moved.from` (movedSchema). Absent: never re-homed, and from older NCs. */
  moved: movedSchema.optional(),
  /** A tombstone's cause, as its terminate said (a user's wins over a move's). Absent on live copies, and from older NCs. */
  endedBy: terminateReasonSchema.optional(),
});
export type NcInstance = z.infer<typeof ncInstanceSchema>;

/**
 * The NC found its store (nc.json) missing though the node had run before: it recreated it, came up
 * disabled and re-adopted its hypervisor's domains. Reported until an administrator enables the node.
 */
/** An instance's identity and shape as a run request carries it and the NC's instance record keeps it. */
export const instanceLaunchSchema = z.object({
  instanceId: instanceIdSchema,
  reservationId: reservationIdSchema,
  imageId: z.string().min(1),
  ownerId: z.string().min(1),
  vmType: vmTypeSchema,
  launchTime: z.number(),
});

export const lostStoreSchema = z.object({
  /** When the NC found it lost (epoch ms, the NC's clock). */
  detectedAt: z.number(),
  /** What showed the node had run before: its identity file, or domains in its hypervisor. */
  evidence: z.string(),
  /** The instances re-adopted from the hypervisor since (their records recreated). */
  adopted: z.array(instanceIdSchema),
});
export type LostStore = z.infer<typeof lostStoreSchema>;

/** The longest reason an administrator may give for a quarantine (it is shown by every describe). */
export const QUARANTINE_REASON_MAX = 256;

/**
 * An administrator isolated the node as suspected compromised (issue 18, QuarantineNode): it is
 * disabled, takes no instance (not by placement, not by migration, not even when named) and its
 * instances move only when an administrator names them. Persisted by the NC; only a release ends it.
 */
export const quarantineSchema = z.object({
  /** When the NC persisted it (epoch ms, the NC's clock). */
  since: z.number(),
  /** The administrator's words, '' when none were given. */
  reason: z.string().max(QUARANTINE_REASON_MAX),
});
export type Quarantine = z.infer<typeof quarantineSchema>;

export const ncNodeSchema = z.object({
  host: hostSchema,
  nodeState: nodeStateSchema,
  /** False when the NC cannot reach its hypervisor. */
  healthy: z.boolean(),
  hypervisor: z.string(),
  capacity: resourcesSchema,
  /** Resources held by instances that are not terminated, by incoming migrations and by unclaimed domains. */
  used: resourcesSchema,
  instances: z.array(ncInstanceSchema),
  /**
   * Live migration (migrationProtocol.ts): the plans this NC is the source of, finished ones it still
   * holds included, and the incoming records it holds as a destination. Optional so an NC without
   * live migration still answers within the contract; readers treat absent as [].
   */
  plans: z.array(planSchema).optional(),
  incoming: z.array(incomingSchema).optional(),
  /** Present while the node is out of service after its store was lost (optional: older NCs never say). */
  lostStore: lostStoreSchema.optional(),
  /** Present while an administrator holds the node in quarantine (optional: older NCs never say). */
  quarantine: quarantineSchema.optional(),
  /**
   * Stands for this report's content (a boot id and a counter: shared/listingVersions.ts): the node
   * watch's checks answer it alone (shared/protocol/nodeWatch.ts). Absent from older NCs.
   */
  version: z.string().min(1).max(128).optional(),
});
export type NcNode = z.infer<typeof ncNodeSchema>;

export const NC_OPS = {
  /** Capacity, node state and every instance; the CC's poll and its source of truth. */
  ncDescribeResource: {
    request: z.object({}),
    response: ncNodeSchema,
  },
  /** Create one instance. Idempotent by instanceId. Refused when disabled or full. */
  ncRunInstance: {
    request: instanceLaunchSchema.extend({
      /**
       * Host HA restarting a fenced host's instance here: a tombstone of this id on this node (it
       * lived here before and moved or ended) does not answer the request; the instance starts anew.
       */
      restart: z.boolean().optional(),
      /**
       * A drain's cold move of a stopped instance (issue 18): the record is written stopped by its
       * user and the domain only defined (HypervisorDriver.define), not started; it holds nothing here.
       */
      stopped: z.boolean().optional(),
      /**
       * Its volumes (issue 18): host HA's restart elsewhere and a stopped instance re-homed bring
       * them along. They are part of the domain's definition before the guest boots (the record
       * holds them `attaching` until the hypervisor has the domain, then `attached`).
       */
      volumes: z.array(volumeAttachmentSpecSchema).max(64).optional(),
      /** A stopped instance re-homed here (cc/rehome.ts): persisted with the record and reported (movedSchema). */
      moved: movedSchema.optional(),
    }),
    response: z.object({ instance: ncInstanceSchema }),
  },
  /**
   * Start again an instance this NC holds whose domain is shut off or crashed, from its own disk (host
   * HA powering on a fenced host's own instances once it is back in service). Idempotent: a running
   * instance is answered as is. Refused on a disabled node; nothing new is admitted.
   */
  ncStartInstance: {
    /**
     * `userStart` (StartInstances, issue 18): also starts an instance its user stopped, its
     * `userStopped` cleared (persisted) before the domain starts. Without it (host HA powering on its
     * own), a user-stopped instance is refused with InstanceNotStartable.
     */
    request: z.object({ instanceId: instanceIdSchema, userStart: z.boolean().optional() }),
    response: z.object({ instance: ncInstanceSchema }),
  },
  /**
   * Pause (`paused: true`, the hypervisor suspends the domain) or resume (`false`) one running
   * instance (issue 18); the record's `paused` is persisted before the reply. Idempotent: an
   * instance already so is answered as is. Refused for an unknown instance (InstanceNotFound), one
   * that is not running (InstanceNotPausable) or migrating (InstanceMigrating).
   */
  ncPauseInstance: {
    request: z.object({ instanceId: instanceIdSchema, paused: z.boolean() }),
    response: z.object({ instance: ncInstanceSchema, previouslyPaused: z.boolean() }),
  },
  /**
   * Stop one running instance (issue 18, StopInstances): `userStopped` persisted before the
   * hypervisor shuts the domain down (ACPI, then a power-off when `force` or its deadline passes;
   * the definition and disk kept); answered once it is off. Idempotent: a stopped one is answered as
   * is. Refused: InstanceNotFound, InstanceStateConflict (pending, ending, paused, domain not running),
   * InstanceMigrating.
   */
  ncStopInstance: {
    request: z.object({ instanceId: instanceIdSchema, force: z.boolean() }),
    response: z.object({ instance: ncInstanceSchema, previousState: instanceStateSchema }),
  },
  /**
   * Reboot one running instance in place (issue 18, RebootInstances; the hypervisor's reboot):
   * nothing is persisted. Refused as ncStopInstance, and for a stopped one (InstanceStateConflict).
   */
  ncRebootInstance: {
    request: z.object({ instanceId: instanceIdSchema }),
    response: z.object({ instance: ncInstanceSchema }),
  },
  /**
   * Destroy one instance. Idempotent: terminating a terminated instance answers again. `reason` is
   * kept on the tombstone (`endedBy`); a user's terminate of a tombstone a move left marks it `user`.
   */
  ncTerminateInstance: {
    request: z.object({ instanceId: instanceIdSchema, reason: terminateReasonSchema.optional() }),
    response: z.object({ instanceId: instanceIdSchema, previousState: instanceStateSchema, currentState: instanceStateSchema }),
  },
  /**
   * Connects a volume to a running instance as `device`; answers once the hypervisor attached it and
   * the attachment is persisted in the instance's record. Idempotent by (instanceId, volumeId, device).
   */
  ncAttachVolume: {
    request: volumeAttachmentSpecSchema.extend({ instanceId: instanceIdSchema }),
    response: z.object({ instanceId: instanceIdSchema, attachment: ncVolumeAttachmentSchema }),
  },
  /**
   * Disconnects a volume; answers once the hypervisor let it go and the record no longer holds it.
   * force: also from an instance that is not running (EC2's Force). Idempotent: a volume the record
   * does not hold answers VolumeNotAttached.
   */
  ncDetachVolume: {
    request: z.object({ instanceId: instanceIdSchema, volumeId: volumeIdSchema, force: z.boolean().optional() }),
    response: z.object({ instanceId: instanceIdSchema, attachment: ncVolumeAttachmentSchema }),
  },
  /** Maintenance mode: persisted on the NC before it replies. */
  ncModifyNode: {
    request: z.object({ stateName: nodeStateSchema }),
    response: z.object({ previousState: nodeStateSchema, node: ncNodeSchema }),
  },
  /**
   * Quarantine (issue 18): `quarantined=true` isolates the node (and disables it) in one write,
   * `false` lifts the quarantine and leaves the node disabled. Persisted before the reply. Refused
   * with NodeQuarantined when already quarantined, NodeNotQuarantined when lifting a node that is not,
   * MigrationInProgress while the node is the source or the destination of an unfinished migration.
   */
  ncQuarantineNode: {
    request: z.object({ quarantined: z.boolean(), reason: z.string().max(QUARANTINE_REASON_MAX).default('') }),
    response: z.object({ previousState: nodeStateSchema, previousQuarantine: quarantineSchema.optional(), node: ncNodeSchema }),
  },
  /** Live migration, every step of the handshake on either side (migrationProtocol.ts). */
  ncMigrateInstances: {
    request: ncMigrateRequestSchema,
    response: ncMigrateResponseSchema,
  },
  /**
   * Host HA: this NC, as a neighbour, looks on shared storage for writes by `host` (its heartbeat and
   * its VMs' disks) since `since` (epoch ms). Read-only; `unknown` when it cannot tell.
   */
  ncCheckActivity: {
    request: z.object({ host: hostSchema, since: z.number() }),
    response: z.object({
      host: hostSchema,
      outcome: z.enum(['active', 'inactive', 'unknown']),
      detail: z.string(),
      newestWriteAt: z.number().nullable(),
    }),
  },
} as const;

export type NcOp = keyof typeof NC_OPS;
export type NcRequest<O extends NcOp> = z.infer<(typeof NC_OPS)[O]['request']>;
export type NcResponse<O extends NcOp> = z.infer<(typeof NC_OPS)[O]['response']>;

/** Codes the NC's registry uses that callers act on. */
export const NC_ERROR_CODES = [
  'NodeDisabled', 'InsufficientCapacity', 'InstanceNotFound', 'InstanceExists', 'HypervisorUnavailable', 'HypervisorRefused',
  'StateWriteFailed', 'InstanceNotRunning', 'InstanceMigrating', 'MigrationInProgress', 'MigrationNotPrepared', 'MigrationPlanInvalid',
  'VolumeConflict', 'VolumeNotAttached',
  'NodeQuarantined', 'NodeNotQuarantined',
  'InstanceNotStartable', 'InstanceNotPausable',
  'StaleLeaderEpoch',
] as const;

export { hostSchema };
