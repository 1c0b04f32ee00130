import { describe, expect, it } from 'vitest';
import { OTHER_PEERS, WarningDigest } from '../../shared/warningDigest.js';

describe('WarningDigest', () => {
  it('writes the first of a window, counts the rest, and sums them up when the window ends', () => {
    const d = new WarningDigest({ windowMs: 1000, maxKeys: 8 });
    expect(d.note('AuthFailure', 'p', 0).write).toBe(true);
    expect(d.note('AuthFailure', 'p', 10).write).toBe(false);
    expect(d.note('AuthFailure', 'p', 999).write).toBe(false);
    expect(d.note('AuthFailure', 'q', 500).write).toBe(true);
    expect(d.note('Other', 'p', 500).write).toBe(true);
    expect(d.nextDueAt()).toBe(1000);
    expect(d.due(999)).toEqual([]);
    // q and Other counted nothing after their first: no summary for them.
    expect(d.due(1500)).toEqual([{ code: 'AuthFailure', peer: 'p', repeats: 2, from: 0, last: 999 }]);
    expect(d.nextDueAt()).toBeUndefined();
  });

  it('opens a new window after one ended, handing over the summary of the old one', () => {
    const d = new WarningDigest({ windowMs: 1000, maxKeys: 8 });
    d.note('C', 'p', 0);
    d.note('C', 'p', 1);
    const step = d.note('C', 'p', 1000);
    expect(step.write).toBe(true);
    expect(step.summaries).toEqual([{ code: 'C', peer: 'p', repeats: 1, from: 0, last: 1 }]);
    expect(d.note('C', 'p', 1001).write).toBe(false);
  });

  it('past maxKeys, new peers share one window per code: varying the address adds no lines', () => {
    const d = new WarningDigest({ windowMs: 1000, maxKeys: 2 });
    const written = Array.from({ length: 500 }, (_, i) => d.note('AuthFailure', `127.0.${i >> 8}.${i & 255}`, i)).filter((s) => s.write);
    expect(written.map((s) => s.peer)).toEqual(['127.0.0.0', '127.0.0.1', OTHER_PEERS]);
    expect(d.closeAll()).toEqual([{ code: 'AuthFailure', peer: OTHER_PEERS, repeats: 497, from: 2, last: 499 }]);
  });

  it('closeAll gives every count still open', () => {
    const d = new WarningDigest({ windowMs: 60_000, maxKeys: 8 });
    for (let i = 0; i < 5; i++) d.note('A', 'p', i);
    d.note('B', 'p', 3);
    expect(d.closeAll()).toEqual([{ code: 'A', peer: 'p', repeats: 4, from: 0, last: 4 }]);
    expect(d.nextDueAt()).toBeUndefined();
  });
});
