/**
 * CLC replicas in the simulator (issue 21): the simulated etcd (leases, candidate keys, the oldest
 * live one leads), one replica's election (the product's leader machine run against it), guarded
 * writes, the CCs' epoch guard as watched by invariant 10a, the power-action check 10b, and whole
 * seeds with leader changes and stale leaders holding every invariant.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.js';
import { isFerryError } from '../../shared/errors/registry.js';
import type { ClcEpochRecord } from '../../cc/clcEpochGuard.js';
import type { Store } from '../../shared/store/store.js';
import { EpochWatch, epochStoreOptions } from '../../sim/epochWatch.js';
import { Incarnation } from '../../sim/incarnation.js';
import { powerOffLease } from '../../sim/leaseInvariant.js';
import { Prng } from '../../sim/prng.js';
import { runSeed, settingsFor } from '../../sim/runSeed.js';
import { generateSchedule, leaderEvents } from '../../sim/schedule.js';
import { SimDisk, openSimStore } from '../../sim/simDisk.js';
import { SIM_LEADER_SETTINGS, SimElection } from '../../sim/simElection.js';
import { SimEtcd } from '../../sim/simEtcd.js';
import { openSimEtcdStore } from '../../sim/simEtcdStore.js';
import { failures } from './sweep.js';

const TTL = SIM_LEADER_SETTINGS.ttlMs;

function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Advances the clock in small steps, letting promise chains run between them; `each` is called after every step. */
async function run(clock: ManualClock, ms: number, each?: () => void): Promise<void> {
  for (let t = 0; t < ms; t += 10) {
    clock.advance(10);
    await flush();
    each?.();
  }
}

function replicas(n: number): { clock: ManualClock; etcd: SimEtcd; lives: Incarnation[]; elections: SimElection[] } {
  const clock = new ManualClock(1_000);
  const etcd = new SimEtcd(clock);
  const lives = Array.from({ length: n }, (_, i) => new Incarnation(`clc${i + 1}`, 1));
  const elections = lives.map((life, i) => new SimElection({ etcd, self: `clc${i + 1}`, life, base: clock, rng: Prng.fork(i, 'test') }));
  for (const e of elections) e.start();
  return { clock, etcd, lives, elections };
}

describe('the simulated etcd', () => {
  it('the oldest candidate whose lease lives leads; epochs grow; a key goes with its lease', () => {
    const clock = new ManualClock(0);
    const etcd = new SimEtcd(clock);
    const a = etcd.grant(3000);
    const b = etcd.grant(3000);
    const ka = etcd.put('a', a);
    const kb = etcd.put('b', b);
    expect(ka?.epoch).toBeLessThan(kb?.epoch ?? 0);
    expect(etcd.leader()?.identity).toBe('a');
    expect(etcd.olderThan(kb?.epoch ?? 0)).toBe(true);
    clock.advance(2000);
    expect(etcd.keepAlive(b, 3000)).toBe(true);
    clock.advance(1000);
    // a's lease ran out at 3000: its key is gone, b leads, and a guarded write of a's would be refused.
    expect(etcd.holds(ka?.key ?? '', ka?.epoch ?? 0)).toBe(false);
    expect(etcd.keepAlive(a, 3000)).toBe(false);
    expect(etcd.leader()?.identity).toBe('b');
    etcd.revoke(b);
    expect(etcd.leader()).toBeUndefined();
    expect(etcd.put('a', a)).toBeUndefined();
    expect(etcd.terms.map((t) => t.identity)).toEqual(['a', 'b']);
  });
});

