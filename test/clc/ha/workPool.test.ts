/** The bounded HA work pools (clc/ha/workPool.ts): concurrency, back-pressure, stale tasks dropped. */
import { describe, expect, it } from 'vitest';
import { WorkPool, type PoolTask } from '../../../clc/ha/workPool.js';

/** A task that runs until released. */
function gated(log: string[], name: string, stale = () => false): PoolTask & { release(): void } {
  let release = () => {};
  const done = new Promise<void>((r) => { release = r; });
  return {
    isStale: stale,
    run: async () => { log.push(`start ${name}`); await done; log.push(`end ${name}`); },
    release: () => release(),
  };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('WorkPool', () => {
  it('runs at most maxConcurrent, queues up to maxPending and refuses one more', async () => {
    const log: string[] = [];
    const pool = new WorkPool('fence', { maxConcurrent: 2, maxPending: 1 });
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => gated(log, n));
    expect([a, b, c, d].map((t) => pool.submit(t!))).toEqual(['accepted', 'accepted', 'accepted', 'full']);
    expect(pool.stats()).toMatchObject({ running: 2, pending: 1, refused: 1 });
    expect(log).toEqual(['start a', 'start b']);
    a!.release();
    await flush();
    expect(log).toEqual(['start a', 'start b', 'end a', 'start c']);
    b!.release();
    c!.release();
    await pool.idle();
    expect(pool.stats()).toEqual({ running: 0, pending: 0, completed: 3, dropped: 0, refused: 1 });
  });

  it('drops a queued task that went stale before its turn, without running it', async () => {
    const log: string[] = [];
    let stale = false;
    const pool = new WorkPool('health', { maxConcurrent: 1, maxPending: 5 });
    const a = gated(log, 'a');
    const b = gated(log, 'b', () => stale);
    const c = gated(log, 'c');
    pool.submit(a);
    pool.submit(b);
    pool.submit(c);
    stale = true;
    a.release();
    await flush();
    expect(log).toEqual(['start a', 'end a', 'start c']);
    c.release();
    await pool.idle();
    expect(pool.stats()).toMatchObject({ completed: 2, dropped: 1 });
  });

  it('does not start a task that is already stale when submitted', async () => {
    const log: string[] = [];
    const pool = new WorkPool('activity', { maxConcurrent: 1, maxPending: 1 });
    expect(pool.submit(gated(log, 'a', () => true))).toBe('accepted');
    await pool.idle();
    expect(log).toEqual([]);
    expect(pool.stats().dropped).toBe(1);
  });

  it('keeps going after a task fails', async () => {
    const pool = new WorkPool('recovery', { maxConcurrent: 1, maxPending: 1 });
    const log: string[] = [];
    pool.submit({ isStale: () => false, run: () => Promise.reject(new Error('boom')) });
    pool.submit({ isStale: () => false, run: async () => { log.push('second'); } });
    await pool.idle();
    expect(log).toEqual(['second']);
  });
});
