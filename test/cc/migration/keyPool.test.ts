import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PemKeyPair } from '../../../cc/migration/credentialIssuer.js';
import { KeyPool } from '../../../cc/migration/keyPool.js';
import { ManualClock } from '../../../shared/clock.js';

/** A generator that numbers its pairs, each resolved when the test says (or at once). */
function numbered(opts: { failAt?: number } = {}) {
  let n = 0;
  const made: string[] = [];
  const generate = async (): Promise<PemKeyPair> => {
    const k = n++;
    await Promise.resolve();
    if (k === opts.failAt) throw new Error(`generation ${k} failed`);
    made.push(`key-${k}`);
    return { publicKey: `pub-${k}`, privateKey: `key-${k}` };
  };
  return { generate, made, count: () => n };
}

describe('KeyPool', () => {
  it('fills to its size in the background and hands out ready pairs, refilling behind them', async () => {
    const g = numbered();
    const pool = new KeyPool({ generate: g.generate, size: 3 });
    pool.start();
    await pool.filled();
    expect(pool.size()).toBe(3);
    expect((await pool.take()).privateKey).toBe('key-0');
    await pool.filled();
    expect(pool.size()).toBe(3);
    expect(g.count()).toBe(4);
    await pool.stop();
    expect(pool.size()).toBe(0);
  });

  it('makes a pair on demand when empty instead of waiting for the queue', async () => {
    const g = numbered();
    const pool = new KeyPool({ generate: g.generate, size: 0 });
    pool.start();
    const a = await pool.take();
    const b = await pool.take();
    expect(a.privateKey).not.toBe(b.privateKey);
    expect(pool.size()).toBe(0);
  });

  it('a failed background generation is reported, and takes still get fresh pairs', async () => {
    const g = numbered({ failAt: 1 });
    const errors: unknown[] = [];
    const pool = new KeyPool({ generate: g.generate, size: 2, onError: (e) => errors.push(e) });
    pool.start();
    await pool.filled();
    expect(errors).toHaveLength(1);
    expect(pool.size()).toBe(1);
    const got = [await pool.take(), await pool.take(), await pool.take()].map((p) => p.privateKey);
    expect(new Set(got).size).toBe(3);
  });

  it('never hands out the same pair twice, whatever the interleaving of takes and fills', async () => {
    await fc.assert(fc.asyncProperty(fc.integer({ min: 0, max: 6 }), fc.array(fc.boolean(), { maxLength: 30 }), async (size, steps) => {
      const g = numbered();
      const pool = new KeyPool({ generate: g.generate, size });
      pool.start();
      const taken: Promise<PemKeyPair>[] = [];
      for (const waitForFill of steps) {
        if (waitForFill) await pool.filled();
        taken.push(pool.take());
      }
      const keys = (await Promise.all(taken)).map((p) => p.privateKey);
      await pool.stop();
      expect(new Set(keys).size).toBe(keys.length);
    }));
  });

  it('with a refill delay, refills only once no pair was taken for that long', async () => {
    const g = numbered();
    const clock = new ManualClock(0);
    const pool = new KeyPool({ generate: g.generate, size: 2, refillDelayMs: 1000, clock });
    pool.start();
    await pool.filled();
    expect(g.count()).toBe(2);
    await pool.take();
    clock.advance(600);
    await pool.take();
    clock.advance(600); // 600 ms after the last take: still quiet time to wait
    await pool.filled();
    expect(pool.size()).toBe(0);
    expect(g.count()).toBe(2);
    const onDemand = await pool.take(); // empty: made now, never waits for the delay
    expect(onDemand.privateKey).toBe('key-2');
    clock.advance(1000);
    await pool.filled();
    expect(pool.size()).toBe(2);
    await pool.stop();
  });

  it('stop cancels a pending quiet refill', async () => {
    const g = numbered();
    const clock = new ManualClock(0);
    const pool = new KeyPool({ generate: g.generate, size: 1, refillDelayMs: 1000, clock });
    pool.start();
    await pool.filled();
    await pool.take();
    await pool.stop();
    clock.advance(5000);
    await pool.filled();
    expect(g.count()).toBe(1);
  });
});