describe('a CLC replica\'s election in the simulator', () => {
  it('elects one leader, and never two at once while leaders lose etcd and pause (the leader always holds its key at etcd)', async () => {
    const { clock, etcd, lives, elections } = replicas(3);
    const overlaps: string[] = [];
    const check = (): void => {
      const leading = elections.filter((e) => e.leadsNow());
      if (leading.length > 1) overlaps.push(`${clock.now()}: ${leading.map((e) => e.self).join(',')}`);
      for (const e of leading) {
        const term = e.lastTerm();
        if (term === undefined || !etcd.holds(term.key, term.epoch)) overlaps.push(`${clock.now()}: ${e.self} leads off its lease`);
      }
    };
    await run(clock, 500, check);
    expect(elections.filter((e) => e.leadsNow())).toHaveLength(1);
    const epochs = new Set<string>();
    for (let round = 0; round < 6; round++) {
      const leader = elections.find((e) => e.leadsNow());
      expect(leader).toBeDefined();
      const i = elections.indexOf(leader as SimElection);
      epochs.add(leader?.epoch() ?? '');
      // Even rounds: the leader loses etcd; odd ones: it is paused past its lease.
      if (round % 2 === 0) etcd.cutOff.add(leader?.self ?? '');
      else lives[i]?.pause();
      // A replica takes over within twice the TTL.
      await run(clock, 2 * TTL, check);
      const next = elections.find((e) => e.leadsNow() && e !== leader);
      expect(next).toBeDefined();
      etcd.cutOff.clear();
      lives[i]?.resume();
      // The one resumed knows at once that it does not lead, and sends no epoch.
      expect(leader?.leading()).toBe(false);
      expect(leader?.epoch()).toBeUndefined();
      await run(clock, 500, check);
    }
    expect(overlaps).toEqual([]);
    expect(epochs.size).toBe(6);
  });

  it('a write of a deposed leader is refused whole (StoreNotLeader); the leader\'s lands and every replica reads it', async () => {
    const { clock, etcd, lives, elections } = replicas(2);
    await run(clock, 500);
    const disk = new SimDisk();
    const options = { kind: 'test', schemaVersion: 1, initial: () => ({ n: 0 }) };
    const stores = lives.map((life, i) => openSimEtcdStore<{ n: number }>({
      disk, file: 'doc', store: options, life, clock: life.clock(clock), rng: Prng.fork(i, 'store'), maxLatencyMs: 0,
      fence: { fence: () => elections[i]?.fence(), leaderUrl: () => elections[i]?.leaderUrl(), holds: (k, e) => etcd.holds(k, e) },
    }));
    const leader = elections.findIndex((e) => e.leadsNow());
    const follower = 1 - leader;
    await stores[leader]?.update((d) => { d.n = 1; });
    expect(stores[follower]?.read().n).toBe(1);
    const refused = await stores[follower]?.update((d) => { d.n = 99; }).then(() => 'written', (e: unknown) => (isFerryError(e) ? e.code : String(e)));
    expect(refused).toBe('StoreNotLeader');
    // The leader is paused past its lease; the other takes over; the old one's write on resume is refused.
    lives[leader]?.pause();
    await run(clock, 2 * TTL);
    expect(elections[follower]?.leadsNow()).toBe(true);
    lives[leader]?.resume();
    const late = await stores[leader]?.update((d) => { d.n = 42; }).then(() => 'written', (e: unknown) => (isFerryError(e) ? e.code : String(e)));
    expect(late).toBe('StoreNotLeader');
    await stores[follower]?.update((d) => { d.n = 2; });
    expect(stores[leader]?.read().n).toBe(2);
  });
});

