/**
 * External remediation in the host-HA machine (issue 15, Cluster API's external remediation and
 * Medik8s' escalation), table-driven: with strategy external the episode's first remediation hands
 * the host out (REMEDIATING) behind the same storm gate as a power cycle or fence; done means the
 * health check decides (RECOVERED); failed, timed out or not healthy after it escalates to a fence.
 */
import { describe, expect, it } from 'vitest';
import { IllegalHaEventError, step, type HaContext } from '../../../clc/ha/hostHaMachine.js';
import type { HaEvent, HaState, HostHaRecord } from '../../../clc/ha/hostHaState.js';
import { judgeStorm } from '../../../clc/ha/stormGuard.js';
import { remediationFor } from '../../../clc/ha/suspension.js';
import { ALLOWED, OP, PROBE, REM_ID, SETTINGS, STORM, actions, ctx, extCtx, inState } from './haFixtures.js';

const ev = {
  tick: { type: 'tick' } as HaEvent,
  inactive: { type: 'activityResult', token: OP, outcome: 'inactive', detail: 'no writes' } as HaEvent,
  result: (outcome: 'accepted' | 'done' | 'failed', token = OP): HaEvent => ({ type: 'remediationResult', token, outcome, detail: outcome === 'failed' ? 'exit 3' : 'ok' }),
  report: (result: 'succeeded' | 'failed', id = REM_ID): HaEvent => ({ type: 'remediationReported', id, result, message: 'rebuilt', operator: 'remediator' }),
  healthy: { type: 'healthResult', token: PROBE, outcome: 'healthy', detail: 'NC answers' } as HaEvent,
  fenceHost: { type: 'fenceRequested', operator: 'admin' } as HaEvent,
  disabled: { type: 'haDisabled', reason: 'DisableHAForHost' } as HaEvent,
};

/** CHECKING at its last sample, whose next "no activity" decides a remediation. */
const deciding = (patch: Partial<HostHaRecord> = {}) => inState('CHECKING', { activityChecks: 2, activityFailures: 2, ...patch });
const SUSPENDED: HaContext = { ...extCtx(remediationFor(ALLOWED, { 'host:h1': { until: null, reason: 'firmware work', by: 'op' } }, { host: 'h1', partition: 'p1' }, 1)) };

interface Row {
  readonly name: string;
  readonly from: HostHaRecord;
  readonly event: HaEvent;
  readonly ctx: HaContext;
  readonly now?: number;
  readonly to: HaState | 'ignored';
  readonly does?: readonly string[];
  readonly check?: (n: HostHaRecord) => void;
}

