/** CLC → CC operations (served at CC_PATH on port 8774). */
import { z } from 'zod';
import { lostStoreSchema, movedSchema, ncInstanceSchema, QUARANTINE_REASON_MAX, quarantineSchema } from './ncProtocol.js';
import {
  ccNodeEventRequestSchema, ccNodeEventResponseSchema, migrationIdSchema, planSchema,
} from './migrationProtocol.js';
import {
  hostSchema, instanceIdSchema, instanceStateSchema, nodeStateSchema, partitionSchema,
  reservationIdSchema, resourcesSchema, vmTypeSchema,
} from './common.js';
import { ncVolumeAttachmentSchema, volumeAttachmentSpecSchema, volumeIdSchema } from './volumes.js';
import { clcEpochField } from './clcEpoch.js';

/** How the CC sees a node: the NC's own report plus reachability. */
export const ccNodeSchema = z.object({
  host: hostSchema,
  partition: partitionSchema,
  /** 'unknown' until the CC has heard from the NC since it started. */
  nodeState: z.union([nodeStateSchema, z.literal('unknown')]),
  reachable: z.boolean(),
  healthy: z.boolean(),
  /** Epoch ms of the last successful contact, 0 if none. */
  lastSeen: z.number(),
  /**
   * True: the CC has no current word from this NC for this answer (unreachable, or its refresh not
   * answered within the CC's bound), so state, resources and instances are its last report, as of
   * lastSeen. Describes never wait for such a node. Absent from CCs before it (there, !reachable).
   */
  stale: z.boolean().optional(),
  capacity: resourcesSchema,
  used: resourcesSchema,
  instances: z.array(ncInstanceSchema),
  /** Where the CC calls the NC (scheme, host, port and path): DescribeServices' uri. Absent from a CC that does not say. */
  uri: z.string().optional(),
  /** The NC's word that it lost its store and stays disabled until enabled (ncProtocol.ts); absent otherwise. */
  lostStore: lostStoreSchema.optional(),
  /** The NC's quarantine (ncProtocol.ts), as last reported; absent when not quarantined. */
  quarantine: quarantineSchema.optional(),
});
export type CcNode = z.infer<typeof ccNodeSchema>;

/**
 * What host HA reads of a node (issue 19, ccDescribeNodeHealth): its state, whether it answers and is
 * healthy, whether that is the CC's current word, and whether it is quarantined. Nothing that grows
 * with its instances, so an answer of 10,000 nodes stays small.
 */
export const ccNodeHealthSchema = z.object({
  host: hostSchema,
  nodeState: ccNodeSchema.shape.nodeState,
  reachable: z.boolean(),
  healthy: z.boolean(),
  /** As ccNodeSchema's `stale`: the CC has no current word from this NC for this answer. */
  stale: z.boolean(),
  /** The NC reports a quarantine (issue 18): the administrator's, whatever else it says. */
  quarantined: z.boolean(),
});
export type CcNodeHealth = z.infer<typeof ccNodeHealthSchema>;

const hostOrNone = z.union([hostSchema, z.literal('')]);

export const ccInstanceSchema = ncInstanceSchema.extend({
  host: hostSchema,
  partition: partitionSchema,
  /**
   * While the instance is in an unfinished migration plan: where it moves from and to; '' otherwise.
   * The CC always sends both; optional only so answers without live migration still parse.
   */
  migrationSource: hostOrNone.optional(),
  migrationDestination: hostOrNone.optional(),
});
export type CcInstance = z.infer<typeof ccInstanceSchema>;

export const matrixRowSchema = z.object({
  vmType: z.string(), max: z.number().int(), available: z.number().int(),
  cores: z.number().int(), memoryMiB: z.number().int(), diskGiB: z.number().int(),
});

const vmTypes = z.array(vmTypeSchema).min(1);

/** Why an instance of a migration request found no destination (cc/migration/placement.ts). */
export const UNPLACED_REASONS = ['no-eligible-destination', 'too-large', 'insufficient-capacity'] as const;
export const unplacedSchema = z.object({ instanceId: instanceIdSchema, reason: z.enum(UNPLACED_REASONS) });

