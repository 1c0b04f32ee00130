/**
 * What the NC persists in `<state-dir>/nc.json` (kind 'ferry-nc', schema 1): its node state, of which
 * it is the source of truth, one record per instance it has accepted, the migration plans it is the
 * source of and the incoming migrations it holds as a destination. VMs themselves live in the
 * hypervisor; a record is the NC's memory of what it promised, and survives the NC.
 * Live migration, the lost-store rule (storeOrigin.ts) and quarantine only added optional fields or fields with
 * defaults, so files written before them still load (schema 1).
 */
import { z } from 'zod';
import { join } from 'node:path';
import {
  instanceIdSchema, instanceStateSchema, migrationStateSchema, nodeStateSchema,
} from '../shared/protocol/common.js';
import { incomingSchema, migrationIdSchema, planItemSchema, planSchema } from '../shared/protocol/migrationProtocol.js';
import { ncVolumeAttachmentSchema } from '../shared/protocol/volumes.js';
import { instanceLaunchSchema, lostStoreSchema, movedSchema, quarantineSchema, terminateReasonSchema } from '../shared/protocol/ncProtocol.js';
import { openFileStore, openMemoryStore, type Store, type StoreOptions } from '../shared/store/store.js';

/** How far the NC has carried an instance; the reported state is derived from this and the hypervisor. */
export const instancePhaseSchema = z.enum([
  /** Accepted and persisted, domain not yet confirmed created; never acknowledged in this phase. */
  'pending',
  /** Domain created and acknowledged to the caller. */
  'running',
  /** Terminate accepted; the domain may still exist. */
  'shutting-down',
  /** Domain destroyed; kept as a tombstone so repeated terminates answer the same. */
  'terminated',
]);
export type InstancePhase = z.infer<typeof instancePhaseSchema>;

export const instanceRecordSchema = instanceLaunchSchema.extend({
  phase: instancePhaseSchema,
  /** Epoch ms (injected clock) when the record entered its phase; tombstones expire from it. */
  since: z.number(),
  /** Set once terminate is accepted: the state reported then, replayed to every repeat. */
  terminatedFrom: instanceStateSchema.optional(),
  /** Source side: none, ready (in a prepared plan), migrating, cleaning; persisted so a migration resumes after a crash. */
  migrationState: migrationStateSchema,
  /** Source side: the plan this instance is in while its migrationState is not none. */
  migrationId: migrationIdSchema.optional(),
  /** Destination side: the migration that brought it here, so a late repeat of its prepare is answered, not refused. */
  arrivedBy: migrationIdSchema.optional(),
  /** Recreated from its domain after the store was lost (reconcile.ts): reservation, owner and VM type name are placeholders. */
  adopted: z.literal(true).optional(),
  /**
   * Its volumes (issue 18): `attaching` / `detaching` persisted before the hypervisor is asked,
   * `attached` before the reply; a detached one leaves the list. Absent when none, and in older files.
   */
  volumes: z.array(ncVolumeAttachmentSchema).optional(),
  /** Its last reboot and how it happened (rebootFallback.ts); absent before any, and in older files. */
  lastReboot: z.object({ at: z.number(), how: z.enum(['guest', 'reset']) }).optional(),
  /**
   * Paused by an administrator (issue 18, ncPauseInstance): persisted before the hypervisor is asked
   * to suspend the domain, kept across NC restarts and carried by a migration (the domain arrives
   * suspended). Absent: not paused, and in older files.
   */
  paused: z.literal(true).optional(),
  /**
   * Stopped by its user (issue 18, ncStopInstance): persisted before the hypervisor shuts the domain
   * down, cleared (persisted) before a StartInstances starts it again; kept across NC restarts. Holds
   * no capacity (usage.ts). Absent: not stopped by its user, and in older files.
   */
  userStopped: z.literal(true).optional(),
  /** Re-homed here from another node (issue 18, cc/rehome.ts): that node and the move's generation. Absent otherwise, and in older files. */
  moved: movedSchema.optional(),
  /** A tombstone's cause as its terminate said (`user` wins over `move`: cc/moveRepair.ts). Absent otherwise, and in older files. */
  endedBy: terminateReasonSchema.optional(),
});
export type InstanceRecord = z.infer<typeof instanceRecordSchema>;

