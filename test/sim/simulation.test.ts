/**
 * The whole-cloud simulator in the test suite: the regression seeds, determinism (one seed twice
 * gives the same trace) and half of the sweep (the other half is in simulationSweep.test.ts, so the
 * two run on both cores). `npm run sim -- --seeds N` runs longer sweeps.
 */
import { describe, expect, it } from 'vitest';
import { REGRESSION_SEEDS } from '../../sim/regressionSeeds.js';
import { runSeed, settingsFor } from '../../sim/runSeed.js';
import { failures, sweepChunks } from './sweep.js';

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

  // What each seed found is in sim/regressionSeeds.ts.
  it.each(REGRESSION_SEEDS.map((r) => [r.seed, r.schedule, r.ccs ?? 1, r.clcs ?? 1, r.ccReplicas ?? 1] as const))('regression seed %i (its recorded schedule) holds every invariant', async (seed, schedule, ccs, clcs, ccReplicas) => {
    const r = await runSeed(seed, { schedule, settings: settingsFor(seed, ccs, clcs, ccReplicas) });
    expect(r.events).toEqual(schedule);
    expect(failures(r)).toEqual([]);
  });
});

describe('whole-cloud simulation, seed sweep (first half)', () => {
  sweepChunks(1000, 2);
});