const rows: Row[] = [
  // Handed out where a power cycle or fence would start.
  { name: 'CHECKING + no activity, strategy external: handed out, not power-cycled', from: deciding(), event: ev.inactive, ctx: extCtx(), now: 5, to: 'REMEDIATING', does: ['externalRemediation'],
    check: (n) => {
      expect(n.remediation).toEqual({ id: '11-5', since: 5, accepted: false });
      expect(n.operation).toEqual({ kind: 'remediate', token: 11, startedAt: 5, deadline: 5 + SETTINGS.externalRemediationTimeoutMs });
      expect([n.remediationAttempts, n.recoveryAttempts, n.fenceAttempts]).toEqual([1, 0, 0]);
    } },
  { name: 'CHECKING + no activity, strategy external at recover threshold 0: still handed out first', from: deciding(), event: ev.inactive,
    ctx: extCtx(ALLOWED, { ...SETTINGS, recoverFailureThreshold: 0 }), to: 'REMEDIATING', does: ['externalRemediation'] },
  { name: 'CHECKING + no activity, strategy fence: a power cycle as before', from: deciding(), event: ev.inactive, ctx: ctx(), to: 'RECOVERING', does: ['recover'] },
  { name: 'CHECKING + no activity, external, storm: held exactly like a fence', from: deciding(), event: ev.inactive, ctx: extCtx(STORM), to: 'CHECKING', does: [],
    check: (n) => { expect(n.blocked).toMatchObject({ target: 'REMEDIATING', reason: STORM.allowed ? '' : STORM.reason }); expect(n.remediation).toBeNull(); expect(n.remediationAttempts).toBe(0); } },
  { name: 'CHECKING + no activity, external, suspended: held with the suspension\'s reason', from: deciding(), event: ev.inactive, ctx: SUSPENDED, to: 'CHECKING', does: [],
    check: (n) => expect(n.blocked?.reason).toMatch(/^automation suspended for host:h1 by op/) },
  { name: 'CHECKING (held) + tick, storm over: handed out', from: deciding({ operation: null, health: null, blocked: { target: 'REMEDIATING', reason: 'x', since: 0 } }), event: ev.tick,
    ctx: extCtx(), now: 3, to: 'REMEDIATING', does: ['externalRemediation'] },
  { name: 'CHECKING (held) + tick, storm goes on: nothing', from: deciding({ operation: null, health: null, blocked: { target: 'REMEDIATING', reason: STORM.allowed ? '' : STORM.reason, since: 0 } }),
    event: ev.tick, ctx: extCtx(STORM), now: 3, to: 'ignored' },
  // The remediator answers.
  { name: 'REMEDIATING + accepted: waits, marked accepted', from: inState('REMEDIATING'), event: ev.result('accepted'), ctx: extCtx(), to: 'REMEDIATING', does: [],
    check: (n) => { expect(n.remediation).toEqual({ id: REM_ID, since: 0, accepted: true }); expect(n.operation?.token).toBe(OP); } },
  { name: 'REMEDIATING + done (the command exited 0): RECOVERED, health checked now', from: inState('REMEDIATING'), event: ev.result('done'), ctx: extCtx(), now: 9, to: 'RECOVERED', does: [],
    check: (n) => { expect(n.nextHealthCheckAt).toBe(9); expect(n.remediation).toBeNull(); expect(n.operation).toBeNull(); expect(n.remediationAttempts).toBe(1); } },
  { name: 'REMEDIATING + failed: escalated to a fence', from: inState('REMEDIATING'), event: ev.result('failed'), ctx: extCtx(), to: 'FENCING', does: ['disableHost', 'fence'],
    check: (n) => expect(n.reason).toBe('external remediation failed: exit 3') },
  { name: 'REMEDIATING + failed during a storm: the fence held', from: inState('REMEDIATING'), event: ev.result('failed'), ctx: extCtx(STORM), to: 'REMEDIATING', does: [],
    check: (n) => { expect(n.blocked?.target).toBe('FENCING'); expect(n.remediation).toBeNull(); } },
  { name: 'REMEDIATING + a stale result', from: inState('REMEDIATING'), event: ev.result('failed', OP - 1), ctx: extCtx(), to: 'ignored' },
  // CompleteHostRemediation.
  { name: 'REMEDIATING + reported succeeded with its id: RECOVERED', from: inState('REMEDIATING', { remediation: { id: REM_ID, since: 0, accepted: true } }), event: ev.report('succeeded'),
    ctx: extCtx(), to: 'RECOVERED', does: [], check: (n) => expect(n.reason).toBe('CompleteHostRemediation by remediator: succeeded (rebuilt)') },
  { name: 'REMEDIATING + reported failed with its id: escalated to a fence', from: inState('REMEDIATING'), event: ev.report('failed'), ctx: extCtx(), to: 'FENCING', does: ['disableHost', 'fence'] },
  { name: 'REMEDIATING + reported failed during a storm: the fence held', from: inState('REMEDIATING'), event: ev.report('failed'), ctx: extCtx(STORM), to: 'REMEDIATING', does: [],
    check: (n) => { expect(n.blocked?.target).toBe('FENCING'); expect(n.operation).toBeNull(); } },
  // After done: the health check decides.
  { name: 'RECOVERED (after a remediation) + healthy: AVAILABLE, the episode cleared', from: inState('RECOVERED', { recoveryAttempts: 0, remediationAttempts: 1 }), event: ev.healthy,
    ctx: extCtx(), to: 'AVAILABLE', does: [], check: (n) => expect(n.remediationAttempts).toBe(0) },
  { name: 'RECOVERED (after a remediation) + recover wait over: escalated to a fence', from: inState('RECOVERED', { health: null, recoveryAttempts: 0, remediationAttempts: 1 }), event: ev.tick,
    ctx: extCtx(ALLOWED, { ...SETTINGS, recoverFailureThreshold: 5 }), now: SETTINGS.recoverWaitPeriodMs, to: 'FENCING', does: ['disableHost', 'fence'],
    check: (n) => expect(n.reason).toMatch(/escalated after 1 external remediation/) },
  { name: 'RECOVERED (after a remediation) + recover wait over, storm: the fence held', from: inState('RECOVERED', { health: null, recoveryAttempts: 0, remediationAttempts: 1 }), event: ev.tick,
    ctx: extCtx(STORM), now: SETTINGS.recoverWaitPeriodMs, to: 'RECOVERED', does: [], check: (n) => expect(n.blocked?.target).toBe('FENCING') },
  // Operators and switches.
  { name: 'REMEDIATING + FenceHost: fenced now', from: inState('REMEDIATING'), event: ev.fenceHost, ctx: extCtx(), to: 'FENCING', does: ['disableHost', 'fence'], check: (n) => expect(n.remediation).toBeNull() },
  { name: 'REMEDIATING + HA switched off: DISABLED, the remediation dropped', from: inState('REMEDIATING'), event: ev.disabled, ctx: extCtx(), to: 'DISABLED', does: [],
    check: (n) => { expect(n.remediation).toBeNull(); expect(n.remediationAttempts).toBe(0); } },
  { name: 'REMEDIATING + tick, nothing due: no health or power probe while handed out', from: inState('REMEDIATING', { nextHealthCheckAt: 0, nextPowerCheckAt: 0 }), event: ev.tick, ctx: extCtx(), now: 2, to: 'ignored' },
];

