/**
 * The whole-cloud simulator in the test suite: a sweep of seeds, the regression seeds, and
 * determinism (one seed twice gives the same trace). `npm run sim -- --seeds N` runs longer sweeps.
 */
import { describe, expect, it } from 'vitest';
import { REGRESSION_SEEDS } from '../../sim/regressionSeeds.js';
import { runSeed, type SeedResult } from '../../sim/runSeed.js';

function failures(r: SeedResult): string[] {
  return r.violations.map((v) => `seed ${r.seed}: ${v.invariant}: ${v.detail} (step ${v.step}, t+${v.atMs} ms; replay: npm run sim -- --seed ${r.seed} --trace)`);
}

describe('whole-cloud simulation', () => {
  it('is deterministic: the same seed gives the same trace twice', async () => {
    const a = await runSeed(7, { collectTrace: true });
    const b = await runSeed(7, { collectTrace: true });
    expect(a.trace.length).toBeGreaterThan(50);
    expect(b.traceHash).toBe(a.traceHash);
    expect(b.trace).toEqual(a.trace);
    const other = await runSeed(8);
    expect(other.traceHash).not.toBe(a.traceHash);
  });

  it.each(REGRESSION_SEEDS.map((r) => [r.seed, r.found, r.schedule] as const))('regression seed %i holds every invariant (%s)', async (seed, _found, schedule) => {
    const r = await runSeed(seed, { schedule });
    expect(r.events).toEqual(schedule);
    expect(failures(r)).toEqual([]);
  });

  it('holds every invariant over a sweep of seeds, and exercises the migration machines', async () => {
    const found: string[] = [];
    const states = new Set<string>();
    for (let seed = 1000; seed < 1000 + SWEEP; seed++) {
      const r = await runSeed(seed);
      found.push(...failures(r));
      for (const k of Object.keys(r.coverage)) if (!k.includes(' -> ')) states.add(k);
    }
    expect(found).toEqual([]);
    for (const s of ['item completed', 'item rolled-back', 'item cancelled', 'nc-source cleaning', 'nc-incoming ready', 'node disabled']) expect(states).toContain(s);
  });
});

/** Seeds per `npm test` (the suite shares two cores); `npm run sim` runs many more. */
const SWEEP = 300;
