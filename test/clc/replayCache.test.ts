/** The replay cache: refuses a signature seen before, forgets it after its window, and refuses (never evicts) when full. */
import { describe, expect, it } from 'vitest';
import { ReplayCache } from '../../clc/api/replayCache.js';

describe('ReplayCache', () => {
  const steps: [string, number, number, string][] = [
    // [signature, forgetAfter, now, verdict]
    ['a', 100, 0, 'recorded'],
    ['a', 100, 50, 'replayed'],
    ['a', 100, 100, 'replayed'],
    ['b', 120, 60, 'recorded'],
    ['c', 130, 70, 'full'], // two live entries fill a cache of two: refused, not evicted
    ['a', 200, 101, 'recorded'], // a's window is over: a signature that old would be refused as expired anyway
    ['c', 130, 121, 'recorded'], // b's window passed, so pruning makes room
    ['b', 300, 122, 'full'], // a and c still live
  ];

  it('follows the table', () => {
    const cache = new ReplayCache(2);
    for (const [sig, forgetAfter, now, verdict] of steps) expect([sig, now, cache.check(sig, forgetAfter, now)]).toEqual([sig, now, verdict]);
    expect(cache.size).toBeLessThanOrEqual(2);
  });
});
