/** The HA dry run (clc/ha/haDryRun.ts): one forecast per state, held work and work in flight. */
import { describe, expect, it } from 'vitest';
import { forecast } from '../../../clc/ha/haDryRun.js';
import { HA_STATES, type HaState, type HostHaRecord } from '../../../clc/ha/hostHaState.js';
import { SETTINGS, STORM, ctx, inState, owedDue } from './haFixtures.js';

describe('forecast', () => {
  const rows: [string, HostHaRecord, RegExp, number | null, boolean][] = [
    ['DISABLED', inState('DISABLED'), /HA is disabled/, null, true],
    ['INELIGIBLE', inState('INELIGIBLE', { reason: 'no power management configured' }), /until the host is eligible again \(no power management configured\)/, null, false],
    ['AVAILABLE', inState('AVAILABLE', { nextHealthCheckAt: 40 }), /^check health/, 40, false],
    ['SUSPECT', inState('SUSPECT', { activityChecks: 1, nextActivityCheckAt: 9 }), /^activity check 2 of 3 \(2 to go/, 9, false],
    ['CHECKING (in flight)', inState('CHECKING'), /^wait for the activity in flight \(token 7\)/, SETTINGS.activityCheckTimeoutMs, false],
    ['DEGRADED', inState('DEGRADED', { since: 10 }), /^re-check activity/, 10 + SETTINGS.degradedMaxPeriodMs, false],
    ['RECOVERING (in flight)', inState('RECOVERING'), /^wait for the recover in flight/, SETTINGS.recoverTimeoutMs, false],
    ['RECOVERED at the threshold', inState('RECOVERED', { since: 5 }), /^fence unless a health check passes/, 5 + SETTINGS.recoverWaitPeriodMs, false],
    ['RECOVERED under the threshold', inState('RECOVERED', { since: 5, recoveryAttempts: 0 }), /^power-cycle again unless/, 5 + SETTINGS.recoverWaitPeriodMs, false],
    ['REMEDIATING (in flight)', inState('REMEDIATING'), /^wait for external remediation 7-0 \(not yet accepted\) to report done/, SETTINGS.externalRemediationTimeoutMs, false],
    ['REMEDIATING (escalation held)', inState('REMEDIATING', { operation: null, remediation: null }), /^fence once the storm guard allows it/, null, false],
    ['RECOVERED after an external remediation', inState('RECOVERED', { since: 5, recoveryAttempts: 0, remediationAttempts: 1 }), /^fence unless a health check passes/, 5 + SETTINGS.recoverWaitPeriodMs, false],
    ['FENCING (in flight)', inState('FENCING'), /^wait for the fence in flight/, SETTINGS.fenceTimeoutMs, false],
    ['FENCING (needs an operator)', inState('FENCING', { operation: null, needsOperator: true }), /ConfirmHostFenced, or retry FenceHost/, null, true],
    ['FENCED', inState('FENCED'), /stays fenced until it is cleaned and enabled again/, null, true],
  ];
  it.each(rows)('%s', (_name, rec, next, when, operator) => {
    const f = forecast(rec, ctx(), 1);
    expect(f.next).toMatch(next);
    expect(f.at).toBe(when);
    expect(f.waitsForOperator).toBe(operator);
  });

  it('covers every state', () => {
    const covered = new Set<HaState>(rows.map(([, rec]) => rec.state));
    expect(HA_STATES.filter((s) => !covered.has(s))).toEqual([]);
  });

  it.each([
    ['a drain owed, due', inState('AVAILABLE', { owed: owedDue('drain', { nextAttemptAt: 30 }) }), /^drain \(DisableService, then MigrateInstances\), attempt 2 \(last: NC down\)/, 30, false],
    ['a drain attempt in flight', inState('INELIGIBLE', { owed: owedDue('drain', { inFlight: 12 }) }), /^wait for drain .* attempt 1 in flight/, null, false],
    ['a drain given up', inState('DEGRADED', { owed: owedDue('drain', { attempts: SETTINGS.drainMaxAttempts }) }), /gave up after 3 attempts/, null, true],
    ['a restart elsewhere owed', inState('FENCED', { owed: owedDue('evacuate') }), /^restart of its instances elsewhere, attempt 2/, 1, false],
  ] as [string, HostHaRecord, RegExp, number | null, boolean][])('owed repairs: %s', (_name, rec, next, when, operator) => {
    const f = forecast(rec, ctx(), 1);
    expect(f.next).toMatch(next);
    expect(f.at).toBe(when);
    expect(f.waitsForOperator).toBe(operator);
  });

  it('held work says why, or that it starts at the next tick once allowed', () => {
    const held = inState('CHECKING', { operation: null, blocked: { target: 'RECOVERING', reason: 'x', since: 0 } });
    expect(forecast(held, ctx(STORM), 3).next).toBe(`hold RECOVERING: ${STORM.allowed ? '' : STORM.reason}`);
    expect(forecast(held, ctx(), 3)).toMatchObject({ next: expect.stringMatching(/^start RECOVERING at the next tick/), at: 3 });
  });
});
