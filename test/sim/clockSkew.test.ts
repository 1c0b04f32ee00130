/** Per-process clocks in the simulator: offsets, drift and NTP steps over one ManualClock. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.js';
import { ClockSkews, SkewedClock } from '../../sim/clockSkew.js';
import { Prng } from '../../sim/prng.js';

describe('SkewedClock', () => {
  it('reads the base time plus its offset; an NTP step moves now() but not timers already set', () => {
    const base = new ManualClock(1_000_000);
    const c = new SkewedClock(base, -1500, 0);
    expect(c.now()).toBe(998_500);
    const fired: number[] = [];
    c.setTimer(1000, () => fired.push(base.now()));
    c.step(20_000);
    expect(c.now()).toBe(1_018_500);
    base.advance(1000);
    expect(fired).toEqual([1_001_000]);
  });

  it('drifts: a clock 1000 ppm fast gains 1 ms per second and counts its timers that much sooner', () => {
    const base = new ManualClock(0);
    const c = new SkewedClock(base, 0, 1000);
    let at = -1;
    c.setTimer(10_010, () => { at = base.now(); });
    base.advance(10_000);
    expect(c.now()).toBe(10_010);
    expect(at).toBe(10_000);
    // Whole-ms timers stay on whole ms (so many hosts' timers share steps); fractional ones keep their fraction.
    let short = -1;
    c.setTimer(999, () => { short = base.now(); });
    base.advance(1000);
    expect(short).toBe(10_998);
    let fine = -1;
    c.setTimer(100.1, () => { fine = base.now(); });
    base.advance(200);
    expect(fine).toBeCloseTo(11_000 + 100.1 / 1.001, 6);
  });

  it('timers of differently skewed processes fire in one deterministic order', () => {
    const run = (): string[] => {
      const base = new ManualClock(0);
      const skews = new ClockSkews(base, new Prng(7), { maxOffsetMs: 2000, maxDriftPpm: 100 });
      const order: string[] = [];
      for (const name of ['cc', 'nc a', 'hv a', 'nc b']) skews.of(name).setTimer(5000, () => order.push(name));
      base.advance(6000);
      return order;
    };
    expect(run()).toHaveLength(4);
    expect(run()).toEqual(run());
  });
});

describe('ClockSkews', () => {
  it('draws each process clock once from the seed, within the bounds, and keeps it across uses', () => {
    const base = new ManualClock(0);
    const skews = new ClockSkews(base, new Prng(1), { maxOffsetMs: 2000, maxDriftPpm: 0 });
    const cc = skews.of('cc');
    expect(skews.of('cc')).toBe(cc);
    for (const name of ['nc a', 'hv a']) skews.of(name);
    for (const ms of skews.skews().values()) expect(Math.abs(ms)).toBeLessThanOrEqual(2000);
    skews.step('nc a', -90_000);
    expect(skews.skews().get('nc a')).toBeLessThanOrEqual(-88_000);
    const none = new ClockSkews(base, new Prng(1), { maxOffsetMs: 0, maxDriftPpm: 0 });
    expect(none.of('cc').now()).toBe(base.now());
  });
});
