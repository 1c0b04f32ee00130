/**
 * The CLC replicas' store in the simulator (issue 21): one document on the SimDisk (etcd's, shared by
 * every replica) with the semantics of shared/store/etcdStore.ts that matter here. read() is the
 * document as etcd holds it now (a watch-fed cache with no lag); update() is one txn sent after a
 * short delay that commits only if the writer still holds its election key with the epoch it was
 * elected with (StoreNotLeader otherwise: a deposed or paused leader writes nothing) and the
 * document has not changed since its draft was read (StoreConflict). A txn in flight when its
 * replica dies either reached etcd or not (by the seed); if it did, the same compares decide it.
 */
import { StoreErrors } from '../shared/store/errors.js';
import type { Store } from '../shared/store/store.js';
import { never } from './incarnation.js';
import type { SimStoreOptions } from './simDisk.js';

/** What a guarded write needs of the replica's election (SimElection) and of etcd (SimEtcd). */
export interface SimWriteFence {
  /** The key and epoch this replica leads with now; undefined when it does not lead. */
  fence(): { readonly key: string; readonly epoch: number } | undefined;
  leaderUrl(): string | undefined;
  /** etcd's compare: the key still exists with this create revision. */
  holds(key: string, epoch: number): boolean;
}

/** As a SimStore's options (no onDurable: a txn is durable when etcd commits it), with the replica's fence. */
export interface SimEtcdStoreOptions<T> extends Omit<SimStoreOptions<T>, 'onDurable'> {
  readonly fence: SimWriteFence;
}

export function openSimEtcdStore<T>(o: SimEtcdStoreOptions<T>): Store<T> {
  // As the etcd store's open: an empty prefix gets the initial document; a present one is checked, not rewritten
  // (a replica starting must not touch what the leader writes).
  const stored = o.disk.load(o.file);
  if (stored === undefined) o.disk.write(o.file, o.store.initial());
  else o.store.validate?.(stored);
  const current = (): T => o.disk.read(o.file) as T;
  let chain: Promise<unknown> = Promise.resolve();
  /** The txn in flight: lands at a crash only if etcd's compares would pass. */
  let inFlight: { readonly base: T; readonly draft: T; readonly key: string; readonly epoch: number } | undefined;
  const commits = (t: { readonly base: T; readonly key: string; readonly epoch: number }): boolean => o.fence.holds(t.key, t.epoch) && current() === t.base;
  o.life.whenDead(() => {
    if (inFlight !== undefined && o.rng.chance(0.5) && commits(inFlight)) o.disk.write(o.file, inFlight.draft);
    inFlight = undefined;
  });
  const notLeader = (): Error => StoreErrors.make('StoreNotLeader', { file: o.file, leader: o.fence.leaderUrl() ?? 'none elected' });
  return {
    read: current,
    update<R>(mutate: (draft: T) => R): Promise<R> {
      const run = async (): Promise<R> => {
        if (!o.life.isAlive) return never<R>();
        const term = o.fence.fence();
        if (term === undefined) throw notLeader();
        const base = current();
        const draft = structuredClone(base);
        const result = mutate(draft);
        const txn = { base, draft, key: term.key, epoch: term.epoch };
        inFlight = txn;
        const ms = o.rng.int(0, o.maxLatencyMs);
        if (ms > 0) await new Promise<void>((resolve) => o.clock.setTimer(ms, resolve));
        if (!o.life.isAlive) return never<R>();
        inFlight = undefined;
        if (!o.fence.holds(txn.key, txn.epoch)) throw notLeader();
        if (current() !== base) throw StoreErrors.make('StoreConflict', { file: o.file, revision: 'newer' });
        o.disk.write(o.file, draft);
        return result;
      };
      const p = chain.then(run, run);
      chain = p.catch(() => undefined);
      return p;
    },
  };
}
