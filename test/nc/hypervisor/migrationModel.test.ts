import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  bandwidthBytesPerMs, dirtyBytesPerMs, MIGRATION_DEFAULTS, planMigration, type MigrationModelInput,
} from '../../../nc/hypervisor/sim/migrationModel.js';

const MIB = 1024 * 1024;
const input = (over: Partial<MigrationModelInput>): MigrationModelInput => ({ ...MIGRATION_DEFAULTS, memoryMiB: 64, ...over });

describe('planMigration (table)', () => {
  const cases: { name: string; in: Partial<MigrationModelInput>; rounds: number[]; converged: boolean; downtimeMs: number }[] = [
    // 16 MiB at 125 000 B/ms takes 134.2 ms: fits the 300 ms budget at once, a single stop-and-copy.
    { name: 'tiny guest: one stop-and-copy round', in: { memoryMiB: 16 }, rounds: [16 * MIB], converged: true, downtimeMs: 134.217728 },
    // 64 MiB: 536.9 ms live round; 32 MiB/s dirties ceil(33554.432 × 536.870912) bytes meanwhile.
    { name: 'default guest converges in two rounds', in: { memoryMiB: 64 }, rounds: [64 * MIB, 18014399], converged: true, downtimeMs: 144.115192 },
    { name: 'idle guest: second round is empty', in: { memoryMiB: 1024, dirtyRateMiBps: 0 }, rounds: [1024 * MIB, 0], converged: true, downtimeMs: 0 },
    { name: 'dirtying faster than the link never converges', in: { memoryMiB: 512, dirtyRateMiBps: 200, maxIterations: 5 }, rounds: Array(5).fill(512 * MIB), converged: false, downtimeMs: 0 },
    { name: 'iteration bound reached', in: { memoryMiB: 64, maxIterations: 1 }, rounds: [64 * MIB], converged: false, downtimeMs: 0 },
    { name: 'generous downtime: everything in one pause', in: { memoryMiB: 1024, maxDowntimeMs: 10_000 }, rounds: [1024 * MIB], converged: true, downtimeMs: 8589.934592 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planMigration(input(c.in));
      expect(plan.iterations.map((r) => r.bytes)).toEqual(c.rounds);
      expect(plan.converged).toBe(c.converged);
      expect(plan.downtimeMs).toBeCloseTo(c.downtimeMs, 6);
      expect(plan.bytesTransferred).toBe(c.rounds.reduce((a, b) => a + b, 0));
    });
  }

  it('rejects out-of-range input as a programming error', () => {
    expect(() => planMigration(input({ bandwidthMbps: 0 }))).toThrow(RangeError);
    expect(() => planMigration(input({ maxIterations: 0 }))).toThrow(RangeError);
    expect(() => planMigration(input({ memoryMiB: Number.NaN }))).toThrow(RangeError);
  });
});

const arbInput = fc.record({
  memoryMiB: fc.integer({ min: 1, max: 256 * 1024 }),
  bandwidthMbps: fc.integer({ min: 1, max: 100_000 }),
  dirtyRateMiBps: fc.integer({ min: 0, max: 20_000 }),
  maxDowntimeMs: fc.integer({ min: 1, max: 5_000 }),
  maxIterations: fc.integer({ min: 1, max: 50 }),
});

describe('planMigration (properties)', () => {
  it('sends at least all of memory, rounds never exceed memory, totals add up', () => {
    fc.assert(fc.property(arbInput, (i) => {
      const plan = planMigration(i);
      const mem = i.memoryMiB * MIB;
      expect(plan.bytesTransferred).toBeGreaterThanOrEqual(mem);
      expect(plan.iterations[0]?.bytes).toBe(mem);
      expect(plan.iterations.length).toBeLessThanOrEqual(i.maxIterations);
      for (const r of plan.iterations) expect(r.bytes).toBeLessThanOrEqual(mem);
      expect(plan.totalMs).toBeCloseTo(plan.iterations.reduce((a, r) => a + r.durationMs, 0), 6);
    }));
  });

  it('when converged, downtime is the last round and within maxDowntime', () => {
    fc.assert(fc.property(arbInput, (i) => {
      const plan = planMigration(i);
      if (!plan.converged) return;
      expect(plan.downtimeMs).toBeLessThanOrEqual(i.maxDowntimeMs);
      expect(plan.downtimeMs).toBe(plan.iterations.at(-1)?.durationMs);
    }));
  });

  it('is monotone in memory size: more memory never costs fewer bytes or less time', () => {
    fc.assert(fc.property(arbInput, fc.integer({ min: 0, max: 64 * 1024 }), (i, extra) => {
      const small = planMigration(i);
      const big = planMigration({ ...i, memoryMiB: i.memoryMiB + extra });
      expect(big.bytesTransferred).toBeGreaterThanOrEqual(small.bytesTransferred);
      expect(big.totalMs).toBeGreaterThanOrEqual(small.totalMs);
      if (big.converged) expect(small.converged).toBe(true);
    }));
  });

  it('a guest dirtying at least as fast as the link never converges unless it fits in one pause', () => {
    fc.assert(fc.property(arbInput, fc.double({ min: 1, max: 10, noNaN: true }), (i, factor) => {
      // Dirty rate in MiB/s that is `factor` times the bandwidth in bytes.
      const dirtyRateMiBps = (bandwidthBytesPerMs(i.bandwidthMbps) * 1000 * factor) / MIB;
      expect(dirtyBytesPerMs(dirtyRateMiBps)).toBeGreaterThanOrEqual(bandwidthBytesPerMs(i.bandwidthMbps) * 0.999999);
      const plan = planMigration({ ...i, dirtyRateMiBps });
      const fitsAtOnce = (i.memoryMiB * MIB) / bandwidthBytesPerMs(i.bandwidthMbps) <= i.maxDowntimeMs;
      expect(plan.converged).toBe(fitsAtOnce);
    }));
  });
});
