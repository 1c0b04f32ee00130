/** Suspending HA automation (clc/ha/suspension.ts): scope, expiry, and how it combines with the storm verdict. */
import { describe, expect, it } from 'vitest';
import { step } from '../../../clc/ha/hostHaMachine.js';
import { activeSuspension, remediationFor, suspensionsSchema, type Suspension } from '../../../clc/ha/suspension.js';
import { ALLOWED, SETTINGS, STORM, actions, inState } from './haFixtures.js';

const s = (until: number | null, reason = 'firmware upgrade'): Suspension => ({ until, reason, by: 'admin' });
const scope = { host: '127.0.1.1', partition: 'p1' };

describe('activeSuspension', () => {
  const rows: [string, Record<string, Suspension>, number, string | undefined][] = [
    ['none', {}, 10, undefined],
    ['the host, until lifted', { 'host:127.0.1.1': s(null) }, 10, 'host:127.0.1.1'],
    ['another host does not count', { 'host:127.0.1.2': s(null) }, 10, undefined],
    ['the partition', { 'partition:p1': s(100) }, 10, 'partition:p1'],
    ['the cluster (= the partition by default)', { 'cluster:p1': s(100) }, 10, 'cluster:p1'],
    ['expired', { 'partition:p1': s(100) }, 100, undefined],
    ['the most specific wins', { 'partition:p1': s(null), 'host:127.0.1.1': s(50) }, 10, 'host:127.0.1.1'],
    ['an expired host suspension falls back to a live partition one', { 'partition:p1': s(null), 'host:127.0.1.1': s(5) }, 10, 'partition:p1'],
  ];
  it.each(rows)('%s', (_name, all, now, want) => expect(activeSuspension(all, scope, now)?.key).toBe(want));
});

describe('remediationFor', () => {
  it('passes the storm verdict through when nothing is suspended', () => {
    expect(remediationFor(ALLOWED, {}, scope, 0)).toEqual(ALLOWED);
    expect(remediationFor(STORM, {}, scope, 0)).toEqual(STORM);
  });

  it('holds remediation back with the reason, and keeps a storm reason too', () => {
    const r = remediationFor(STORM, { 'host:127.0.1.1': s(86_400_000) }, scope, 0);
    expect(r).toEqual({ allowed: false, reason: `automation suspended for host:127.0.1.1 by admin until 1970-01-02T00:00:00.000Z: firmware upgrade; ${STORM.allowed ? '' : STORM.reason}` });
  });

  it('a suspended host is watched but not power-cycled', () => {
    const remediation = remediationFor(ALLOWED, { 'partition:p1': s(null) }, scope, 0);
    const r = step(inState('CHECKING', { activityChecks: 2, activityFailures: 2 }), { type: 'activityResult', token: 7, outcome: 'inactive', detail: 'x' }, 1, { settings: SETTINGS, remediation });
    expect(actions(r.effects)).toEqual([]);
    expect(r.next.blocked?.reason).toMatch(/^automation suspended for partition:p1 by admin until lifted/);
  });

  it('validates stored suspensions', () => {
    expect(suspensionsSchema.safeParse({ 'host:127.0.1.1': s(null) }).success).toBe(true);
    expect(suspensionsSchema.safeParse({ 'rack:r1': s(null) }).success).toBe(false);
  });
});
