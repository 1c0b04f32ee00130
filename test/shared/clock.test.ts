import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.js';

describe('ManualClock', () => {
  it('fires timers in time order, ties in creation order, with now() at the due time', () => {
    const c = new ManualClock(1000);
    const seen: string[] = [];
    c.setTimer(50, () => seen.push(`b@${c.now()}`));
    c.setTimer(10, () => seen.push(`a@${c.now()}`));
    c.setTimer(50, () => seen.push(`c@${c.now()}`));
    const cancelled = c.setTimer(20, () => seen.push('never'));
    cancelled.cancel();
    c.advance(49);
    expect(seen).toEqual(['a@1010']);
    c.advance(1);
    expect(seen).toEqual(['a@1010', 'b@1050', 'c@1050']);
    expect(c.now()).toBe(1050);
  });

  it('fires timers scheduled by timers within the same advance', () => {
    const c = new ManualClock();
    let fired = 0;
    const tick = (): void => { fired++; if (fired < 5) c.setTimer(10, tick); };
    c.setTimer(10, tick);
    c.advance(100);
    expect(fired).toBe(5);
    expect(c.pendingTimers()).toBe(0);
  });

  it('says when the next live timer is due (the simulator steps to it)', () => {
    const c = new ManualClock(100);
    expect(c.nextTimerAt()).toBeUndefined();
    const early = c.setTimer(5, () => undefined);
    c.setTimer(20, () => undefined);
    expect(c.nextTimerAt()).toBe(105);
    early.cancel();
    expect(c.nextTimerAt()).toBe(120);
    c.advance(20);
    expect(c.nextTimerAt()).toBeUndefined();
  });
});
