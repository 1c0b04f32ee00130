/**
 * CC replicas in the simulator (issue 21): which seeds run them, the NCs' epoch guard as watched by
 * invariant 10c, the CC replicas' shared stores as watched by 10d, and whole seeds with CC leader
 * changes, stale CC leaders and crashed CC leaders holding every invariant.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.js';
import { isFerryError } from '../../shared/errors/registry.js';
import { StoreErrors } from '../../shared/store/errors.js';
import type { Store } from '../../shared/store/store.js';
import type { WireHandlers } from '../../shared/wire/transport.js';
import { Incarnation } from '../../sim/incarnation.js';
import { NcEpochWatch } from '../../sim/ncEpochWatch.js';
import { Prng } from '../../sim/prng.js';
import { runSeed, settingsFor } from '../../sim/runSeed.js';
import { ccLeaderEvents, generateSchedule } from '../../sim/schedule.js';
import { CcStoreWatch } from '../../sim/simCcReplica.js';
import { ccReplicaNames } from '../../sim/simCloud.js';
import { SimDisk, openSimStore } from '../../sim/simDisk.js';
import { failures } from './sweep.js';

type EpochDoc = { leaderEpoch?: string | undefined };

/** An NC's handlers that only log what they were asked (the watch wraps the whole table; ncModifyNode is used). */
function ncHandlers(log: string[]): WireHandlers {
  return { ncModifyNode: (body) => { log.push(`modify ${String(body.leaderEpoch ?? '-')}`); return Promise.resolve({}); } };
}

function epochStore(disk: SimDisk, life: Incarnation): Store<EpochDoc> {
  const options = { kind: 'test-nc', schemaVersion: 1, initial: (): EpochDoc => ({}) };
  return openSimStore<EpochDoc>({ disk, file: 'nc/h1', store: options, life, clock: life.clock(new ManualClock(0)), rng: Prng.fork(1, 'x'), maxLatencyMs: 0 });
}

const MODIFY = { stateName: 'disabled' };

const codeOf = (e: unknown): string => (isFerryError(e) ? e.code : String(e));

describe('which seeds run CC replicas', () => {
  it('two replicas per partition in about two seeds of five; only they get CC leader faults; the others keep their schedules', () => {
    let replicated = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const s = settingsFor(seed);
      if (s.ccReplicas === undefined) expect(ccLeaderEvents(seed, s)).toEqual([]);
      else replicated++;
    }
    expect(replicated).toBeGreaterThan(120);
    expect(replicated).toBeLessThan(200);
    const without = generateSchedule(3, settingsFor(3, undefined, undefined, 1)).events;
    expect(without.some((e) => e.kind === 'ccLeaderChange' || e.kind === 'ccStaleLeader')).toBe(false);
    expect(ccReplicaNames('cc2', 2)).toEqual(['cc2', 'cc2-b']);
    expect(ccReplicaNames('cc', 1)).toEqual(['cc']);
  });
});

describe('invariant 10c: no NC acts on an older CC epoch', () => {
  it('the NC behind the product\'s guard refuses an older epoch after a newer one (counted, not a violation)', async () => {
    const watch = new NcEpochWatch(() => undefined);
    const log: string[] = [];
    const served = watch.guard('h1', ncHandlers(log), epochStore(new SimDisk(), new Incarnation('nc h1', 1)));
    await served.ncModifyNode?.({ ...MODIFY, leaderEpoch: '7' }, { peer: 'cc' });
    const refused = await served.ncModifyNode?.({ ...MODIFY, leaderEpoch: '6' }, { peer: 'cc-b' }).then(() => 'acted', codeOf);
    expect(refused).toBe('StaleLeaderEpoch');
    expect(log).toEqual(['modify 7']);
    expect(watch.staleRefused).toBe(1);
    expect(watch.accepted).toBe(1);
    expect(watch.violations).toEqual([]);
  });

  it('an NC restarted over a store without the epoch that then acts on an older one is a violation; after a lost nc.json it is not', async () => {
    const watch = new NcEpochWatch(() => undefined);
    const log: string[] = [];
    await watch.guard('h1', ncHandlers(log), epochStore(new SimDisk(), new Incarnation('nc h1', 1))).ncModifyNode?.({ ...MODIFY, leaderEpoch: '5' }, { peer: 'cc' });
    // A second life over a blank disk: the guard has nothing to compare with.
    await watch.guard('h1', ncHandlers(log), epochStore(new SimDisk(), new Incarnation('nc h1', 2))).ncModifyNode?.({ ...MODIFY, leaderEpoch: '4' }, { peer: 'cc' });
    expect(watch.violations.map((v) => v.invariant)).toEqual(['10c stale CC epoch accepted']);
    const lost = new NcEpochWatch(() => undefined);
    await lost.guard('h1', ncHandlers(log), epochStore(new SimDisk(), new Incarnation('nc h1', 1))).ncModifyNode?.({ ...MODIFY, leaderEpoch: '5' }, { peer: 'cc' });
    lost.forget('h1');
    await lost.guard('h1', ncHandlers(log), epochStore(new SimDisk(), new Incarnation('nc h1', 2))).ncModifyNode?.({ ...MODIFY, leaderEpoch: '4' }, { peer: 'cc' });
    expect(lost.violations).toEqual([]);
  });
});