/** A plan item as the source stores it: the contract's item plus what a restarted NC needs. */
export const storedItemSchema = planItemSchema.extend({
  /** The destination hypervisor's endpoint given at commit; a restarted NC re-joins the migration with it. */
  destinationUri: z.string().optional(),
  /** An abort was asked (rollback while migrating, or a source-side timeout): how the item ends if the VM stays here. */
  abort: z.object({ reason: z.string(), cancel: z.boolean() }).optional(),
});
export type StoredItem = z.infer<typeof storedItemSchema>;

export const storedPlanSchema = planSchema.extend({
  items: z.array(storedItemSchema).min(1),
  /** When this NC accepted the plan (injected clock). */
  receivedAt: z.number(),
  /** When its last item became final; finished plans expire from here. */
  finishedAt: z.number().optional(),
});
export type StoredPlan = z.infer<typeof storedPlanSchema>;

export const storedIncomingSchema = incomingSchema.extend({
  /** A rollback is under way: abortIncoming, then the record goes (unless the VM already runs here). */
  rollingBack: z.boolean().optional(),
});
export type StoredIncoming = z.infer<typeof storedIncomingSchema>;

export const ncSnapshotSchema = z.object({
  nodeState: nodeStateSchema,
  instances: z.record(instanceIdSchema, instanceRecordSchema),
  /** Plans this node is the source of, by migration id (finished ones kept for a while). */
  plans: z.record(migrationIdSchema, storedPlanSchema).default({}),
  /** Incoming migrations this node is the destination of, by instance id (one at a time per instance). */
  incoming: z.record(instanceIdSchema, storedIncomingSchema).default({}),
  /**
   * Ids a terminate found absent, with when (injected clock): a run of one of them that arrives
   * later — a request overtaken by the terminate sent to settle it — is refused, for the tombstone TTL.
   */
  fenced: z.record(instanceIdSchema, z.number()).optional(),
  /** The store was lost and recreated (storeOrigin.ts): the node stays disabled until an enable clears this. */
  lostStore: lostStoreSchema.optional(),
  /** An administrator's quarantine (issue 18, quarantine.ts): the node stays disabled and takes nothing while it holds. */
  quarantine: quarantineSchema.optional(),
  /**
   * Created at a start that found neither nc.json nor the node's identity file: the NC's first look at
   * its hypervisor decides whether this was a first start (no domains) or a lost store, then clears it.
   */
  firstStartUnchecked: z.literal(true).optional(),
  /** The highest CC leader epoch seen (issue 21, leaderEpoch.ts): older commands are refused. Absent: none yet, and in older files. */
  leaderEpoch: z.string().regex(/^[0-9]{1,20}$/).optional(),
}).refine(
  (s) => Object.entries(s.instances).every(([id, r]) => r.instanceId === id),
  { message: 'an instance record is filed under another id' },
).refine(
  (s) => Object.entries(s.plans).every(([id, p]) => p.migrationId === id),
  { message: 'a migration plan is filed under another id' },
).refine(
  (s) => Object.entries(s.incoming).every(([id, r]) => r.instanceId === id),
  { message: 'an incoming record is filed under another id' },
);
export type NcSnapshot = z.infer<typeof ncSnapshotSchema>;

export type NcStore = Store<NcSnapshot>;

export const NC_STORE_OPTIONS: StoreOptions<NcSnapshot> = Object.freeze({
  kind: 'ferry-nc',
  schemaVersion: 1,
  initial: (): NcSnapshot => ({ nodeState: 'enabled', instances: {}, plans: {}, incoming: {} }),
  validate: (data: unknown): NcSnapshot => ncSnapshotSchema.parse(data),
});

export function ncStorePath(stateDir: string): string {
  return join(stateDir, 'nc.json');
}

export function openNcStore(stateDir: string): Promise<NcStore> {
  return openFileStore(ncStorePath(stateDir), NC_STORE_OPTIONS);
}

export function openMemoryNcStore(): Promise<NcStore> {
  return openMemoryStore(NC_STORE_OPTIONS);
}
