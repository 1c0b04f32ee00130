/**
 * The etcd backend of Store<T> (issue 21): the same contract as the file store (read() a synchronous
 * snapshot; update() resolves once the change is durable, applied in call order; the same kind,
 * schema-version and validate checks at open), kept under one key prefix laid out by etcdLayout.ts.
 *
 * - read() is a cache kept current by a watch on the prefix, so a replica that never writes still
 *   sees the leader's writes.
 * - update() is one etcd txn: it compares the head key's mod revision with the one its snapshot was
 *   built on (optimistic concurrency) and, with a fence, that the leader's election key still has the
 *   create revision this process was elected with. Refused whole, never half-applied: StoreConflict
 *   (another writer won; the cache is refreshed from the same txn, so a retry builds on the new
 *   state), StoreNotLeader (deposed), StoreUnavailable (no answer within the deadline: lost quorum,
 *   etcd down; the outcome is unknown, and if it did commit the watch brings it in), StoreTooLarge.
 * - A change over etcd's limits is several such txns when its layout allows (etcdChunks.ts: entries
 *   of independent collections first, the rest last), each guarded the same way; cut short, what was
 *   committed is a valid document, which read() then shows, and the update fails with the code above.
 */
import type { Etcd3, IKeyValue, IOperation, Watcher } from 'etcd3';
import type { Clock } from '../clock.js';
import { withEtcdDeadline } from './etcdDeadline.js';
import { StoreErrors } from './errors.js';
import { DEFAULT_ETCD_LIMITS, planWrites, type EtcdLimits } from './etcdChunks.js';
import { decodeDocument, encodeDocument, HEAD_KEY, META_KEY, reconcileWithStored, type EtcdLayout, type KeyDiff } from './etcdLayout.js';
import type { Store, StoreOptions } from './store.js';

/** What a guarded write checks: the leader key and the epoch (its create revision) while this process leads. */
export type FenceCheck =
  | { readonly leading: true; readonly key: string; readonly epoch: string }
  | { readonly leading: false; readonly leader: string };

/** The narrow view of leadership a store needs (shared/leader/ implements it). */
export interface WriteFence {
  check(): FenceCheck;
  /** Who leads now, for StoreNotLeader when etcd says this process no longer does. */
  leaderName(): string;
}

export interface EtcdStoreConfig<T> {
  readonly client: Etcd3;
  /** Absolute key prefix, e.g. `ferry/clc/state/`; ends with '/'. */
  readonly prefix: string;
  readonly options: StoreOptions<T>;
  readonly layout?: EtcdLayout;
  /** Given: every update is refused unless this process leads (the fencing token checked in the txn). */
  readonly fence?: WriteFence;
  readonly clock: Clock;
  /** How long one etcd call may take before StoreUnavailable. */
  readonly timeoutMs?: number;
  readonly limits?: EtcdLimits;
  /** How an update's draft is made from the snapshot (default structuredClone), as the event log's file store does. */
  readonly draftOf?: (snapshot: T) => T;
  /** A watched change that could not be applied (not JSON, fails validate): the cache keeps the last good snapshot. */
  readonly onWatchProblem?: (e: Error) => void;
}

export interface EtcdStore<T> extends Store<T> {
  /** The etcd revision the snapshot read() returns is at. */
  revision(): bigint;
  /** Stops the watch (the client is the caller's to close). */
  close(): Promise<void>;
}

export const DEFAULT_ETCD_TIMEOUT_MS = 5_000;

/** Opens (or creates, when the prefix is empty) a store under `prefix`. Throws the file store's codes, or StoreUnavailable. */
export async function openEtcdStore<T>(config: EtcdStoreConfig<T>): Promise<EtcdStore<T>> {
  const store = new EtcdBackedStore(config);
  await store.load();
  return store;
}

class EtcdBackedStore<T> implements EtcdStore<T> {
  private readonly label: string;
  private readonly timeoutMs: number;
  private readonly layout: EtcdLayout;
  private data!: T;
  /** The document's keys (relative) → JSON text as etcd holds them at `rev`: what watched changes apply to. */
  private raw = new Map<string, string>();
  /**
   * The same keys as this process encodes `data` (encodeDocument): what an update diffs against. Not
   * `raw`: validate may give the same data back with keys in another order (zod's), and a diff
   * against etcd's texts would then rewrite every entry.
   */
  private doc = new Map<string, string>();
  private rev = 0n;
  private headMod = '0';
  private watcher: Watcher | undefined;
  private closed = false;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly texts = new WeakMap<object, string>();

