/**
 * A first start told apart from a lost store (issue 16). A missing nc.json used to be taken for a
 * first start: the NC forgot its instance records and came back enabled, so a node in maintenance
 * returned to service by itself. Now two pieces of evidence outlive nc.json:
 * - the node's identity file, `<state-dir>/nc-identity.json`, written once, right after the NC's
 *   first start created nc.json (and at the next start of an NC from before this rule);
 * - the hypervisor's domains: a host that never ran this NC holds none of Ferry's.
 * nc.json missing with the identity file present is a lost store at once; missing together with it
 * (the whole state directory gone), the first look at the hypervisor decides (see firstLookVerdict).
 * A lost store comes up disabled, re-adopts the domains (reconcile.ts) and says so (`lostStore`, in
 * the store and in every describe) until an administrator enables the node.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { hostSchema } from '../shared/protocol/common.js';
import type { LostStore } from '../shared/protocol/ncProtocol.js';
import { openFileStore, storeFileExists, type FileStoreHooks, type StoreOptions } from '../shared/store/store.js';
import type { DomainInfo } from './hypervisor/driver.js';
import { NC_STORE_OPTIONS, ncStorePath, type NcSnapshot, type NcStore } from './ncStore.js';

export const IDENTITY_FILE = 'nc-identity.json';

const identitySchema = z.object({
  /** The host the NC started as (its --host). */
  host: hostSchema,
  /** When it first started with this state directory (epoch ms). */
  firstStartAt: z.number(),
});
export type NcIdentity = z.infer<typeof identitySchema>;

function identityOptions(identity: NcIdentity): StoreOptions<NcIdentity> {
  return { kind: 'ferry-nc-identity', schemaVersion: 1, initial: () => identity, validate: (d) => identitySchema.parse(d) };
}

export function identityPath(stateDir: string): string {
  return join(stateDir, IDENTITY_FILE);
}

/** How this start found the store. */
export type StoreOrigin =
  /** nc.json was there: the node resumes from it. */
  | { readonly kind: 'found' }
  /** Neither nc.json nor the identity file: a first start, unless the hypervisor holds domains. */
  | { readonly kind: 'created' }
  /** nc.json is gone but the identity file says the node ran before: recreated disabled. */
  | { readonly kind: 'lost'; readonly lostStore: LostStore };

/** Pure: what a start makes of what it found on disk. */
export function storeOrigin(storeFound: boolean, identity: NcIdentity | undefined, now: number): StoreOrigin {
  if (storeFound) return { kind: 'found' };
  if (identity === undefined) return { kind: 'created' };
  return {
    kind: 'lost',
    lostStore: {
      detectedAt: now,
      evidence: `nc.json is missing but ${IDENTITY_FILE} says this node first started at ${new Date(identity.firstStartAt).toISOString()}`,
      adopted: [],
    },
  };
}

/** Pure: the snapshot a missing nc.json is recreated with. */
export function initialSnapshot(origin: StoreOrigin): NcSnapshot {
  const empty = NC_STORE_OPTIONS.initial();
  switch (origin.kind) {
    case 'found': return empty; // not used: the file is there
    case 'created': return { ...empty, firstStartUnchecked: true };
    case 'lost': return { ...empty, nodeState: 'disabled', lostStore: origin.lostStore };
  }
}

/**
 * Pure: the first look at the hypervisor after a store was created without an identity file. Any
 * domain (a first start finds none of Ferry's) means the store was lost with the whole state
 * directory: the verdict is the LostStore to record; undefined confirms a first start.
 */
export function firstLookVerdict(domains: readonly DomainInfo[], now: number): LostStore | undefined {
  if (domains.length === 0) return undefined;
  const ids = domains.map((d) => d.id).sort();
  return {
    detectedAt: now,
    evidence: `nc.json and ${IDENTITY_FILE} are missing but the hypervisor holds ${ids.length} domain(s) (${ids.join(', ')}): not a first start`,
    adopted: [],
  };
}

export interface NcStoreAtStart {
  readonly store: NcStore;
  readonly origin: StoreOrigin;
  /** The identity file as it was before this start (undefined: written now). */
  readonly identity: NcIdentity | undefined;
}

/**
 * Opens nc.json the way a starting NC must: a missing file is recreated according to storeOrigin,
 * and the identity file is written once nc.json exists (never before it: a start that dies in
 * between must not turn the next one into a lost store).
 */
export async function openNcStoreAtStart(o: {
  readonly stateDir: string; readonly host: string; readonly now: number; readonly hooks?: FileStoreHooks;
}): Promise<NcStoreAtStart> {
  const file = ncStorePath(o.stateDir);
  const idFile = identityPath(o.stateDir);
  const fresh: NcIdentity = { host: o.host, firstStartAt: o.now };
  const identity = await storeFileExists(idFile) ? (await openFileStore(idFile, identityOptions(fresh))).read() : undefined;
  const origin = storeOrigin(await storeFileExists(file), identity, o.now);
  const store = await openFileStore(file, { ...NC_STORE_OPTIONS, initial: () => initialSnapshot(origin) }, o.hooks);
  if (identity === undefined) await openFileStore(idFile, identityOptions(fresh));
  return { store, origin, identity };
}
