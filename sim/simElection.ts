/**
 * One CLC replica's part in the election (issue 21), in the simulator: the product's pure leader
 * machine (shared/leader/leaderMachine.ts) run against SimEtcd the way shared/leader/etcdElection.ts
 * runs it against etcd — a lease granted and kept alive every third of the TTL, a candidate key, a
 * wait for the older candidates to go, `elected` with the key's create revision as the epoch — and
 * seen by the CLC as its Leadership and by its stores as their fence (simEtcdStore.ts). Every etcd
 * call travels: it reaches etcd after a short delay (even if the replica pauses meanwhile) and its
 * answer reaches the replica only while it runs; a replica cut off from etcd hears nothing and its
 * call times out. A partition's CC replicas run the same under `cc/<partition>/election/`, named by
 * their URLs (cc/replicas.ts's CcLeadership: `leader at <url>` in a NotLeader must be followable).
 */
import type { Leadership } from '../clc/core/leadership.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { INITIAL_LEADER, leadsAt, step, type LeaderEffect, type LeaderEvent, type LeaderSettings, type LeaderSnapshot } from '../shared/leader/leaderMachine.js';
import type { Incarnation } from './incarnation.js';
import type { Prng } from './prng.js';
import { CLC_ELECTION, type SimEtcd } from './simEtcd.js';

/** Sim timings: a 3 s lease (the product's shortest is 2 s), the product's margin rule (a tenth, at least 200 ms) and back-off. */
export const SIM_LEADER_SETTINGS: LeaderSettings = Object.freeze({ ttlMs: 3000, marginMs: 300, backoffMs: 250 });

/** How long a replica waits for etcd's answer (the product's is 5 s with a longer TTL). */
const ETCD_CALL_TIMEOUT_MS = 1000;

/** How often a waiting candidate looks whether the older candidates are gone (the product watches). */
const WAIT_POLL_MS = 200;

/** An etcd call that got no answer in time, or a campaign etcd refused: the campaign starts again (never reaches a client). */
class EtcdCallFailed extends Error {
  constructor(what: string) {
    super(`etcd: ${what}`);
    this.name = 'EtcdCallFailed';
  }
}

export interface SimElectionOptions {
  readonly etcd: SimEtcd;
  /** This replica's name ('clc', 'clc2', …; a CC replica's URL): its identity in the election. */
  readonly self: string;
  /** The election's key prefix at etcd (default: the CLC's). */
  readonly election?: string;
  readonly life: Incarnation;
  /** etcd's clock (messages in flight arrive whatever the replica does). */
  readonly base: Clock;
  readonly rng: Prng;
  readonly settings?: LeaderSettings;
  /** Leadership gained or lost, for the trace. */
  readonly onChange?: (leading: boolean, epoch: string) => void;
}

export class SimElection implements Leadership {
  readonly self: string;
  private snap: LeaderSnapshot = INITIAL_LEADER;
  private readonly settings: LeaderSettings;
  private readonly clock: Clock;
  /** Bumped by every campaign and every drop: callbacks of an older campaign are ignored. */
  private gen = 0;
  private lease: number | undefined;
  private tickTimer: TimerHandle | undefined;
  private retryTimer: TimerHandle | undefined;
  private keepTimer: TimerHandle | undefined;
  private readonly listeners: (() => void)[] = [];
  private readonly election: string;

  constructor(private readonly o: SimElectionOptions) {
    this.self = o.self;
    this.election = o.election ?? CLC_ELECTION;
    this.settings = o.settings ?? SIM_LEADER_SETTINGS;
    this.clock = o.life.clock(o.base);
  }

  start(): void {
    this.dispatch({ type: 'start' });
  }

  /** Called on every gain or loss of leadership (the replica's duties reconcile). */
  onLeadershipChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** As EtcdElection.leading(): reading it after the deadline also ends the leadership. */
  leading(): boolean {
    const now = this.clock.now();
    if (this.snap.state === 'leader' && !leadsAt(this.snap, now, this.settings)) this.dispatch({ type: 'tick' });
    return leadsAt(this.snap, now, this.settings);
  }

  /** Whether it leads now, looked at from outside (the simulator's own checks): changes nothing, even in a paused replica. */
  leadsNow(): boolean {
    return leadsAt(this.snap, this.clock.now(), this.settings);
  }

  leaderUrl(): string | undefined {
    return this.o.etcd.leader(this.election)?.identity;
  }

  epoch(): string | undefined {
    return this.leading() ? this.snap.epoch : undefined;
  }

  /** The store's fence: the key and epoch a guarded write compares at etcd, while this replica leads. */
  fence(): { readonly key: string; readonly epoch: number } | undefined {
    return this.leading() && this.snap.key !== undefined && this.snap.epoch !== undefined ? { key: this.snap.key, epoch: Number(this.snap.epoch) } : undefined;
  }