describe('invariant 10: leadership', () => {
  const ops = (log: string[]) => ({
    ccModifyNode: (req: { clcEpoch?: string }) => { log.push(`modify ${req.clcEpoch ?? '-'}`); return Promise.resolve({}); },
  });
  const store = (disk: SimDisk, life: Incarnation, clock: ManualClock): Store<ClcEpochRecord> =>
    openSimStore({ disk, file: 'cc/cc/clc-epoch', store: epochStoreOptions('sim01'), life, clock, rng: Prng.fork(1, 'x'), maxLatencyMs: 0 });

  it('10a: a CC behind the epoch guard refuses an older epoch after a newer one (counted, not a violation)', async () => {
    const clock = new ManualClock(0);
    const disk = new SimDisk();
    const watch = new EpochWatch(() => undefined);
    const log: string[] = [];
    // The watch wraps the CC's whole handler table; only ccModifyNode is called here.
    const guarded = watch.guard('cc', 'sim01', ops(log) as never, store(disk, new Incarnation('cc', 1), clock)) as unknown as Record<string, (req: unknown, ctx: unknown) => Promise<unknown>>;
    await guarded.ccModifyNode?.({ clcEpoch: '2' }, {});
    const refused = await guarded.ccModifyNode?.({ clcEpoch: '1' }, {}).then(() => 'acted', (e: unknown) => (isFerryError(e) ? e.code : String(e)));
    expect(refused).toBe('StaleLeaderEpoch');
    expect(log).toEqual(['modify 2']);
    expect(watch.staleRefused).toBe(1);
    expect(watch.violations).toEqual([]);
  });

  it('10a: a CC that restarts having lost its epoch record and then acts on an older epoch is a violation', async () => {
    const clock = new ManualClock(0);
    const watch = new EpochWatch(() => undefined);
    const log: string[] = [];
    const first = watch.guard('cc', 'sim01', ops(log) as never, store(new SimDisk(), new Incarnation('cc', 1), clock)) as unknown as Record<string, (req: unknown, ctx: unknown) => Promise<unknown>>;
    await first.ccModifyNode?.({ clcEpoch: '5' }, {});
    // A second life over a blank disk: the guard has nothing to compare with.
    const second = watch.guard('cc', 'sim01', ops(log) as never, store(new SimDisk(), new Incarnation('cc', 2), clock)) as unknown as Record<string, (req: unknown, ctx: unknown) => Promise<unknown>>;
    await second.ccModifyNode?.({ clcEpoch: '4' }, {});
    expect(watch.violations.map((v) => v.invariant)).toEqual(['10 stale epoch accepted']);
  });

  it.each([
    ['never elected', false, false, true],
    ['leads, lease live', true, false, false],
    ['was elected, lease ran out', true, true, true],
  ])('10b: a power action from a replica that %s', (_what, elected, expire, violated) => {
    const clock = new ManualClock(0);
    const etcd = new SimEtcd(clock);
    const lease = etcd.grant(TTL);
    const key = etcd.put('clc', lease);
    if (expire) clock.advance(TTL + 1);
    const v = powerOffLease(etcd, 'clc', elected && key ? { key: key.key, epoch: key.epoch } : undefined, 'off', 'h1');
    expect(v !== undefined).toBe(violated);
  });
});

describe('whole seeds with CLC replicas', () => {
  it('the seed picks one CLC in about half of the seeds and two or three replicas in the rest; only replicas get leader faults', () => {
    const counts = [0, 0, 0, 0];
    for (let seed = 1; seed <= 400; seed++) {
      const s = settingsFor(seed);
      counts[s.clcReplicas ?? 1]! += 1;
      if ((s.clcReplicas ?? 1) === 1) expect(leaderEvents(seed, s)).toEqual([]);
    }
    expect(counts[1]).toBeGreaterThan(150);
    expect(counts[2]).toBeGreaterThan(50);
    expect(counts[3]).toBeGreaterThan(50);
    // One-CLC schedules are what they were before replicas: no leader event is drawn.
    expect(generateSchedule(3, settingsFor(3, undefined, 1)).events.some((e) => e.kind === 'clcLeaderChange' || e.kind === 'clcStaleLeader')).toBe(false);
  });

  it('leaders lose etcd, pause and resume stale, and every invariant holds: changes move to the new leader and a CC refuses the old epoch', async () => {
    const seen = { changes: 0, stale: 0, refusedStale: 0, followed: 0 };
    for (const seed of [13, 16]) {
      expect(settingsFor(seed).clcReplicas).toBeGreaterThan(1);
      const r = await runSeed(seed, { collectTrace: true });
      expect(failures(r)).toEqual([]);
      seen.changes += r.trace.filter((l) => / clc\d? leads \(epoch \d+\)$/.test(l)).length;
      seen.stale += r.trace.filter((l) => / paused for \d+ ms \(right after /.test(l)).length;
      seen.refusedStale += r.coverage['leadership changes a CC refused StaleLeaderEpoch'] ?? 0;
      seen.followed += r.trace.filter((l) => /: NotLeader from clc\d?, sent again to clc\d?$/.test(l)).length;
    }
    expect(seen.changes).toBeGreaterThan(4);
    expect(seen.stale).toBeGreaterThan(0);
    expect(seen.refusedStale).toBeGreaterThan(0);
    expect(seen.followed).toBeGreaterThan(0);
  }, 120_000);
});
