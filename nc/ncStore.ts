/**
 * What the NC persists in `<state-dir>/nc.json` (kind 'ferry-nc', schema 1): its node state, of which
 * it is the source of truth, and one record per instance it has accepted. VMs themselves live in the
 * hypervisor; a record is the NC's memory of what it promised, and survives the NC.
 */
import { z } from 'zod';
import { join } from 'node:path';
import {
  instanceIdSchema, instanceStateSchema, migrationStateSchema, nodeStateSchema, reservationIdSchema, vmTypeSchema,
} from '../shared/protocol/common.js';
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

export const instanceRecordSchema = z.object({
  instanceId: instanceIdSchema,
  reservationId: reservationIdSchema,
  imageId: z.string().min(1),
  ownerId: z.string().min(1),
  vmType: vmTypeSchema,
  launchTime: z.number(),
  phase: instancePhaseSchema,
  /** Epoch ms (injected clock) when the record entered its phase; tombstones expire from it. */
  since: z.number(),
  /** Set once terminate is accepted: the state reported then, replayed to every repeat. */
  terminatedFrom: instanceStateSchema.optional(),
  /** Always 'none' until live migration lands; persisted so a migration can resume after a crash. */
  migrationState: migrationStateSchema,
});
export type InstanceRecord = z.infer<typeof instanceRecordSchema>;

export const ncSnapshotSchema = z.object({
  nodeState: nodeStateSchema,
  instances: z.record(instanceIdSchema, instanceRecordSchema),
}).refine(
  (s) => Object.entries(s.instances).every(([id, r]) => r.instanceId === id),
  { message: 'an instance record is filed under another id' },
);
export type NcSnapshot = z.infer<typeof ncSnapshotSchema>;

export type NcStore = Store<NcSnapshot>;

export const NC_STORE_OPTIONS: StoreOptions<NcSnapshot> = Object.freeze({
  kind: 'ferry-nc',
  schemaVersion: 1,
  initial: (): NcSnapshot => ({ nodeState: 'enabled', instances: {} }),
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