/** A plan as its source NC reports it, items in preparing/ready shown from their destination. */
export const describedMigrationSchema = planSchema.extend({
  /** Every item is final (completed, rolled-back, cancelled or failed). */
  finished: z.boolean(),
  /** False: the source NC did not answer the last poll and this is its last report. */
  sourceReachable: z.boolean(),
});
export type DescribedMigration = z.infer<typeof describedMigrationSchema>;



/** The live-migration operations: part of CC_OPS, grouped here because they share schemas. */
export const CC_MIGRATION_OPS = {
  /**
   * Live migration (issue 3): drain sourceHost, or move instanceId. The CC plans, has the source NC
   * persist the plan, counts the plan's reservations and answers; the migrations run afterwards.
   * destinations with allowHosts=true: the only allowed destinations (disabled ones included);
   * allowHosts=false: forbidden ones. partial=false: all or nothing; true: migrate what fits, the
   * rest go into the plan as failed. matrix: the resource matrix after the reservation.
   */
  ccMigrateInstances: {
    request: z.object({
      ...clcEpochField,
      sourceHost: hostSchema.optional(),
      instanceId: instanceIdSchema.optional(),
      destinations: z.array(hostSchema).default([]),
      allowHosts: z.boolean().default(true),
      reserveDestinations: z.boolean().default(false),
      partial: z.boolean().default(false),
      vmTypes,
    }),
    response: z.object({
      migrationId: migrationIdSchema, plan: planSchema, unplaced: z.array(unplacedSchema), matrix: z.array(matrixRowSchema),
      /**
       * A drain (sourceHost) re-homes the instances its user stopped there by a cold move (issue 18,
       * cc/rehome.ts: defined on another node, not started), outside the live plan; `notRehomed` stay
       * with the reason. Absent from instance moves and when the node holds none.
       */
      rehomed: z.array(z.object({ instanceId: instanceIdSchema, destination: hostSchema })).optional(),
      notRehomed: z.array(z.object({ instanceId: instanceIdSchema, reason: z.string() })).optional(),
    }),
  },
  /** Every plan the source NCs hold (finished ones they still keep included), or the one named. */
  ccDescribeMigrations: {
    request: z.object({ migrationId: migrationIdSchema.optional() }),
    response: z.object({ partition: partitionSchema, migrations: z.array(describedMigrationSchema) }),
  },
  /** Rolls back every item that has not committed; answers the plan once its source NC recorded the cancel. */
  ccCancelMigration: {
    request: z.object({ ...clcEpochField, migrationId: migrationIdSchema }),
    response: z.object({ plan: describedMigrationSchema }),
  },
  /** NC → CC: something about that node's migrations or instances changed; the CC looks at once. */
  ccNodeEvent: {
    request: ccNodeEventRequestSchema,
    response: ccNodeEventResponseSchema,
  },
} as const;

