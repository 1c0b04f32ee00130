/**
 * Leader election through etcd (issue 21): runs leaderMachine.ts against a real etcd. The algorithm is
 * etcd's own (client/v3/concurrency election, as etcd3's Election): each candidate puts
 * `<prefix><leaseId>` on a lease of its own; the key with the lowest create revision leads; a candidate
 * waits for the deletion of the next older key. etcd3's Campaign is not used because it hides its
 * lease and says "lost" only 2×TTL after the last keep-alive: a leader must know, on its own clock,
 * when its lease may be gone (leaderMachine.ts).
 *
 * Every replica also observes the election: who leads and with which epoch, so a follower can name
 * the leader in a coded error. As a WriteFence it guards etcd store writes (shared/store/etcdStore.ts).
 */
import type { Etcd3, Lease, Watcher } from 'etcd3';
import type { Clock, TimerHandle } from '../clock.js';
import { NextCall } from '../nextCall.js';
import { withEtcdDeadline } from '../store/etcdDeadline.js';
import { DEFAULT_ETCD_TIMEOUT_MS, type FenceCheck, type WriteFence } from '../store/etcdStore.js';
import { StoreErrors } from '../store/errors.js';
import { INITIAL_LEADER, leadsAt, step, type LeaderEffect, type LeaderEvent, type LeaderSettings, type LeaderSnapshot } from './leaderMachine.js';

export interface ObservedLeader {
  readonly identity: string;
  /** The create revision of its key: its epoch. */
  readonly epoch: string;
}

export interface LeaderStatus {
  /** Whether this process leads now (its lease is known to live). */
  readonly leading: boolean;
  /** This process's epoch while it leads. */
  readonly epoch?: string;
  /** The leader as last observed in etcd (this process or another), if any. */
  readonly leader?: ObservedLeader;
  /** Every candidate's identity as last observed, oldest key (the leader) first: the replicas alive now. */
  readonly candidates: readonly string[];
}

export interface ElectionConfig {
  readonly client: Etcd3;
  /** The election's key prefix, e.g. `ferry/clc/election/`; ends with '/'. */
  readonly prefix: string;
  /** What others see as the leader's name (a replica's URL or host name). */
  readonly identity: string;
  /** The lease TTL, whole seconds (etcd's unit); at least 2. */
  readonly ttlSeconds: number;
  readonly clock: Clock;
  /** Stop leading this long before the lease could run out; default a tenth of the TTL, at least 200 ms. */
  readonly marginMs?: number;
  /** How long confirm()'s read may take before StoreUnavailable (--etcd-timeout-ms); default DEFAULT_ETCD_TIMEOUT_MS. */
  readonly callTimeoutMs?: number;
  /** First pause after a failed campaign; default 250 ms, doubling, capped at the TTL. */
  readonly backoffMs?: number;
  /** Leadership gained or lost, or another leader observed. */
  readonly onChange?: (status: LeaderStatus) => void;
  /** A failed campaign or observation step, for the log; the election carries on by itself. */
  readonly onProblem?: (e: Error, what: string) => void;
}

export class EtcdElection implements WriteFence {
  private snap: LeaderSnapshot = INITIAL_LEADER;
  private readonly settings: LeaderSettings;
  /** Bumped by every campaign and every drop: callbacks of an older campaign are ignored. */
  private gen = 0;
  private lease: Lease | undefined;
  private waitCancel: (() => void) | undefined;
  private tickTimer: TimerHandle | undefined;
  private retryTimer: TimerHandle | undefined;
  private observed: ObservedLeader | undefined;
  private candidates: readonly string[] = [];
  private observer: Watcher | undefined;
  private observing = false;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private revoking: Promise<void> = Promise.resolve();
  private readonly confirms = new NextCall(() => this.readOwnKey());

  constructor(private readonly cfg: ElectionConfig) {
    const ttlMs = cfg.ttlSeconds * 1000;
    this.settings = { ttlMs, marginMs: cfg.marginMs ?? Math.max(200, ttlMs / 10), backoffMs: cfg.backoffMs ?? 250 };
  }

  /** Starts campaigning and observing. */
  start(): void {
    this.observing = true;
    this.dispatch({ type: 'start' });
    void this.startObserver();
  }

  /** Resigns (the lease is revoked, so another candidate leads at once) and stops observing. */
  async stop(): Promise<void> {
    this.observing = false;
    this.dispatch({ type: 'resign' });
    this.retryTimer?.cancel();
    await this.observer?.cancel().catch(() => undefined);
    await this.revoking;
  }

  /** Leads now: elected, and the lease known to live. Reading it after the deadline also ends the leadership. */
  leading(): boolean {
    const now = this.cfg.clock.now();
    if (this.snap.state === 'leader' && !leadsAt(this.snap, now, this.settings)) this.dispatch({ type: 'tick' });
    return leadsAt(this.snap, now, this.settings);
  }

