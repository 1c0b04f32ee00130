/** withEtcdDeadline (shared/store/etcdDeadline.ts) on the manual clock: every outcome of one bounded etcd call. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.js';
import { withEtcdDeadline } from '../../shared/store/etcdDeadline.js';
import { StoreErrors } from '../../shared/store/errors.js';
import { codeOf } from '../helpers/codeOf.js';

const unavailable = (detail: string): Error => StoreErrors.make('StoreUnavailable', { file: 'etcd:t/', timeoutMs: 1000, detail });

function bounded<V>(clock: ManualClock, p: Promise<V>): Promise<V> {
  return withEtcdDeadline(p, { clock, timeoutMs: 1000, timedOut: () => unavailable('deadline passed'), translate: (e) => unavailable(String(e)) });
}

describe('withEtcdDeadline', () => {
  it('a call that never answers is refused with the timed-out error once the deadline passes, not before', async () => {
    const clock = new ManualClock(0);
    let settled = false;
    const p = bounded(clock, new Promise<never>(() => undefined)).finally(() => { settled = true; });
    p.catch(() => undefined);
    clock.advance(999);
    await Promise.resolve();
    expect(settled).toBe(false);
    clock.advance(1);
    const err = await p.catch((e: unknown) => e as Error);
    expect(err.message).toContain('deadline passed');
  });

  it.each([
    ['an answer in time is the value', () => Promise.resolve(7), 'no error'],
    ['a foreign failure is translated', () => Promise.reject(new Error('14 UNAVAILABLE: connection refused')), 'StoreUnavailable'],
    ['our own coded error passes unchanged', () => Promise.reject(StoreErrors.make('StoreNotLeader', { file: 'etcd:t/', leader: 'x' })), 'StoreNotLeader'],
  ])('%s', async (_name, call, code) => {
    const clock = new ManualClock(0);
    expect(await codeOf(bounded(clock, call()))).toBe(code);
    // The timer was cancelled: advancing past the deadline changes nothing.
    clock.advance(5000);
  });
});