describe('external remediation: every row', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, r) => {
    const { next, effects } = step(r.from, r.event, r.now ?? 1, r.ctx);
    if (r.to === 'ignored') {
      expect(next).toEqual(r.from);
      expect(effects).toEqual([]);
      return;
    }
    expect(next.state).toBe(r.to);
    expect(actions(effects)).toEqual(r.does ?? []);
    r.check?.(next);
  });

  it('the effect names the host, the id, the reason and the deadline', () => {
    const { effects } = step(deciding(), ev.inactive, 5, extCtx());
    expect(effects.find((e) => e.kind === 'externalRemediation')).toEqual({
      kind: 'externalRemediation', host: 'h1', token: 11, id: '11-5', deadline: 5 + SETTINGS.externalRemediationTimeoutMs,
      reason: expect.stringMatching(/^3 of 3 activity checks found no activity .*; handed to external remediation$/) as unknown,
    });
  });
});

describe('CompleteHostRemediation refused: a coded refusal, nothing changes', () => {
  const cases: [string, HostHaRecord, HaEvent, string][] = [
    ['an AVAILABLE host', inState('AVAILABLE'), ev.report('succeeded'), 'notRemediating'],
    ['a FENCING host', inState('FENCING'), ev.report('failed'), 'notRemediating'],
    ['a REMEDIATING host whose remediation concluded (escalation held)', inState('REMEDIATING', { operation: null, remediation: null, blocked: { target: 'FENCING', reason: 'x', since: 0 } }), ev.report('succeeded'), 'notRemediating'],
    ['a stale id from an earlier episode', inState('REMEDIATING'), ev.report('succeeded', '3-0'), 'staleRemediation'],
  ];
  it.each(cases)('%s', (_name, rec, event, refusal) => {
    const before = structuredClone(rec);
    expect(() => step(rec, event, 1, extCtx())).toThrow(IllegalHaEventError);
    try {
      step(rec, event, 1, extCtx());
    } catch (e) {
      expect((e as IllegalHaEventError).refusal).toBe(refusal);
      expect((e as IllegalHaEventError).event).toBe('remediationReported');
    }
    expect(rec).toEqual(before);
  });
});

describe('the storm guard counts hosts being remediated externally', () => {
  it('REMEDIATING is unhealthy, like RECOVERING and FENCING', () => {
    const v = judgeStorm('p1', ['AVAILABLE', 'AVAILABLE', 'REMEDIATING', 'SUSPECT'], { kind: 'count', value: 1 });
    expect(v.unhealthy).toBe(2);
    expect(v.allowance.allowed).toBe(false);
  });
});
