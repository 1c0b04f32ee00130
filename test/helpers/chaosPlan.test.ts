/** The chaos test's schedule: a seed fixes it, every draw stays in range, and a bad FERRY_CHAOS_SEED is refused clearly. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Prng } from '../../sim/prng.js';
import { chaosSeed, planRound } from './chaosPlan.js';

const HOSTS = ['127.0.36.1', '127.0.36.2', '127.0.36.3', '127.0.36.4'];

describe('planRound', () => {
  it('is fixed by the seed and keeps every choice in range', () => {
    fc.assert(fc.property(fc.nat(), (seed) => {
      const plan = planRound(new Prng(seed), HOSTS);
      expect(planRound(new Prng(seed), HOSTS)).toEqual(plan);
      expect(HOSTS).toContain(plan.source);
      expect(plan.listed).not.toContain(plan.source);
      expect(new Set(plan.listed).size).toBe(plan.listed.length);
      const [min, max] = { any: [0, 0], deny: [1, 1], allow: [1, 2] }[plan.variant];
      expect(plan.listed.length).toBeGreaterThanOrEqual(min!);
      expect(plan.listed.length).toBeLessThanOrEqual(max!);
      if (plan.disableOther !== undefined) expect(plan.disableOther).not.toBe(plan.source);
      expect(plan.faults.length).toBeGreaterThanOrEqual(1);
      expect(plan.faults.at(-1)?.holdForNext).toBe(false);
    }));
  });
});

describe('chaosSeed', () => {
  it.each([
    [{}, 1_234_567, 234_567],
    [{ FERRY_CHAOS_SEED: '' }, 1_000_042, 42],
    [{ FERRY_CHAOS_SEED: '42' }, 7, 42],
  ])('%j at %d → %d', (env, now, seed) => {
    expect(chaosSeed(env, now)).toBe(seed);
  });

  it.each(['abc', '-1', '1.5', '1e3', '1234567890'])('refuses FERRY_CHAOS_SEED=%s with a message naming the variable', (raw) => {
    expect(() => chaosSeed({ FERRY_CHAOS_SEED: raw }, 0)).toThrow(/FERRY_CHAOS_SEED must be a whole number/);
  });
});
