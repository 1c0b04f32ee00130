/**
 * Per-host power-management settings (issue 6: "per-host BMC settings stored securely"): kept apart
 * from clc.json in `<state-dir>/bmc.json` (mode 600, like every store), so nothing that shows HA
 * state can show a password. APIs and logs get `publicBmcView`, which says only whether a password
 * is set. Validated when written and when loaded (fenceAgentProtocol.ts rules).
 */
import { join } from 'node:path';
import { z } from 'zod';
import { openFileStore, openMemoryStore, type Store, type StoreOptions } from '../../../shared/store/store.js';
import type { StoreSpec } from '../../../shared/store/storeBackend.js';
import { compileFenceAgentConfig, type FenceAgentConfig } from './fenceAgentProtocol.js';

export const bmcEntrySchema = z.strictObject({
  agent: z.string(),
  options: z.record(z.string(), z.string()),
  password: z.string(),
  timeoutMs: z.number().int(),
});
export type BmcEntry = z.infer<typeof bmcEntrySchema>;

const bmcStateSchema = z.strictObject({
  hosts: z.record(z.string(), bmcEntrySchema),
  /** Per partition: the external remediator's secret (remediation.ts), kept out of clc.json like the BMC passwords; absent in older stores. */
  remediationSecrets: z.record(z.string(), z.string().regex(/^[^\r\n\0]*$/)).default({}),
});
export type BmcState = z.infer<typeof bmcStateSchema>;

export const BMC_STORE_OPTIONS: StoreOptions<BmcState> = Object.freeze({
  kind: 'ferry-clc-bmc',
  schemaVersion: 1,
  initial: (): BmcState => ({ hosts: {}, remediationSecrets: {} }),
  validate: (data: unknown): BmcState => {
    const state = bmcStateSchema.parse(data);
    // Every entry must still compile: a hand-edited file with a newline in a value stops start-up.
    for (const [host, entry] of Object.entries(state.hosts)) fenceConfigFor(host, entry);
    return state;
  },
});

export const BMC_STORE_FILE = 'bmc.json';

/** bmc.json, or `<etcd-prefix>clc/bmc/` with one key per host (--bmc-store keeps it in a file of its own either way). */
export const BMC_STORE_SPEC: StoreSpec<BmcState> = Object.freeze<StoreSpec<BmcState>>({
  file: BMC_STORE_FILE, key: 'clc/bmc', options: BMC_STORE_OPTIONS,
  layout: { collections: { hosts: { kind: 'record' }, remediationSecrets: { kind: 'record' } } },
});

export function openBmcStore(stateDir: string): Promise<Store<BmcState>> {
  return openFileStore(join(stateDir, BMC_STORE_FILE), BMC_STORE_OPTIONS);
}

export function openMemoryBmcStore(): Promise<Store<BmcState>> {
  return openMemoryStore(BMC_STORE_OPTIONS);
}

/** The agent settings for `host` (the target named in the agent's messages). Throws InvalidFenceConfig. */
export function fenceConfigFor(host: string, entry: BmcEntry): FenceAgentConfig {
  return compileFenceAgentConfig({ ...entry, target: host });
}

/** Validates and stores a host's settings; the previous ones are replaced. */
export async function setBmc(store: Store<BmcState>, host: string, entry: BmcEntry): Promise<void> {
  fenceConfigFor(host, entry);
  await store.update((d) => { d.hosts[host] = { ...entry, options: { ...entry.options } }; });
}

export interface PublicBmcView {
  readonly agent: string;
  readonly options: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly passwordSet: boolean;
}

/** What an API or a log line may show. */
export function publicBmcView(entry: BmcEntry): PublicBmcView {
  return { agent: entry.agent, options: { ...entry.options }, timeoutMs: entry.timeoutMs, passwordSet: entry.password.length > 0 };
}