  /** The key and epoch this replica was last elected with (for the invariants), led or not now. */
  lastTerm(): { readonly key: string; readonly epoch: number } | undefined {
    return this.snap.key !== undefined && this.snap.epoch !== undefined ? { key: this.snap.key, epoch: Number(this.snap.epoch) } : undefined;
  }

  private dispatch(e: LeaderEvent): void {
    const { next, effects } = step(this.snap, e, this.clock.now(), this.settings);
    this.snap = next;
    for (const effect of effects) this.run(effect);
  }

  private run(effect: LeaderEffect): void {
    switch (effect.kind) {
      case 'campaign': {
        const g = ++this.gen;
        this.campaign(g).catch((e: unknown) => {
          if (g === this.gen) this.dispatch({ type: 'failed', reason: (e as Error).message });
        });
        return;
      }
      case 'dropCampaign': {
        this.gen++;
        this.tickTimer?.cancel();
        this.keepTimer?.cancel();
        const lease = this.lease;
        this.lease = undefined;
        if (lease !== undefined) this.call(() => this.o.etcd.revoke(lease)).catch(() => undefined);
        return;
      }
      case 'becameLeader':
      case 'lostLeadership':
        this.o.onChange?.(effect.kind === 'becameLeader', effect.epoch);
        for (const l of this.listeners) l();
        return;
      case 'armTimer':
        this.tickTimer?.cancel();
        this.tickTimer = this.clock.setTimer(Math.max(0, effect.at - this.clock.now()), () => this.dispatch({ type: 'tick' }));
        return;
      case 'scheduleRetry':
        this.retryTimer?.cancel();
        this.retryTimer = this.clock.setTimer(Math.max(0, effect.at - this.clock.now()), () => this.dispatch({ type: 'retry' }));
        return;
    }
  }

  private async campaign(g: number): Promise<void> {
    const { etcd } = this.o;
    const { ttlMs } = this.settings;
    const grantSentAt = this.clock.now();
    const lease = await this.call(() => etcd.grant(ttlMs));
    if (g !== this.gen) return;
    this.lease = lease;
    this.dispatch({ type: 'granted', sentAt: grantSentAt });
    this.keepAlive(g, lease);
    const mine = await this.call(() => etcd.put(this.self, lease, this.election));
    if (g !== this.gen) return;
    if (mine === undefined) throw new EtcdCallFailed('the lease ran out before the candidate key was created');
    while (await this.call(() => etcd.olderThan(mine.epoch, this.election))) {
      if (g !== this.gen) return;
      await new Promise<void>((resolve) => this.clock.setTimer(WAIT_POLL_MS, resolve));
      if (g !== this.gen) return;
    }
    if (g !== this.gen) return;
    // Our own key must still be there (a lease that ran out while we waited is not a win).
    if (!(await this.call(() => etcd.holds(mine.key, mine.epoch)))) throw new EtcdCallFailed(`candidate key ${mine.key} is gone`);
    if (g !== this.gen) return;
    this.dispatch({ type: 'elected', key: mine.key, epoch: String(mine.epoch) });
  }

  /** Keep-alives every third of the TTL, as etcd3 sends them; a lost lease ends the campaign. */
  private keepAlive(g: number, lease: number): void {
    this.keepTimer = this.clock.setTimer(Math.floor(this.settings.ttlMs / 3), () => {
      if (g !== this.gen) return;
      const sentAt = this.clock.now();
      this.call(() => this.o.etcd.keepAlive(lease, this.settings.ttlMs)).then((alive) => {
        if (g !== this.gen) return;
        this.dispatch(alive ? { type: 'keepalive', sentAt } : { type: 'failed', reason: 'lease lost (etcd no longer has it)' });
      }, () => undefined);
      this.keepAlive(g, lease);
    });
  }

  /** One etcd call: applied when it reaches etcd; its answer heard only while this replica runs. */
  private call<T>(fn: () => T): Promise<T> {
    const { etcd, base, rng, life } = this.o;
    return new Promise<T>((resolve, reject) => {
      const timeout = this.clock.setTimer(ETCD_CALL_TIMEOUT_MS, () => reject(new EtcdCallFailed(`no answer within ${ETCD_CALL_TIMEOUT_MS} ms`)));
      if (etcd.cutOff.has(this.self)) return;
      base.setTimer(rng.int(1, 5), () => {
        if (etcd.cutOff.has(this.self)) return;
        const result = fn();
        etcd.observe();
        base.setTimer(rng.int(1, 5), () => {
          if (!life.isAlive || etcd.cutOff.has(this.self)) return;
          // The answer waits in the socket while the replica is paused.
          void life.whenRunning().then(() => {
            timeout.cancel();
            resolve(result);
          });
        });
      });
    });
  }
}