describe('invariant 10d: no deposed CC\'s write is committed', () => {
  const store = (outcome: 'commit' | 'refuse'): Store<{ n: number }> => ({
    read: () => ({ n: 0 }),
    update: (mutate) => {
      if (outcome === 'refuse') return Promise.reject(StoreErrors.make('StoreNotLeader', { file: 'cc/sim01/view', leader: 'http://cc-b.sim:8774' }));
      return Promise.resolve(mutate({ n: 0 }));
    },
  });

  it.each([
    ['the leader commits', 'commit', true, 1, 0, 0],
    ['a deposed replica is refused StoreNotLeader', 'refuse', false, 0, 1, 0],
    ['a replica etcd does not name leader commits', 'commit', false, 1, 0, 1],
  ] as const)('%s', async (_what, outcome, leads, committed, refused, violations) => {
    const watch = new CcStoreWatch();
    await watch.watch(store(outcome), 'cc', 'cc/sim01/view', () => leads).update((d) => { d.n = 1; }).catch(() => undefined);
    expect([watch.committed, watch.refused, watch.violations.length]).toEqual([committed, refused, violations]);
  });
});

describe('whole seeds with CC replicas', () => {
  it('CC leaders lose etcd, pause and resume stale, and crash; every invariant holds; followers refuse, NCs refuse the old epoch, etcd refuses a deposed CC\'s write', async () => {
    const seen = { faults: new Set<string>(), terms: 0, followerRefused: 0, ncRefused: 0, storeRefused: 0, paused: 0 };
    // Seeds found to hold all three faults and every kind of refusal between them (seeds 1-100, coverage counts).
    for (const seed of [2, 23, 34]) {
      expect(settingsFor(seed).ccReplicas).toBe(2);
      const r = await runSeed(seed, { collectTrace: true });
      expect(failures(r)).toEqual([]);
      for (const e of r.events) if (['ccLeaderChange', 'ccStaleLeader', 'crashCc'].includes(e.kind)) seen.faults.add(e.kind);
      seen.terms += r.trace.filter((l) => / leads sim0\d \(epoch \d+\)$/.test(l)).length;
      seen.paused += r.trace.filter((l) => /cc\d?(-b)? paused for \d+ ms \(right after sending nc\w+ of epoch \d+\)$/.test(l)).length;
      seen.followerRefused += r.coverage['leadership changes a CC follower refused NotLeader'] ?? 0;
      seen.ncRefused += r.coverage['leadership NC changes refused StaleLeaderEpoch'] ?? 0;
      seen.storeRefused += r.coverage['leadership CC shared-store writes refused StoreNotLeader'] ?? 0;
    }
    expect([...seen.faults].sort()).toEqual(['ccLeaderChange', 'ccStaleLeader', 'crashCc']);
    expect(seen.terms).toBeGreaterThan(6);
    expect(seen.paused).toBeGreaterThan(0);
    expect(seen.followerRefused).toBeGreaterThan(0);
    expect(seen.ncRefused).toBeGreaterThan(0);
    expect(seen.storeRefused).toBeGreaterThan(0);
  }, 180_000);
});
