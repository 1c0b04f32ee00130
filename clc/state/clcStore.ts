/**
 * What only the CLC knows, kept durably in `<state-dir>/clc.json` (kind 'ferry-clc', version 1): the
 * VM type table, one record per instance it launched (with its user tags), RunInstances' client tokens of the last day,
 * host HA's records, configuration and event log (clc/ha/haState.ts), the volumes and their
 * attachments (clc/core/volumeRecords.ts), and the key that signs page tokens. Live state is not kept here: the CCs report it and the NCs are its source
 * of truth.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { runTokenRecordSchema } from '../core/runTokens.js';
import { tagSchema } from '../core/userTags.js';
import { volumeRecordSchema } from '../core/volumeRecords.js';
import { emptyHaSection, haSectionSchema } from '../ha/haState.js';
import { DEFAULT_VM_TYPES } from '../../shared/model/vmTypes.js';
import { instanceIdSchema, partitionSchema, reservationIdSchema, vmTypeSchema } from '../../shared/protocol/common.js';
import { volumeIdSchema } from '../../shared/protocol/volumes.js';
import { openFileStore, openMemoryStore, type Store, type StoreOptions } from '../../shared/store/store.js';
import type { StoreSpec } from '../../shared/store/storeBackend.js';

/**
 * requested: written before asking the CC; shown only once a CC reports the instance, because the
 *   launch was never acknowledged to the admin until the CC answered.
 * launched: the CC started it and the admin was told; if its CC stops reporting it, it is shown as
 *   terminated rather than silently forgotten.
 */
export const recordPhaseSchema = z.enum(['requested', 'launched']);
export type RecordPhase = z.infer<typeof recordPhaseSchema>;

export const instanceRecordSchema = z.object({
  instanceId: instanceIdSchema,
  reservationId: reservationIdSchema,
  ownerId: z.string().min(1),
  imageId: z.string().min(1),
  vmType: z.string().min(1),
  partition: partitionSchema,
  /** Epoch ms. */
  launchTime: z.number(),
  /** Position within its reservation (EC2's amiLaunchIndex). */
  launchIndex: z.number().int().min(0),
  phase: recordPhaseSchema,
  /**
   * When a TerminateInstances of it was answered (epoch ms). Host HA must not restart it, and a copy
   * on a fenced host that comes back is obsolete. Absent in records written before it.
   */
  terminatedAt: z.number().optional(),
  /**
   * When a StopInstances of it was answered (epoch ms, issue 18); removed before a StartInstances of it
   * is sent. Host HA neither powers it on nor restarts it elsewhere (nothing was lost: its user stopped
   * it). Absent when not stopped by its user, and in records written before it.
   */
  stoppedAt: z.number().optional(),
  /** The ClientToken RunInstances was called with (EC2's clientToken and client-token filter). */
  clientToken: z.string().optional(),
  /**
   * Its user tags (CreateTags, RunInstances' TagSpecification), in key order; a list, not a map, so
   * any key (`__proto__` included) is plain data. Absent when none, and in records written before them.
   */
  userTags: z.array(tagSchema).optional(),
});
export type InstanceRecord = z.infer<typeof instanceRecordSchema>;

export const clcStateSchema = z.object({
  vmTypes: z.array(vmTypeSchema).min(1),
  instances: z.record(instanceIdSchema, instanceRecordSchema),
  /** Host HA (issue 6): absent in stores written before it, hence the default. */
  ha: haSectionSchema.default(emptyHaSection),
  /** RunInstances' ClientTokens by runTokenKey (clc/core/runTokens.ts); absent in stores written before them. */
  runTokens: z.record(z.string(), runTokenRecordSchema).default(() => ({})),
  /**
   * The HMAC key of NextTokens (clc/state/pagingKey.ts), 32 bytes in hex, kept so a restart does not
   * break a client's walk through pages. Absent in stores written before paging; made at start.
   */
  pagingKey: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  /** Volumes by id (issue 18, clc/core/volumeRecords.ts); absent in stores written before them. */
  volumes: z.record(volumeIdSchema, volumeRecordSchema).default(() => ({})),
});
export type ClcState = z.infer<typeof clcStateSchema>;

export const CLC_STORE_OPTIONS: StoreOptions<ClcState> = Object.freeze({
  kind: 'ferry-clc',
  schemaVersion: 1,
  initial: (): ClcState => ({ vmTypes: DEFAULT_VM_TYPES.map((t) => ({ ...t })), instances: {}, ha: emptyHaSection(), runTokens: {}, volumes: {} }),
  validate: (data: unknown): ClcState => clcStateSchema.parse(data),
});

export const CLC_STORE_FILE = 'clc.json';

/**
 * clc.json, or `<etcd-prefix>clc/state/` with one key per instance, run token, volume and host HA
 * record (shared/store/storeBackend.ts). Instance and host HA records stand alone (independent: a
 * change over etcd's limits, HA taking on 3,000 hosts or a launch of hundreds, may land in several
 * txns, each leaving a valid state; a host's record and an instance's are each read on their own
 * and reconciled level-based); run tokens and volumes are refused over the limits instead.
 */
export const CLC_STORE_SPEC: StoreSpec<ClcState> = Object.freeze<StoreSpec<ClcState>>({
  file: CLC_STORE_FILE, key: 'clc/state', options: CLC_STORE_OPTIONS,
  layout: { collections: {
    instances: { kind: 'record', independent: true },
    runTokens: { kind: 'record' },
    volumes: { kind: 'record' },
    ha: { kind: 'object', fields: { hosts: { kind: 'record', independent: true } } },
  } },
});

export function openClcStore(stateDir: string): Promise<Store<ClcState>> {
  return openFileStore(join(stateDir, CLC_STORE_FILE), CLC_STORE_OPTIONS);
}

export function openMemoryClcStore(): Promise<Store<ClcState>> {
  return openMemoryStore(CLC_STORE_OPTIONS);
}