  status(): LeaderStatus {
    const leading = this.leading();
    return {
      leading,
      ...(leading && this.snap.epoch !== undefined ? { epoch: this.snap.epoch } : {}),
      ...(this.observed !== undefined ? { leader: this.observed } : {}),
      candidates: this.candidates,
    };
  }

  /** WriteFence: the key and epoch a guarded write compares, or who leads instead. */
  check(): FenceCheck {
    if (this.leading() && this.snap.key !== undefined && this.snap.epoch !== undefined) return { leading: true, key: this.snap.key, epoch: this.snap.epoch };
    return { leading: false, leader: this.leaderName() };
  }

  /**
   * Proves that this process leads now with one linearizable read of its key (a quorum round trip):
   * resolves when etcd holds the key with this term's epoch. Refuses StoreNotLeader when this process
   * does not lead (or etcd says its key is gone), StoreUnavailable when etcd does not answer within
   * the call deadline (a lost quorum: the lease alone would let a leader act for up to a TTL more).
   * A caller shares the read already queued behind the one in flight, so it costs at most two reads at
   * a time, each sent after its callers asked.
   */
  confirm(): Promise<void> {
    return this.confirms.call();
  }

  private async readOwnKey(): Promise<void> {
    const fence = this.check();
    const file = `etcd:${this.cfg.prefix}`;
    if (!fence.leading) throw StoreErrors.make('StoreNotLeader', { file, leader: fence.leader });
    const timeoutMs = this.cfg.callTimeoutMs ?? DEFAULT_ETCD_TIMEOUT_MS;
    const unavailable = (detail: string): Error => StoreErrors.make('StoreUnavailable', { file, timeoutMs, detail: `leadership check: ${detail}` });
    const got = await withEtcdDeadline(this.cfg.client.get(fence.key).exec(), {
      clock: this.cfg.clock, timeoutMs, timedOut: () => unavailable('deadline passed'), translate: (e) => unavailable((e as Error)?.message ?? String(e)),
    });
    if (got.kvs[0]?.create_revision !== fence.epoch) {
      if (this.snap.state === 'leader' && this.snap.epoch === fence.epoch) this.dispatch({ type: 'failed', reason: 'leader key gone from etcd' });
      throw StoreErrors.make('StoreNotLeader', { file, leader: this.leaderName() });
    }
    // The lease may have run out while the read was under way.
    if (!this.leading()) throw StoreErrors.make('StoreNotLeader', { file, leader: this.leaderName() });
  }

  leaderName(): string {
    if (this.leading()) return this.cfg.identity;
    return this.observed !== undefined && this.observed.epoch !== this.snap.epoch ? `${this.observed.identity} (epoch ${this.observed.epoch})` : 'none elected';
  }

  private dispatch(e: LeaderEvent): void {
    const { next, effects } = step(this.snap, e, this.cfg.clock.now(), this.settings);
    this.snap = next;
    for (const effect of effects) this.run(effect);
  }

  private run(effect: LeaderEffect): void {
    const { clock } = this.cfg;
    switch (effect.kind) {
      case 'campaign': {
        const g = ++this.gen;
        this.runCampaign(g).catch((e: unknown) => {
          if (g !== this.gen) return;
          this.cfg.onProblem?.(e as Error, 'campaign');
          this.dispatch({ type: 'failed', reason: (e as Error)?.message ?? String(e) });
        });
        return;
      }
      case 'dropCampaign': {
        this.gen++;
        this.tickTimer?.cancel();
        this.waitCancel?.();
        this.waitCancel = undefined;
        const lease = this.lease;
        this.lease = undefined;
        if (lease !== undefined) {
          lease.removeAllListeners();
          lease.on('lost', () => undefined);
          this.revoking = lease.revoke().catch(() => undefined);
        }
        return;
      }
      case 'becameLeader':
      case 'lostLeadership':
        this.notify();
        return;
      case 'armTimer':
        this.tickTimer?.cancel();
        this.tickTimer = clock.setTimer(Math.max(0, effect.at - clock.now()), () => this.dispatch({ type: 'tick' }));
        return;
      case 'scheduleRetry':
        this.retryTimer?.cancel();
        this.retryTimer = clock.setTimer(Math.max(0, effect.at - clock.now()), () => this.dispatch({ type: 'retry' }));
        return;
    }
  }

  private notify(): void {
    this.cfg.onChange?.(this.status());
  }

