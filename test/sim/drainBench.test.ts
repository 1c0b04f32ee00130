/**
 * The drain bench's machinery (bench/drainCase.ts) is itself correct: Ferry's drain of 50 mixed guests
 * onto 100 small destinations in the simulated cloud moves every guest, never over-commits a host, and
 * cannot beat physics (its makespan is at least the two-stream bound, the serial one at least the
 * one-stream bound). No timing is asserted: the numbers are the bench's (npm run bench).
 */
import { describe, expect, it } from 'vitest';
import { DRAIN_MIX, DRAIN_VARIANTS, physicalBound, runDrain } from '../../bench/drainCase.js';

const total = DRAIN_MIX.reduce((a, m) => a + m.count, 0);

describe('drain bench on the simulated cloud', () => {
  it('Ferry moves every guest within the limits, no host over capacity, no faster than the link allows', async () => {
    const r = await runDrain(DRAIN_VARIANTS.find((v) => v.name === 'ferry')!);
    expect(r.completed).toBe(total);
    expect(r.overCommits).toBe(0);
    expect(r.checks).toBeGreaterThan(0);
    expect(r.makespanMs).toBeGreaterThanOrEqual(physicalBound(2).boundMs);
  });

  it('one stream at a time takes at least the sum of the jobs', async () => {
    const r = await runDrain(DRAIN_VARIANTS.find((v) => v.name === 'serial')!);
    expect(r.completed).toBe(total);
    expect(r.makespanMs).toBeGreaterThanOrEqual(physicalBound(1).boundMs);
  });
});
