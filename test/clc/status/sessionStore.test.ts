/** The status page's session store and per-source login limit, on a manual clock. */
import { describe, expect, it } from 'vitest';
import { LoginLimiter } from '../../../clc/status/loginLimiter.js';
import { SESSION_TTL_MS, SessionStore } from '../../../clc/status/sessionStore.js';
import { adminLoginCheck } from '../../../clc/status/statusAuth.js';
import { ManualClock } from '../../../shared/clock.js';

const counter = (): (() => string) => {
  let n = 0;
  return () => `s${++n}`;
};

describe('SessionStore', () => {
  it('finds a session until its expiry, not at or after it', () => {
    const clock = new ManualClock(1000);
    const store = new SessionStore({ clock });
    const s = store.create('AKIAADMIN');
    expect(s.expiresAt).toBe(1000 + SESSION_TTL_MS);
    expect(s.id).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes, base64url
    expect(store.find(s.id)?.accessKeyId).toBe('AKIAADMIN');
    clock.advance(SESSION_TTL_MS - 1);
    expect(store.find(s.id)).toBeDefined();
    clock.advance(1);
    expect(store.find(s.id)).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('gives every login its own id', () => {
    const store = new SessionStore({ clock: new ManualClock() });
    const ids = new Set(Array.from({ length: 100 }, () => store.create('k').id));
    expect(ids.size).toBe(100);
  });

  it('ends a session at logout, and only that one', () => {
    const store = new SessionStore({ clock: new ManualClock(), newId: counter() });
    const a = store.create('k');
    const b = store.create('k');
    expect(store.end(a.id)).toBe(true);
    expect(store.end(a.id)).toBe(false);
    expect(store.find(a.id)).toBeUndefined();
    expect(store.find(b.id)).toBeDefined();
  });

  it.each([undefined, '', 'nope'])('finds nothing for %j', (id) => {
    const store = new SessionStore({ clock: new ManualClock(), newId: counter() });
    store.create('k');
    expect(store.find(id)).toBeUndefined();
  });

  it('stays within its bound: the oldest session ends first', () => {
    const clock = new ManualClock();
    const store = new SessionStore({ clock, maxSessions: 3, newId: counter() });
    const ids = Array.from({ length: 5 }, () => store.create('k').id);
    expect(store.size).toBe(3);
    expect(ids.map((id) => store.find(id) !== undefined)).toEqual([false, false, true, true, true]);
  });

  it('sweeps expired sessions at the next login', () => {
    const clock = new ManualClock();
    const store = new SessionStore({ clock, ttlMs: 10, newId: counter() });
    store.create('k');
    store.create('k');
    clock.advance(10);
    store.create('k');
    expect(store.size).toBe(1);
  });
});

describe('LoginLimiter', () => {
  it('refuses a source after its failures in a window, until the window ends', () => {
    const clock = new ManualClock();
    const limiter = new LoginLimiter({ clock, maxFailures: 3, windowMs: 60_000 });
    for (let k = 0; k < 3; k++) {
      expect(limiter.retryAfterMs('127.0.78.9')).toBe(0);
      limiter.failed('127.0.78.9');
      clock.advance(1000);
    }
    expect(limiter.retryAfterMs('127.0.78.9')).toBe(57_000);
    clock.advance(56_999);
    expect(limiter.retryAfterMs('127.0.78.9')).toBe(1);
    clock.advance(1);
    expect(limiter.retryAfterMs('127.0.78.9')).toBe(0);
  });

  it('never limits another source: a guesser does not lock the administrator out', () => {
    const clock = new ManualClock();
    const limiter = new LoginLimiter({ clock, maxFailures: 2 });
    for (let k = 0; k < 10; k++) limiter.failed('127.0.78.66');
    expect(limiter.retryAfterMs('127.0.78.66')).toBeGreaterThan(0);
    expect(limiter.retryAfterMs('127.0.78.5')).toBe(0);
  });

  it('clears a source at its success', () => {
    const limiter = new LoginLimiter({ clock: new ManualClock(), maxFailures: 2 });
    limiter.failed('a');
    limiter.succeeded('a');
    limiter.failed('a');
    expect(limiter.retryAfterMs('a')).toBe(0);
  });

  it('keeps a bounded table: a flood of sources forgets the oldest, and a new source is never refused', () => {
    const clock = new ManualClock();
    const limiter = new LoginLimiter({ clock, maxFailures: 1, maxSources: 100 });
    for (let k = 0; k < 1000; k++) limiter.failed(`10.${k}`);
    expect(limiter.sources).toBe(100);
    expect(limiter.retryAfterMs('10.0')).toBe(0);
    expect(limiter.retryAfterMs('10.999')).toBeGreaterThan(0);
    expect(limiter.retryAfterMs('127.0.78.5')).toBe(0);
  });
});

describe('adminLoginCheck', () => {
  const check = adminLoginCheck({ accessKey: 'AKIAEXAMPLE', secretKey: 'wJalrXUtnFEMI/K7MDENG' });
  it.each([
    ['AKIAEXAMPLE', 'wJalrXUtnFEMI/K7MDENG', true],
    ['AKIAEXAMPLE', 'wJalrXUtnFEMI/K7MDENH', false],
    ['AKIAEXAMPLE', 'wJalrXUtnFEMI/K7MDEN', false],
    ['AKIAEXAMPLE', '', false],
    ['AKIAOTHER', 'wJalrXUtnFEMI/K7MDENG', false],
    ['akiaexample', 'wJalrXUtnFEMI/K7MDENG', false],
  ])('%s / %s → %s', (key, secret, ok) => {
    expect(check(key, secret)).toBe(ok);
  });
});