  private async runCampaign(g: number): Promise<void> {
    const { client, clock, prefix, identity } = this.cfg;
    const lease = client.lease(this.cfg.ttlSeconds);
    this.lease = lease;
    // Keep-alives are answered in order on one stream: each answer goes with the oldest unanswered send.
    // Pairing an answer with an older send than its own only shortens the known lifetime: safe.
    const sent: number[] = [];
    lease.on('keepaliveFired', () => sent.push(clock.now()));
    lease.on('keepaliveFailed', () => { sent.length = 0; });
    lease.on('keepaliveSucceeded', () => {
      const at = sent.shift();
      if (at !== undefined && g === this.gen) this.dispatch({ type: 'keepalive', sentAt: at });
    });
    lease.on('lost', (e: Error) => {
      if (g === this.gen) this.dispatch({ type: 'failed', reason: `lease lost: ${e.message}` });
    });
    const grantSentAt = clock.now();
    const id = await lease.grant();
    if (g !== this.gen) return;
    this.dispatch({ type: 'granted', sentAt: grantSentAt });
    const key = `${prefix}${id}`;
    const r = await client.if(key, 'Create', '==', 0).then(client.put(key).value(identity).lease(id)).commit();
    if (g !== this.gen) return;
    const epoch = r.header.revision;
    await this.waitForOlder(g, epoch);
    if (g !== this.gen) return;
    // Our own key must still be there with our revision (a lease that ran out while we waited is not a win).
    const mine = await client.get(key).exec();
    if (g !== this.gen) return;
    if (mine.kvs[0]?.create_revision !== epoch) throw new CampaignKeyGone(key);
    this.dispatch({ type: 'elected', key, epoch });
    this.refreshLeader().catch((e: unknown) => this.cfg.onProblem?.(e as Error, 'observe'));
  }

  /** Resolves once no candidate key older than `epoch` is left (or the campaign was dropped). */
  private async waitForOlder(g: number, epoch: string): Promise<void> {
    const { client, prefix } = this.cfg;
    while (g === this.gen) {
      const res = await client.getAll().prefix(prefix).maxCreateRevision(String(BigInt(epoch) - 1n)).sort('Create', 'Descend').limit(1).exec();
      const older = res.kvs[0];
      if (older === undefined || g !== this.gen) return;
      const w = await client.watch().key(older.key).startRevision(String(BigInt(res.header.revision) + 1n)).only('delete').create();
      await new Promise<void>((resolve, reject) => {
        const done = (): void => {
          this.waitCancel = undefined;
          void w.cancel();
          resolve();
        };
        this.waitCancel = done;
        w.once('delete', done);
        // A watch resumed after a drop may have skipped the delete (etcd3 resumes past undelivered
        // events): look again once it is back.
        w.once('disconnected', () => w.once('connected', done));
        w.once('error', (e) => {
          void w.cancel();
          reject(e);
        });
      });
    }
  }

  private async startObserver(): Promise<void> {
    const { client, prefix, clock } = this.cfg;
    try {
      const rev = await this.refreshLeader();
      if (!this.observing) return;
      const w = await client.watch().prefix(prefix).startRevision(String(rev + 1n)).create();
      if (!this.observing) {
        void w.cancel();
        return;
      }
      this.observer = w;
      const refresh = (): void => {
        this.refreshLeader().catch((e: unknown) => this.cfg.onProblem?.(e as Error, 'observe'));
      };
      w.on('data', refresh);
      // Read again after a dropped watch is back: it may have resumed past what it had not delivered.
      w.on('connected', refresh);
      w.on('error', (e) => {
        this.cfg.onProblem?.(e, 'observe');
        void w.cancel();
        if (this.observing) clock.setTimer(this.settings.backoffMs, () => void this.startObserver());
      });
    } catch (e) {
      this.cfg.onProblem?.(e as Error, 'observe');
      if (this.observing) clock.setTimer(this.settings.backoffMs, () => void this.startObserver());
    }
  }

  /** Reads who leads (one read at a time; a change during one reads again). Returns the revision read at. */
  private refreshLeader(): Promise<bigint> {
    if (this.refreshing !== undefined) {
      this.refreshAgain = true;
      return this.refreshing.then(() => 0n);
    }
    let revision = 0n;
    const p = (async () => {
      do {
        this.refreshAgain = false;
        const res = await this.cfg.client.getAll().prefix(this.cfg.prefix).sort('Create', 'Ascend').exec();
        revision = BigInt(res.header.revision);
        const first = res.kvs[0];
        const before = this.observed;
        this.observed = first === undefined ? undefined : { identity: first.value.toString(), epoch: first.create_revision };
        this.candidates = Object.freeze(res.kvs.map((kv) => kv.value.toString()));
        // Our key is gone (revoked, expired, deleted) while we think we lead: not leader, now.
        if (this.snap.state === 'leader' && this.snap.key !== undefined && revision >= BigInt(this.snap.epoch ?? '0')
          && !res.kvs.some((kv) => kv.key.toString() === this.snap.key)) {
          this.dispatch({ type: 'failed', reason: 'leader key gone from etcd' });
        } else if (before?.epoch !== this.observed?.epoch) {
          this.notify();
        }
      } while (this.refreshAgain);
    })().finally(() => {
      this.refreshing = undefined;
    });
    this.refreshing = p;
    return p.then(() => revision);
  }
}

/** The campaign's own key vanished before it was elected: the campaign starts again (never reaches a client). */
class CampaignKeyGone extends Error {
  constructor(key: string) {
    super(`candidate key ${key} is gone (its lease ran out)`);
    this.name = 'CampaignKeyGone';
  }
}