  constructor(private readonly cfg: EtcdStoreConfig<T>) {
    this.label = `etcd:${cfg.prefix}`;
    this.timeoutMs = cfg.timeoutMs ?? DEFAULT_ETCD_TIMEOUT_MS;
    this.layout = cfg.layout ?? {};
  }

  read(): T {
    return this.data;
  }

  revision(): bigint {
    return this.rev;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.watcher?.cancel();
  }

  async load(): Promise<void> {
    const { prefix, options: opts } = this.cfg;
    let got = await this.call(this.cfg.client.getAll().prefix(prefix).exec());
    let kvs = got.kvs;
    let revision = got.header.revision;
    if (!kvs.some((kv) => kv.key.toString() === prefix + META_KEY)) {
      const initial = encodeDocument(opts.initial() as Record<string, unknown>, this.layout);
      const c = this.cfg.client;
      const r = await this.call(c.if(prefix + META_KEY, 'Create', '==', 0)
        .then(
          c.put(prefix + META_KEY).value(JSON.stringify({ schemaVersion: opts.schemaVersion, kind: opts.kind })),
          ...[...initial].map(([k, v]) => c.put(prefix + k).value(v)),
          c.put(prefix + HEAD_KEY).value(''),
        )
        .else(c.getAll().prefix(prefix))
        .commit());
      if (r.succeeded) {
        got = await this.call(c.getAll().prefix(prefix).exec());
        kvs = got.kvs;
        revision = got.header.revision;
      } else {
        // Another opener created it first: read what it wrote.
        kvs = r.responses[0]?.response_range?.kvs ?? [];
        revision = r.header.revision;
      }
    }
    const meta = kvs.find((kv) => kv.key.toString() === prefix + META_KEY);
    let env: { schemaVersion?: unknown; kind?: unknown };
    try {
      env = JSON.parse(meta?.value.toString() ?? 'null') as typeof env;
    } catch (e) {
      throw StoreErrors.make('StoreCorrupt', { file: this.label, detail: `${META_KEY}: ${(e as Error).message}` });
    }
    if (env?.kind !== opts.kind || env.schemaVersion !== opts.schemaVersion) {
      throw StoreErrors.make('StoreSchemaMismatch', {
        file: this.label, found: String(env?.schemaVersion), kind: String(env?.kind), expected: opts.schemaVersion, expectedKind: opts.kind,
      });
    }
    this.replaceAll(kvs, BigInt(revision));
    this.startWatch();
  }

