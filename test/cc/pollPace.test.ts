import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_POLLS_IN_FLIGHT, MIN_POLL_BATCH, POLL_STEP_MS, pollPace, spreadMs } from '../../cc/pollPace.js';

describe('pollPace', () => {
  it.each([
    // hosts, interval: batch, last batch sent at (ms after the round's start)
    [2, 5000, MIN_POLL_BATCH, 0],
    [16, 5000, 16, 0],
    [17, 5000, 16, 50],
    [2000, 10_000, 20, 4950],
    [10_000, 10_000, 100, 4950],
    [10_000, 5000, 200, 2450],
    [100, 60, 100, 0],
  ])('%i hosts at a %i ms interval: %i per step, the last at +%i ms', (hosts, interval, batch, last) => {
    const pace = pollPace(hosts, interval);
    expect(pace).toEqual({ batch, stepMs: POLL_STEP_MS, maxInFlight: MAX_POLLS_IN_FLIGHT });
    expect(spreadMs(hosts, pace)).toBe(last);
  });

  it('every host is sent within half the interval, in batches of at least MIN_POLL_BATCH', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 100, max: 600_000 }), (hosts, interval) => {
      const pace = pollPace(hosts, interval);
      expect(pace.batch).toBeGreaterThanOrEqual(MIN_POLL_BATCH);
      expect(spreadMs(hosts, pace)).toBeLessThanOrEqual(interval / 2);
    }));
  });
});
