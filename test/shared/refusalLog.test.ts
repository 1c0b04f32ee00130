import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ManualClock } from '../../shared/clock.js';
import { RefusalLog, refusalLevelOf } from '../../shared/refusalLog.js';

function capture(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, { write: (s: string) => { lines.push(JSON.parse(s) as Record<string, unknown>); } });
  return { logger, lines };
}

describe('RefusalLog', () => {
  it('logs the first refusal in full and the count of the rest when the window ends, on the clock', () => {
    const clock = new ManualClock(1_000_000);
    const { logger, lines } = capture();
    const log = new RefusalLog({ logger, clock, digest: { windowMs: 60_000, maxKeys: 8 } });
    for (let i = 0; i < 1000; i++) {
      log.record({ level: 'warn', code: 'AuthFailure', peer: '127.0.0.1', msg: 'request failed', fields: { requestId: `r${i}` } });
      clock.advance(10);
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, code: 'AuthFailure', peer: '127.0.0.1', requestId: 'r0', msg: 'request failed' });
    clock.advance(60_000);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: 40, code: 'AuthFailure', peer: '127.0.0.1', repeats: 999 });
    expect(lines[1]?.msg).toMatch(/^request failed: 999 more AuthFailure from 127\.0\.0\.1/);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('writes what is still counted at close(), and nothing below the logger\'s level', () => {
    const clock = new ManualClock(0);
    const { logger, lines } = capture('info');
    const log = new RefusalLog({ logger, clock });
    for (let i = 0; i < 3; i++) log.record({ level: 'warn', code: 'PeerNotAuthorized', peer: 'nc 127.0.1.1', msg: 'call refused' });
    for (let i = 0; i < 3; i++) log.record({ level: 'debug', code: 'InvalidParameter', peer: 'clc 127.0.0.1', msg: 'call refused' });
    log.close();
    expect(lines.map((x) => [x.code, x.repeats])).toEqual([['PeerNotAuthorized', undefined], ['PeerNotAuthorized', 2]]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it.each([
    [{ status: 401, clientFault: true }, 'warn'],
    [{ status: 403, clientFault: true }, 'warn'],
    [{ status: 400, clientFault: true }, 'debug'],
    [{ status: 503, clientFault: false }, 'warn'],
    [{ status: 500, clientFault: false }, 'error'],
  ] as const)('refusalLevelOf(%o) is %s', (err, level) => {
    expect(refusalLevelOf(err)).toBe(level);
  });
});