/** Every operation the CC serves: the instance and node operations, then live migration. */
export const CC_OPS = {
  /**
   * Every registered node with its state, resources and instances (fresh from the CC's view).
   * `cached`: as the view holds them now, asking no NC; a node whose data is older than the CC's
   * freshness bound is marked stale. Otherwise every node whose data is older than `maxAgeMs`
   * (default 1 s) is asked again first: a health pass of 10,000 hosts passes its check interval and
   * does not re-poll every NC (issue 19). Host HA reads ccDescribeNodeHealth instead (this one from
   * an older CC); the admin describes and host HA's changes of one host (`freshHosts`) read this.
   */
  ccDescribeNodes: {
    request: z.object({
      cached: z.boolean().optional(),
      maxAgeMs: z.number().int().min(0).max(3_600_000).optional(),
      /**
       * Ask only these nodes again (as `maxAgeMs` says); every other node as the view holds it (`cached`).
       * A change about one host (host HA's drain of it) needs that host current, not the whole cluster:
       * asking every node for each of them made 1,000 owed drains poll 2,000 NCs each (issue 19).
       */
      freshHosts: z.array(hostSchema).max(64).optional(),
    }),
    response: z.object({
      partition: partitionSchema, nodes: z.array(ccNodeSchema),
      /**
       * Issue 21: false when a CC replica that does not lead answered (the leader was unreachable): what it
       * holds of a node it cannot reach is its own last look, which may be older than the leader's.
       * Absent from a CC without replicas (it leads).
       */
      leading: z.boolean().optional(),
    }),
  },
  /**
   * Host HA's read of the nodes (issue 19): ccDescribeNodes' `cached` and `maxAgeMs` with the same
   * meaning, answered with only what host HA uses of each node (ccNodeHealthSchema). `knownVersion`:
   * the `version` of the last full answer of the same kind (cached or not) the caller holds; while
   * no node's health changed the CC answers `unchanged`, without the list. An older CC refuses the
   * operation (UnknownOperation) and the CLC asks ccDescribeNodes instead.
   */
  ccDescribeNodeHealth: {
    request: z.object({
      cached: z.boolean().optional(),
      maxAgeMs: z.number().int().min(0).max(3_600_000).optional(),
      knownVersion: z.string().max(64).optional(),
    }),
    response: z.object({
      partition: partitionSchema,
      /** Names this answer's hosts: equal versions from one CC mean equal lists. */
      version: z.string().max(64),
      /** As ccDescribeNodes' `leading` (issue 21): false when a CC replica that does not lead answered. */
      leading: z.boolean().optional(),
      /** True when `knownVersion` is this answer's version: `hosts` is left out, the caller's copy stands. */
      unchanged: z.literal(true).optional(),
      /** Every registered node, in registration order; absent when `unchanged`. */
      hosts: z.array(ccNodeHealthSchema).optional(),
    }),
  },
  /** The resource matrix for the given VM types. */
  ccDescribeResources: {
    request: z.object({ vmTypes }),
    response: z.object({ partition: partitionSchema, matrix: z.array(matrixRowSchema) }),
  },
  ccDescribeInstances: {
    request: z.object({
      /** The `version` of the last full answer the caller holds: an answer of the same version comes back `unchanged`. */
      knownVersion: z.string().max(64).optional(),
    }),
    response: z.object({
      partition: partitionSchema,
      /** Empty when `unchanged`: the caller's copy of that version stands. */
      instances: z.array(ccInstanceSchema),
      /** Names this listing (with `complete`): equal versions from one CC mean equal answers. Absent from older CCs. */
      version: z.string().max(64).optional(),
      /** True when `knownVersion` is this listing's version: nothing in it changed. */
      unchanged: z.literal(true).optional(),
      /**
       * False while some node was unreachable at the CC's last look: an instance missing from the list
       * may still run there (e.g. one that migrated into a node whose NC was restarting).
       */
      complete: z.boolean().optional(),
    }),
  },
  /**
   * Place and start up to instanceIds.length instances, at least minCount, on enabled nodes with
   * capacity. All-or-nothing below minCount: InsufficientInstanceCapacity and nothing started.
   */
  ccRunInstances: {
    request: z.object({
      ...clcEpochField,
      reservationId: reservationIdSchema,
      imageId: z.string().min(1),
      ownerId: z.string().min(1),
      vmType: vmTypeSchema,
      instanceIds: z.array(instanceIdSchema).min(1),
      minCount: z.number().int().min(1),
      launchTime: z.number(),
      /**
       * Host HA's restart of a fenced host's instances (issue 6): copies of these ids that the view
       * still shows on these hosts are not this launch's (they are dead behind a fence), so the ids
       * are placed again, never on these hosts. Empty for an ordinary launch.
       */
      restartFrom: z.array(hostSchema).optional(),
      /**
       * Hosts never placed on, whatever the CC's view says of them: host HA's FENCING/FENCED hosts
       * (a fenced host's NC can come back enabled before HA has put it into maintenance again).
       */
      avoidHosts: z.array(hostSchema).optional(),
      /**
       * A drain's cold move of a user-stopped instance (issue 18, cc/rehome.ts): the NC records it
       * stopped by its user and only defines its domain, without starting it.
       */
      stopped: z.boolean().optional(),
      /**
       * The volumes of these instances by instance id (issue 18: host HA's restart elsewhere, a
       * stopped instance re-homed): each copy is defined with them, before its guest boots.
       */
      volumes: z.record(instanceIdSchema, z.array(volumeAttachmentSpecSchema).max(64)).optional(),
      /** A stopped instance re-homed (cc/rehome.ts, one id): its new copy records where it came from and the move's generation. */
      moved: movedSchema.optional(),
    }),
    response: z.object({ instances: z.array(ccInstanceSchema) }),
  },
  ccTerminateInstances: {
    request: z.object({
      ...clcEpochField,
      instanceIds: z.array(instanceIdSchema).min(1),
      /** Only the copies on this host (host HA destroying a fenced host's obsolete copies); absent: wherever the view places them. */
      onHost: hostSchema.optional(),
    }),
    response: z.object({
      instances: z.array(z.object({ instanceId: instanceIdSchema, previousState: instanceStateSchema, currentState: instanceStateSchema })),
    }),
  },
  /**
   * Volumes (issue 18): connect a volume to the instance on whichever node runs it; answers after that
   * NC attached it and persisted the attachment. Refused for an instance on a fenced host.
   */
  ccAttachVolume: {
    request: volumeAttachmentSpecSchema.extend({ ...clcEpochField, instanceId: instanceIdSchema }),
    response: z.object({ instanceId: instanceIdSchema, host: hostSchema, attachment: ncVolumeAttachmentSchema }),
  },
  /**
   * Pause (issue 18): `paused: true` freezes the instance (its hypervisor suspends the domain),
   * `false` resumes it, on whichever node runs it; answers after that NC persisted it. Idempotent.
   * Refused for an instance on a fenced host (NodeFenced), unknown (InstanceNotFound), not running
   * (InstanceNotPausable) or migrating (MigrationInProgress).
   */
  ccPauseInstance: {
    request: z.object({ ...clcEpochField, instanceId: instanceIdSchema, paused: z.boolean() }),
    response: z.object({ instanceId: instanceIdSchema, host: hostSchema, state: instanceStateSchema, paused: z.boolean(), previouslyPaused: z.boolean() }),
  },
  /**
   * Stop and reboot (issue 18 part 5), on whichever node runs the instance (routed as pause is);
   * answered once that NC persisted the stop and its domain is off (stop), or rebooted (reboot).
   * Refused for an instance on a fenced host (NodeFenced), unknown (InstanceNotFound), in the
   * wrong state (InstanceStateConflict) or migrating (MigrationInProgress).
   */
  ccStopInstance: {
    request: z.object({ ...clcEpochField, instanceId: instanceIdSchema, force: z.boolean() }),
    response: z.object({ instanceId: instanceIdSchema, host: hostSchema, previousState: instanceStateSchema, currentState: instanceStateSchema }),
  },
  ccRebootInstance: {
    request: z.object({ ...clcEpochField, instanceId: instanceIdSchema }),
    response: z.object({ instanceId: instanceIdSchema, host: hostSchema, state: instanceStateSchema }),
  },
  /**
   * StartInstances (issue 18 part 5): starts an instance its user stopped, on its own node when that
   * node is schedulable; otherwise (disabled, quarantined, fenced, unreachable) re-homed on an enabled
   * node with room (cc/userStart.ts) and started there. `host` is where it runs now.
   */
  ccStartInstance: {
    request: z.object({ ...clcEpochField, instanceId: instanceIdSchema, avoidHosts: z.array(hostSchema).optional() }),
    response: z.object({ instanceId: instanceIdSchema, host: hostSchema, previousState: instanceStateSchema, currentState: instanceStateSchema, movedFrom: hostSchema.optional() }),
  },
  /** Disconnect it; force also from an instance that is not running. Answers after the NC let it go. */
  ccDetachVolume: {
    request: z.object({ ...clcEpochField, instanceId: instanceIdSchema, volumeId: volumeIdSchema, force: z.boolean().optional() }),
    response: z.object({ instanceId: instanceIdSchema, host: hostSchema, attachment: ncVolumeAttachmentSchema }),
  },
  /**
   * Host HA (issue 15): powers on, on `onHost`, instances that node holds whose domains are shut off
   * (a fenced host back in service: its own instances, from their own disks; ncStartInstance). Each
   * id is tried; `started` are running there now (already running included), `failed` names the
   * others with the CC's code. Refused whole (NodeFenced, NodeNotFound, NodeUnreachable) before any start.
   */
  ccStartInstances: {
    request: z.object({ ...clcEpochField, instanceIds: z.array(instanceIdSchema).min(1).max(10_000), onHost: hostSchema }),
    response: z.object({
      started: z.array(ccInstanceSchema),
      failed: z.array(z.object({ instanceId: instanceIdSchema, code: z.string(), message: z.string() })),
    }),
  },
  /** Maintenance mode for one node; answers after the NC has persisted the new state. */
  ccModifyNode: {
    request: z.object({ ...clcEpochField, host: hostSchema, stateName: nodeStateSchema, vmTypes }),
    response: z.object({ previousState: nodeStateSchema, node: ccNodeSchema, matrix: z.array(matrixRowSchema) }),
  },
  /**
   * Quarantine for one node (issue 18, ncQuarantineNode): answers after the NC has persisted it.
   * The node's answer carries `quarantine` while it holds.
   */
  ccQuarantineNode: {
    request: z.object({ ...clcEpochField, host: hostSchema, quarantined: z.boolean(), reason: z.string().max(QUARANTINE_REASON_MAX).default(''), vmTypes }),
    response: z.object({ previousState: nodeStateSchema, previousQuarantine: quarantineSchema.optional(), node: ccNodeSchema, matrix: z.array(matrixRowSchema) }),
  },
  /**
   * Host HA (issue 6): the hosts the CLC is fencing or has fenced, all of them each time (level-based,
   * sent every HA pass). The CC never makes one a migration destination or places on it, whatever its
   * NC says (a fenced host whose NC came back enabled; found by simulator seed 730). Held in memory.
   */
  ccSetFencedHosts: {
    request: z.object({ ...clcEpochField, hosts: z.array(hostSchema).max(100_000) }),
    response: z.object({ hosts: z.array(hostSchema) }),
  },
  /**
   * Host HA (issue 6): asks a healthy neighbour NC of the same cluster (never the suspect) to look at
   * the suspect's heartbeat and VM disk writes on shared storage since `since` (ncCheckActivity),
   * within timeoutMs. No neighbour, or none answering in time, is `unknown`, never `inactive`.
   */
  ccCheckHostActivity: {
    request: z.object({ host: hostSchema, since: z.number(), timeoutMs: z.number().int().positive().max(600_000) }),
    response: z.object({
      host: hostSchema,
      outcome: z.enum(['active', 'inactive', 'unknown']),
      detail: z.string(),
      /** The neighbour that looked, '' when none could. */
      checkedBy: hostOrNone,
      newestWriteAt: z.number().nullable(),
    }),
  },
  /**
   * Which of the partition's CC replicas answers and whether it leads (issue 21): the CLC asks every
   * replica for DescribeServices. Served by every replica (a read); the one CC of a file store leads.
   */
  ccDescribeReplica: {
    request: z.object({}),
    response: z.object({
      partition: partitionSchema,
      /** Its advertised URL (--advertise-url), or "this CC" for the one CC of a file store. */
      self: z.string().min(1).max(2048),
      leading: z.boolean(),
      /** The leader as this replica last observed it; absent while none is elected (or for the one CC). */
      leaderUrl: z.string().min(1).max(2048).optional(),
      /** This replica's epoch while it leads. */
      epoch: z.string().regex(/^[0-9]{1,20}$/).optional(),
    }),
  },
  ...CC_MIGRATION_OPS,
} as const;

export type CcOp = keyof typeof CC_OPS;

/**
 * The operations that change a node or an instance (issue 21): their requests carry the sending CLC
 * leader's epoch (`clcEpoch`, clcEpoch.ts) and a CC refuses one older than the highest it has seen.
 * The others are reads (ccCheckHostActivity only looks) or an NC's hint (ccNodeEvent), and carry none.
 */
export const CC_EPOCH_OPS: ReadonlySet<CcOp> = new Set<CcOp>([
  'ccRunInstances', 'ccTerminateInstances', 'ccStartInstances', 'ccStartInstance', 'ccStopInstance', 'ccRebootInstance', 'ccPauseInstance',
  'ccAttachVolume', 'ccDetachVolume', 'ccModifyNode', 'ccQuarantineNode', 'ccSetFencedHosts', 'ccMigrateInstances', 'ccCancelMigration',
]);
export type CcRequest<O extends CcOp> = z.infer<(typeof CC_OPS)[O]['request']>;
export type CcResponse<O extends CcOp> = z.infer<(typeof CC_OPS)[O]['response']>;

export { instanceIdSchema };
