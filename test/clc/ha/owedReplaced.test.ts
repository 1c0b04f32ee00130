/**
 * One repair attempt at a time, also when one debt replaces another (found by the machine's property
 * test): a host that becomes DEGRADED while a power-on attempt still runs owes a drain, whose first
 * attempt waits for the power-on attempt to settle.
 */
import { describe, expect, it } from 'vitest';
import { step } from '../../../clc/ha/hostHaMachine.js';
import { SETTINGS, actions, ctx, inState } from './haFixtures.js';

describe('a debt replaced while an attempt of the old one runs', () => {
  it('the drain owed on entering DEGRADED starts only after the power-on attempt in flight settled', () => {
    const powerOnRunning = { kind: 'powerOn' as const, since: 0, attempts: 1, nextAttemptAt: 0, inFlight: 7, lastOutcome: null };
    const checking = inState('CHECKING', {
      seq: 10, owed: powerOnRunning, activityChecks: SETTINGS.activityCheckMaxAttempts - 1, activityFailures: 0,
      operation: { kind: 'activity', token: 9, startedAt: 0, deadline: 1e9 },
    });
    const degraded = step(checking, { type: 'activityResult', token: 9, outcome: 'active', detail: 'writes seen' }, 1, ctx());
    expect(degraded.next.state).toBe('DEGRADED');
    expect(degraded.next.owed).toMatchObject({ kind: 'drain', attempts: 0, inFlight: 7 });
    expect(actions(degraded.effects)).not.toContain('drain');
    // Nothing starts while the power-on attempt runs.
    expect(actions(step(degraded.next, { type: 'tick' }, 2, ctx()).effects)).not.toContain('drain');
    // Its result frees the way (it is not the drain's outcome: the debt stays, unattempted) ...
    const settled = step(degraded.next, { type: 'repairResult', token: 7, done: true, detail: 'powered on' }, 3, ctx());
    expect(settled.next.owed).toMatchObject({ kind: 'drain', attempts: 0, inFlight: null });
    // ... and the next tick starts the drain's first attempt.
    const started = step(settled.next, { type: 'tick' }, 4, ctx());
    expect(actions(started.effects)).toContain('drain');
    expect(started.next.owed).toMatchObject({ kind: 'drain', attempts: 1 });
  });
});
