import { describe, expect, it } from 'vitest';
import { NextCall } from '../../shared/nextCall.js';

/** A call whose answers are released by hand, numbered by when they were sent. */
function calls() {
  const pending: { n: number; release: (fail?: boolean) => void }[] = [];
  let sent = 0;
  const next = new NextCall<number>(() => {
    const n = ++sent;
    return new Promise<number>((resolve, reject) => {
      pending.push({ n, release: (fail = false) => (fail ? reject(new Error(`call ${n} failed`)) : resolve(n)) });
    });
  });
  return { next, pending, sent: () => sent };
}
const turns = async () => { for (let i = 0; i < 10; i++) await Promise.resolve(); };

describe('NextCall', () => {
  it('a caller while a call is in flight joins the one sent after it, with every other such caller', async () => {
    const c = calls();
    const first = c.next.call();
    const later = [c.next.call(), c.next.call(), c.next.call()];
    expect(c.sent()).toBe(1);
    c.pending[0]!.release();
    expect(await first).toBe(1);
    await turns();
    expect(c.sent()).toBe(2);
    c.pending[1]!.release();
    expect(await Promise.all(later)).toEqual([2, 2, 2]);
  });

  it('a failed call in flight still lets the callers behind it have their own call; its failure reaches only its callers', async () => {
    const c = calls();
    const first = c.next.call();
    const later = c.next.call();
    c.pending[0]!.release(true);
    await expect(first).rejects.toThrow('call 1 failed');
    await turns();
    c.pending[1]!.release();
    expect(await later).toBe(2);
  });

  it('a caller after everything settled starts a new call', async () => {
    const c = calls();
    const a = c.next.call();
    c.pending[0]!.release();
    await a;
    const b = c.next.call();
    expect(c.sent()).toBe(2);
    c.pending[1]!.release();
    expect(await b).toBe(2);
  });
});