  update<R>(mutate: (draft: T) => R): Promise<R> {
    // One write at a time, in call order, as the file store: a later update never builds on an older snapshot.
    const run = (): Promise<R> => this.write(mutate);
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => undefined);
    return p;
  }

  private async write<R>(mutate: (draft: T) => R): Promise<R> {
    const fence = this.cfg.fence?.check();
    if (fence !== undefined && !fence.leading) throw StoreErrors.make('StoreNotLeader', { file: this.label, leader: fence.leader });
    const draft = this.cfg.draftOf !== undefined ? this.cfg.draftOf(this.data) : structuredClone(this.data);
    const result = mutate(draft);
    let next: Map<string, string>;
    try {
      next = encodeDocument(draft as Record<string, unknown>, this.layout, this.texts);
    } catch (e) {
      throw StoreErrors.make('StoreWriteFailed', { file: this.label, detail: (e as Error).message });
    }
    const plan = planWrites(this.doc, next, this.layout, this.cfg.prefix, this.cfg.limits ?? DEFAULT_ETCD_LIMITS);
    if ('over' in plan) throw StoreErrors.make('StoreTooLarge', { file: this.label, ...plan.over });
    const [only] = plan.chunks;
    if (plan.chunks.length === 1 && only !== undefined && only.puts.length + only.deletes.length === 0 && fence === undefined) return result;
    let at = 0n;
    // Each txn builds on the one before it, never on a head the watch brought in meanwhile (that is another writer's: a conflict).
    let head = this.headMod;
    for (const [i, chunk] of plan.chunks.entries()) {
      try {
        at = await this.commit(chunk, head, fence);
        head = String(at);
      } catch (e) {
        // A split change cut short: what etcd committed of it is a valid document (its layout says so); read and diff from there
        // (a refused txn already replaced the cache with the prefix it read).
        const code = (e as { code?: unknown }).code;
        if (i > 0 && code !== 'StoreConflict' && code !== 'StoreNotLeader') this.adoptRaw();
        throw e;
      }
    }
    // Durable first, visible second: the document moves only once etcd has committed all of it.
    if (at !== 0n && at === this.rev) {
      this.doc = next;
      this.data = draft;
    }
    return result;
  }

  /**
   * One txn of an update, guarded by the head key's mod revision `head` (and the fence); the raw cache
   * and the revision move with it. Returns the revision it committed at (0n: it changed nothing).
   */
  private async commit(chunk: KeyDiff, head: string, fence: Extract<FenceCheck, { leading: true }> | undefined): Promise<bigint> {
    const { client: c, prefix } = this.cfg;
    let txn = c.if(prefix + HEAD_KEY, 'Mod', '==', head);
    if (fence !== undefined) txn = txn.and(fence.key, 'Create', '==', fence.epoch);
    const changes: IOperation[] = [
      ...chunk.puts.map(([k, v]) => c.put(prefix + k).value(v)),
      ...chunk.deletes.map((k) => c.delete().key(prefix + k)),
    ];
    // A leader's no-op still proves in etcd that it leads; it writes nothing.
    if (changes.length > 0) changes.push(c.put(prefix + HEAD_KEY).value(''));
    const orElse: IOperation[] = [c.getAll().prefix(prefix)];
    if (fence !== undefined) orElse.push(c.get(fence.key));
    const r = await this.call(txn.then(...changes).else(...orElse).commit());
    const revision = BigInt(r.header.revision);
    if (!r.succeeded) {
      const current = r.responses[0]?.response_range?.kvs ?? [];
      if (revision > this.rev) this.replaceAll(current, revision);
      if (fence !== undefined) {
        const leaderKv = r.responses[1]?.response_range?.kvs?.[0];
        if (leaderKv === undefined || leaderKv.create_revision !== fence.epoch) {
          throw StoreErrors.make('StoreNotLeader', { file: this.label, leader: this.cfg.fence?.leaderName() ?? 'unknown' });
        }
      }
      throw StoreErrors.make('StoreConflict', { file: this.label, revision: String(revision) });
    }
    if (changes.length === 0) return 0n;
    if (revision > this.rev) {
      const raw = new Map(this.raw);
      for (const k of chunk.deletes) raw.delete(k);
      for (const [k, v] of chunk.puts) raw.set(k, v);
      this.raw = raw;
      this.rev = revision;
      this.headMod = String(revision);
    }
    return revision;
  }

  /** The document as the raw cache holds it (after part of a split change): read() and the next diff follow etcd. */
  private adoptRaw(): void {
    try {
      const data = this.decode(this.raw);
      this.doc = reconcileWithStored(this.encode(data), this.raw, this.layout);
      this.data = data;
    } catch (e) {
      this.cfg.onWatchProblem?.(e as Error);
    }
  }

  /** Runs one etcd call with a deadline; anything but our own codes becomes StoreUnavailable. */
  private call<V>(p: Promise<V>): Promise<V> {
    return withEtcdDeadline(p, {
      clock: this.cfg.clock, timeoutMs: this.timeoutMs, translate: (e) => this.translate(e),
      timedOut: () => StoreErrors.make('StoreUnavailable', { file: this.label, timeoutMs: this.timeoutMs, detail: 'deadline passed' }),
    });
  }

  /** etcd's own size refusals are StoreTooLarge (this side's limits were set lower than the cluster's); the rest StoreUnavailable. */
  private translate(e: unknown): Error {
    const detail = (e as Error)?.message ?? String(e);
    if (/too many operations in txn request|request is too large/.test(detail)) {
      return StoreErrors.make('StoreTooLarge', { file: this.label, detail: 'a txn etcd refused', limit: detail });
    }
    return StoreErrors.make('StoreUnavailable', { file: this.label, timeoutMs: this.timeoutMs, detail });
  }

  /** The whole prefix as read at `revision`: the cache becomes exactly it. */
  private replaceAll(kvs: readonly IKeyValue[], revision: bigint): void {
    const raw = new Map<string, string>();
    let headMod = '0';
    for (const kv of kvs) {
      const key = kv.key.toString().slice(this.cfg.prefix.length);
      if (key === HEAD_KEY) headMod = kv.mod_revision;
      else if (key !== META_KEY) raw.set(key, kv.value.toString());
    }
    const data = this.decode(raw);
    this.doc = reconcileWithStored(this.encode(data), raw, this.layout);
    this.data = data;
    this.raw = raw;
    this.rev = revision;
    this.headMod = headMod;
  }

  private encode(data: T): Map<string, string> {
    try {
      return encodeDocument(data as Record<string, unknown>, this.layout, this.texts);
    } catch (e) {
      throw StoreErrors.make('StoreInvalid', { file: this.label, detail: (e as Error).message });
    }
  }

  private decode(doc: ReadonlyMap<string, string>): T {
    let raw: Record<string, unknown>;
    try {
      raw = decodeDocument(doc, this.layout);
    } catch (e) {
      throw StoreErrors.make('StoreCorrupt', { file: this.label, detail: (e as Error).message });
    }
    if (!this.cfg.options.validate) return raw as T;
    try {
      return this.cfg.options.validate(raw);
    } catch (e) {
      throw StoreErrors.make('StoreInvalid', { file: this.label, detail: (e as Error).message });
    }
  }

  private startWatch(): void {
    if (this.closed) return;
    const { client, prefix } = this.cfg;
    const from = this.rev + 1n;
    void client.watch().prefix(prefix).startRevision(String(from)).create().then((w) => {
      if (this.closed) {
        void w.cancel();
        return;
      }
      this.watcher = w;
      w.on('data', (res) => this.applyWatched(res.events.map((e) => ({ type: e.type, kv: e.kv }))));
      // etcd3 resumes a dropped watch from the last response's header revision, which can be past
      // events not delivered yet (a catch-up comes in batches): once it is back, read the prefix again.
      let dropped = false;
      w.on('disconnected', () => { dropped = true; });
      w.on('connected', () => {
        if (!dropped) return;
        dropped = false;
        void this.resync(false);
      });
      // A compacted start revision or a cancelled watch: read the prefix again and watch from there.
      w.on('error', (e) => {
        this.cfg.onWatchProblem?.(e);
        void w.cancel();
        this.watcher = undefined;
        void this.resync(true);
      });
    }, (e: unknown) => {
      this.cfg.onWatchProblem?.(e as Error);
      this.retryResync();
    });
  }

  /** Reads the whole prefix again (and, after a failed watch, watches again from there). */
  private async resync(restartWatch = true): Promise<void> {
    if (this.closed) return;
    try {
      const got = await this.call(this.cfg.client.getAll().prefix(this.cfg.prefix).exec());
      const revision = BigInt(got.header.revision);
      if (revision >= this.rev) this.replaceAll(got.kvs, revision);
      if (restartWatch) this.startWatch();
    } catch (e) {
      this.cfg.onWatchProblem?.(e as Error);
      this.retryResync(restartWatch);
    }
  }

  private retryResync(restartWatch = true): void {
    if (!this.closed) this.cfg.clock.setTimer(this.timeoutMs, () => void this.resync(restartWatch));
  }

  /** Another writer's changes (ours are already in the cache: events at or below `rev` are skipped). */
  private applyWatched(events: ReadonlyArray<{ type: string; kv: IKeyValue }>): void {
    const raw = new Map(this.raw);
    let rev = this.rev;
    let headMod = this.headMod;
    for (const { type, kv } of events) {
      const at = BigInt(kv.mod_revision);
      if (at <= this.rev) continue;
      if (at > rev) rev = at;
      const key = kv.key.toString().slice(this.cfg.prefix.length);
      if (key === HEAD_KEY) headMod = type === 'Delete' ? '0' : kv.mod_revision;
      else if (key === META_KEY) continue;
      else if (type === 'Delete') raw.delete(key);
      else raw.set(key, kv.value.toString());
    }
    if (rev === this.rev) return;
    try {
      const data = this.decode(raw);
      this.doc = reconcileWithStored(this.encode(data), raw, this.layout);
      this.data = data;
    } catch (e) {
      // read() keeps the last good snapshot (and updates diff against it); the revision moves on.
      this.cfg.onWatchProblem?.(e as Error);
    }
    this.raw = raw;
    this.rev = rev;
    this.headMod = headMod;
  }
}
