/**
 * The simulated host's durable state: domain definitions (like libvirt's persistent domain XML).
 * Plain versioned JSON in `<stateDir>/simhv.json`. Incoming domains are not stored: like a QEMU
 * started with -incoming, they do not survive the host.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { openFileStore, openMemoryStore, type Store, type StoreOptions } from '../../../shared/store/store.js';
import { DomainSpecSchema, VolumeAttachmentSchema } from './protocol.js';

const PersistedDomainSchema = z.object({
  spec: DomainSpecSchema,
  /** The state when last written; at start-up every stored domain comes back shutoff. */
  state: z.enum(['running', 'paused', 'suspended', 'shutoff', 'crashed']),
  startedAt: z.number(),
  /** Its volumes (issue 18); absent in stores written before them. */
  volumes: z.array(VolumeAttachmentSchema).optional(),
});

const SnapshotSchema = z.object({ domains: z.record(z.string(), PersistedDomainSchema) });

export type PersistedDomain = z.infer<typeof PersistedDomainSchema>;
export type SimHvSnapshot = z.infer<typeof SnapshotSchema>;

export const SIMHV_STORE_FILE = 'simhv.json';

export const simHvStoreOptions: StoreOptions<SimHvSnapshot> = Object.freeze({
  kind: 'ferry-simhv',
  schemaVersion: 1,
  initial: () => ({ domains: {} }),
  validate: (data: unknown) => SnapshotSchema.parse(data),
});

export function openSimHvFileStore(stateDir: string): Promise<Store<SimHvSnapshot>> {
  return openFileStore(join(stateDir, SIMHV_STORE_FILE), simHvStoreOptions);
}

export function openSimHvMemoryStore(): Promise<Store<SimHvSnapshot>> {
  return openMemoryStore(simHvStoreOptions);
}
