/**
 * The host-HA machine (clc/ha/hostHaMachine.ts), table-driven: one row per (state, event) pair,
 * whether it changes the state or is ignored. Ignored rows check the record and effects are untouched.
 */
import { describe, expect, it } from 'vitest';
import { IllegalHaEventError, activityBackoffMs, step, type RemediationAllowance } from '../../../clc/ha/hostHaMachine.js';
import { HA_STATES, type HaEvent, type HaState, type HostHaRecord } from '../../../clc/ha/hostHaState.js';
import { compileHaSettings } from '../../../clc/ha/settings.js';
import { repairBackoffMs } from '../../../clc/ha/owedRepair.js';
import { ALLOWED, OP, PROBE, REM_ID, SETTINGS, STORM, actions, ctx, inState, owedDue } from './haFixtures.js';

interface Row {
  readonly name: string;
  readonly from: HostHaRecord;
  readonly event: HaEvent;
  readonly now?: number;
  readonly remediation?: RemediationAllowance;
  readonly settings?: typeof SETTINGS;
  /** The partition's remediation strategy (default fence). */
  readonly strategy?: 'fence' | 'external';
  /** The state after, or 'ignored' (same record, no effects). */
  readonly to: HaState | 'ignored';
  /** Effect kinds other than transition/alert, in order. */
  readonly does?: readonly string[];
  readonly check?: (next: HostHaRecord) => void;
}

const ev = {
  disabled: { type: 'haDisabled', reason: 'DisableHAForHost' } as HaEvent,
  enabled: { type: 'haEnabled' } as HaEvent,
  eligible: { type: 'eligibility', eligible: true, reason: 'ok' } as HaEvent,
  ineligible: { type: 'eligibility', eligible: false, reason: 'host in maintenance' } as HaEvent,
  tick: { type: 'tick' } as HaEvent,
  healthy: (token = PROBE): HaEvent => ({ type: 'healthResult', token, outcome: 'healthy', detail: 'NC healthy' }),
  unhealthy: (token = PROBE): HaEvent => ({ type: 'healthResult', token, outcome: 'unhealthy', detail: 'NC unreachable' }),
  unknown: (token = PROBE): HaEvent => ({ type: 'healthResult', token, outcome: 'unknown', detail: 'the CC did not answer' }),
  activity: (outcome: 'active' | 'inactive' | 'unknown', token = OP): HaEvent => ({ type: 'activityResult', token, outcome, detail: 'disk mtimes' }),
  recovered: (ok: boolean, token = OP): HaEvent => ({ type: 'recoverResult', token, ok, detail: ok ? 'power cycled' : 'BMC error' }),
  fenced: (ok: boolean, token = OP): HaEvent => ({ type: 'fenceResult', token, ok, detail: ok ? 'Already OFF' : 'timed out' }),
  fenceHost: { type: 'fenceRequested', operator: 'admin' } as HaEvent,
  fenceHealthy: (force: boolean): HaEvent => ({ type: 'fenceRequested', operator: 'admin', force, answering: true }),
  confirm: { type: 'operatorConfirmedFenced', operator: 'admin' } as HaEvent,
  unfenced: { type: 'unfenced' } as HaEvent,
  resumed: { type: 'resumed' } as HaEvent,
  refused: (token: number): HaEvent => ({ type: 'dispatchRefused', token }),
  repaired: (done: boolean, token = 20): HaEvent => ({ type: 'repairResult', token, done, detail: done ? 'disabled and empty' : 'NC down' }),
  serviceEnabled: { type: 'serviceEnabled' } as HaEvent,
};
/** An owed repair with attempt `attempts` in flight under token 20. */
const inFlight = (kind: 'drain' | 'evacuate' | 'powerOn', attempts = 1) => owedDue(kind, { attempts, inFlight: 20, lastOutcome: null });

const ALL = HA_STATES;
const withThreshold = (recoverFailureThreshold: number) => compileHaSettings({ ...SETTINGS, recoverFailureThreshold });
const others = (...xs: HaState[]) => ALL.filter((s) => !xs.includes(s));

const rows: Row[] = [
  // HA switched off or on.
  ...others('DISABLED', 'FENCING', 'FENCED').map((s): Row => ({ name: `${s} + haDisabled`, from: inState(s), event: ev.disabled, to: 'DISABLED', does: [],
    check: (n) => { expect(n.operation).toBeNull(); expect(n.recoveryAttempts).toBe(0); expect(n.reason).toBe('DisableHAForHost'); } })),
  { name: 'DISABLED + haDisabled', from: inState('DISABLED'), event: ev.disabled, to: 'ignored' },
  { name: 'FENCING + haDisabled: the fence finishes first (a power-off cannot be un-issued), said once', from: inState('FENCING'), event: ev.disabled,
    to: 'FENCING', does: [], check: (n) => { expect(n.operation?.token).toBe(OP); expect(n.reason).toBe('fixture; HA switch-off waits until the fenced host is returned by EnableService'); } },
  { name: 'FENCING (switch-off already waiting) + haDisabled', from: inState('FENCING', { reason: 'x; HA switch-off waits until the fenced host is returned by EnableService' }), event: ev.disabled, to: 'ignored' },
  // A fence is seen through: switching HA off leaves the host fenced until EnableService unfences it.
  { name: 'FENCED + haDisabled: stays HA\'s until EnableService', from: inState('FENCED'), event: ev.disabled, to: 'ignored' },
  { name: 'AVAILABLE (drain owed) + haDisabled: the owed drain is dropped', from: inState('AVAILABLE', { owed: owedDue('drain') }), event: ev.disabled,
    to: 'DISABLED', does: [], check: (n) => expect(n.owed).toBeNull() },
  { name: 'DISABLED + haEnabled', from: inState('DISABLED'), event: ev.enabled, to: 'INELIGIBLE', does: [] },
  ...others('DISABLED').map((s): Row => ({ name: `${s} + haEnabled`, from: inState(s), event: ev.enabled, to: 'ignored' })),
  // Eligibility.
  ...(['AVAILABLE', 'SUSPECT', 'CHECKING', 'DEGRADED', 'RECOVERING', 'RECOVERED'] as const).map((s): Row => ({
    name: `${s} + not eligible`, from: inState(s), event: ev.ineligible, to: 'INELIGIBLE', does: [],
    check: (n) => { expect(n.operation).toBeNull(); expect(n.health).toBeNull(); expect(n.reason).toBe('host in maintenance'); },
  })),
  ...(['DISABLED', 'FENCING', 'FENCED'] as const).map((s): Row => ({ name: `${s} + not eligible`, from: inState(s), event: ev.ineligible, to: 'ignored' })),
  { name: 'INELIGIBLE + not eligible, same reason', from: inState('INELIGIBLE', { reason: 'host in maintenance' }), event: ev.ineligible, to: 'ignored' },
  {
    name: 'INELIGIBLE + not eligible for a new reason: the reason only', from: inState('INELIGIBLE'), event: ev.ineligible, to: 'INELIGIBLE', does: [],
    check: (n) => { expect(n.reason).toBe('host in maintenance'); expect(n.since).toBe(0); expect(n.seq).toBe(10); },
  },
  { name: 'INELIGIBLE + eligible', from: inState('INELIGIBLE'), event: ev.eligible, now: 3, to: 'AVAILABLE', does: [], check: (n) => expect(n.nextHealthCheckAt).toBe(3) },
  ...others('INELIGIBLE').map((s): Row => ({ name: `${s} + eligible`, from: inState(s), event: ev.eligible, to: 'ignored' })),
  // Health results.
  { name: 'AVAILABLE + health passed', from: inState('AVAILABLE'), event: ev.healthy(), to: 'AVAILABLE', does: [], check: (n) => expect(n.health).toBeNull() },
  { name: 'AVAILABLE + health failed', from: inState('AVAILABLE'), event: ev.unhealthy(), now: 4, to: 'SUSPECT', does: [],
    check: (n) => { expect(n.suspectSince).toBe(4); expect(n.nextActivityCheckAt).toBe(4 + SETTINGS.activityCheckInitialDelayMs); } },
  ...(['SUSPECT', 'CHECKING', 'DEGRADED', 'RECOVERED'] as const).map((s): Row => ({
    name: `${s} + health passed`, from: inState(s, { activityChecks: 2, activityFailures: 2 }), event: ev.healthy(), to: 'AVAILABLE', does: [],
    check: (n) => {
      expect([n.activityChecks, n.activityFailures, n.recoveryAttempts, n.suspectSince, n.operation]).toEqual([0, 0, 0, null, null]);
    },
  })),
  ...(['SUSPECT', 'CHECKING', 'DEGRADED', 'RECOVERED'] as const).map((s): Row => ({
    name: `${s} + health failed`, from: inState(s), event: ev.unhealthy(), to: s, does: [], check: (n) => expect(n.health).toBeNull(),
  })),
  // The CC not answering says nothing about its hosts (issue 19: a slow CC made a whole partition SUSPECT).
  ...ALL.map((s): Row => ({
    name: `${s} + health unknown (the CC did not answer)`, from: inState(s, { nextHealthCheckAt: 9 }), event: ev.unknown(), to: s, does: [],
    check: (n) => { expect(n.health).toBeNull(); expect(n.nextHealthCheckAt).toBe(9); expect(n.suspectSince).toBe(inState(s).suspectSince); },
  })),
  ...ALL.map((s): Row => ({ name: `${s} + stale health result`, from: inState(s), event: ev.healthy(PROBE + 100), to: 'ignored' })),
  // Activity results (CHECKING only).
  { name: 'CHECKING + activity, fewer samples than max attempts', from: inState('CHECKING'), event: ev.activity('inactive'), now: 3, to: 'SUSPECT', does: [],
    check: (n) => {
      expect([n.activityChecks, n.activityFailures, n.lastActivityCheckAt]).toEqual([1, 1, 0]);
      expect(n.nextActivityCheckAt).toBe(3 + activityBackoffMs(1, SETTINGS));
      expect(n.health?.token).toBe(PROBE); // one failure episode: the probe stays valid
    } },
  { name: 'CHECKING + last sample, no activity over the ratio', from: inState('CHECKING', { activityChecks: 2, activityFailures: 1 }),
    event: ev.activity('inactive'), to: 'RECOVERING', does: ['recover'], check: (n) => expect(n.recoveryAttempts).toBe(1) },
  { name: 'CHECKING + last sample, activity seen', from: inState('CHECKING', { activityChecks: 2, activityFailures: 1 }),
    event: ev.activity('active'), to: 'DEGRADED', does: ['drain'] },
  { name: 'CHECKING + last sample inconclusive never counts toward recovery', from: inState('CHECKING', { activityChecks: 2, activityFailures: 1 }),
    event: ev.activity('unknown'), to: 'DEGRADED', does: ['drain'] },
  { name: 'CHECKING + no activity but storm: held in CHECKING', from: inState('CHECKING', { activityChecks: 2, activityFailures: 2 }),
    event: ev.activity('inactive'), remediation: STORM, to: 'CHECKING', does: [],
    check: (n) => { expect(n.blocked).toMatchObject({ target: 'RECOVERING', reason: STORM.allowed ? '' : STORM.reason }); expect(n.operation).toBeNull(); } },
  { name: 'CHECKING + no activity with recover threshold 0: straight to FENCING', from: inState('CHECKING', { activityChecks: 2, activityFailures: 2, recoveryAttempts: 0 }),
    event: ev.activity('inactive'), settings: withThreshold(0), to: 'FENCING', does: ['disableHost', 'fence'] },
  { name: 'CHECKING + stale activity result', from: inState('CHECKING'), event: ev.activity('inactive', OP - 1), to: 'ignored' },
  ...others('CHECKING').map((s): Row => ({ name: `${s} + activity result`, from: inState(s), event: ev.activity('inactive'), to: 'ignored' })),
  // Recovery results (RECOVERING only).
  { name: 'RECOVERING + power cycled', from: inState('RECOVERING'), event: ev.recovered(true), now: 9, to: 'RECOVERED', does: [],
    check: (n) => expect(n.nextHealthCheckAt).toBe(9) },
  { name: 'RECOVERING + failed at the threshold', from: inState('RECOVERING'), event: ev.recovered(false), to: 'FENCING', does: ['disableHost', 'fence'] },
  { name: 'RECOVERING + failed under the threshold: another power cycle', from: inState('RECOVERING'), event: ev.recovered(false),
    settings: withThreshold(2), to: 'RECOVERING', does: ['recover'], check: (n) => { expect(n.recoveryAttempts).toBe(2); expect(n.operation?.token).toBe(11); } },
  { name: 'RECOVERING + failed at the threshold during a storm: fence held', from: inState('RECOVERING'), event: ev.recovered(false), remediation: STORM,
    to: 'RECOVERING', does: [], check: (n) => { expect(n.blocked?.target).toBe('FENCING'); expect(n.operation).toBeNull(); } },
  { name: 'RECOVERING + stale recovery result', from: inState('RECOVERING'), event: ev.recovered(true, OP + 1), to: 'ignored' },
  ...others('RECOVERING').map((s): Row => ({ name: `${s} + recovery result`, from: inState(s), event: ev.recovered(true), to: 'ignored' })),
  // Fence results (FENCING only).
  { name: 'FENCING + power off confirmed', from: inState('FENCING'), event: ev.fenced(true), to: 'FENCED', does: ['evacuate'],
    check: (n) => expect(n.fencedBy).toBe('agent') },
  { name: 'FENCING + fence failed: needs an operator', from: inState('FENCING'), event: ev.fenced(false), to: 'FENCING', does: [],
    check: (n) => { expect(n.needsOperator).toBe(true); expect(n.operation).toBeNull(); } },
  { name: 'FENCING + stale fence result', from: inState('FENCING'), event: ev.fenced(true, OP + 3), to: 'ignored' },
  { name: 'FENCING (needs operator) + late fence result', from: inState('FENCING', { operation: null, needsOperator: true }), event: ev.fenced(true), to: 'ignored' },
  ...others('FENCING').map((s): Row => ({ name: `${s} + fence result`, from: inState(s), event: ev.fenced(true), to: 'ignored' })),
  // Operator commands that are allowed.
  ...others('DISABLED', 'FENCING', 'FENCED').map((s): Row => ({
    name: `${s} + FenceHost (storm guard does not apply)`, from: inState(s), event: ev.fenceHost, remediation: STORM, to: 'FENCING', does: ['disableHost', 'fence'],
  })),
  { name: 'FENCING (needs operator) + FenceHost retries once', from: inState('FENCING', { operation: null, needsOperator: true }), event: ev.fenceHost,
    to: 'FENCING', does: ['disableHost', 'fence'], check: (n) => { expect(n.needsOperator).toBe(false); expect(n.fenceAttempts).toBe(2); } },
  { name: 'FENCING (needs operator) + ConfirmHostFenced', from: inState('FENCING', { operation: null, needsOperator: true }), event: ev.confirm,
    to: 'FENCED', does: ['evacuate'], check: (n) => expect(n.fencedBy).toBe('operator') },
  { name: 'FENCING (in flight) + ConfirmHostFenced', from: inState('FENCING'), event: ev.confirm, to: 'FENCED', does: ['evacuate'] },
  { name: 'FENCED + unfenced', from: inState('FENCED'), event: ev.unfenced, to: 'INELIGIBLE', does: [], check: (n) => expect(n.fencedBy).toBeNull() },
  // Ticks.
  { name: 'AVAILABLE + tick, health check due', from: inState('AVAILABLE', { health: null, nextHealthCheckAt: 5 }), event: ev.tick, now: 5,
    to: 'AVAILABLE', does: ['healthCheck'], check: (n) => { expect(n.health?.token).toBe(11); expect(n.nextHealthCheckAt).toBe(15); } },
  { name: 'AVAILABLE + tick, nothing due', from: inState('AVAILABLE', { health: null, nextHealthCheckAt: 5 }), event: ev.tick, now: 4, to: 'ignored' },
  { name: 'AVAILABLE + tick, health check timed out: unknown, not judged', from: inState('AVAILABLE'), event: ev.tick, now: SETTINGS.healthCheckTimeoutMs,
    to: 'AVAILABLE', does: [], check: (n) => { expect(n.health).toBeNull(); expect(n.suspectSince).toBeNull(); } },
  { name: 'SUSPECT + tick, activity check due (since the suspect time)', from: inState('SUSPECT', { suspectSince: 1 }), event: ev.tick, now: 2,
    to: 'CHECKING', does: ['activityCheck'], check: (n) => { expect(n.operation).toMatchObject({ kind: 'activity', token: 11, deadline: 7 }); expect(n.health?.token).toBe(PROBE); } },
  { name: 'SUSPECT + tick, later rounds check since the previous check', from: inState('SUSPECT', { health: null, lastActivityCheckAt: 1, nextActivityCheckAt: 4 }),
    event: ev.tick, now: 4, to: 'CHECKING', does: ['activityCheck'] },
  { name: 'SUSPECT + tick, not yet due', from: inState('SUSPECT', { nextActivityCheckAt: 3 }), event: ev.tick, now: 2.5, to: 'ignored' },
  { name: 'CHECKING + tick, activity check timed out (inconclusive sample)', from: inState('CHECKING', { health: null }), event: ev.tick,
    now: SETTINGS.activityCheckTimeoutMs, to: 'SUSPECT', does: [], check: (n) => expect([n.activityChecks, n.activityFailures]).toEqual([1, 0]) },
  { name: 'CHECKING (held) + tick, storm over', from: inState('CHECKING', { health: null, operation: null, activityChecks: 3, activityFailures: 3, blocked: { target: 'RECOVERING', reason: 'x', since: 0 } }),
    event: ev.tick, now: 1, to: 'RECOVERING', does: ['recover'], check: (n) => expect(n.blocked).toBeNull() },
  { name: 'CHECKING (held) + tick, storm goes on', from: inState('CHECKING', { health: null, operation: null, blocked: { target: 'RECOVERING', reason: STORM.allowed ? '' : STORM.reason, since: 0 } }),
    event: ev.tick, now: 1, remediation: STORM, to: 'ignored' },
  { name: 'DEGRADED + tick, degraded period over', from: inState('DEGRADED', { health: null, nextHealthCheckAt: 1000 }), event: ev.tick, now: SETTINGS.degradedMaxPeriodMs,
    to: 'SUSPECT', does: [], check: (n) => expect([n.activityChecks, n.activityFailures, n.nextActivityCheckAt]).toEqual([0, 0, SETTINGS.degradedMaxPeriodMs]) },
  { name: 'DEGRADED + tick, within the period', from: inState('DEGRADED', { health: null }), event: ev.tick, now: 50, to: 'ignored' },
  { name: 'RECOVERING + tick, power cycle timed out', from: inState('RECOVERING'), event: ev.tick, now: SETTINGS.recoverTimeoutMs, to: 'FENCING', does: ['disableHost', 'fence'] },
  { name: 'RECOVERING + tick, within the timeout', from: inState('RECOVERING'), event: ev.tick, now: 1, to: 'ignored' },
  { name: 'RECOVERED + tick, no passing health within the wait period', from: inState('RECOVERED', { health: null }), event: ev.tick,
    now: SETTINGS.recoverWaitPeriodMs, to: 'FENCING', does: ['disableHost', 'fence'] },
  { name: 'RECOVERED + tick, health check due', from: inState('RECOVERED', { health: null, nextHealthCheckAt: 0 }), event: ev.tick, now: 1,
    to: 'RECOVERED', does: ['healthCheck'] },
  { name: 'FENCING + tick, fence timed out: needs an operator, no retry', from: inState('FENCING'), event: ev.tick, now: SETTINGS.fenceTimeoutMs,
    to: 'FENCING', does: [], check: (n) => expect(n.needsOperator).toBe(true) },
  { name: 'FENCING (needs operator) + tick, much later: still no retry', from: inState('FENCING', { operation: null, needsOperator: true }),
    event: ev.tick, now: 1e9, to: 'ignored' },
  ...(['DISABLED', 'INELIGIBLE', 'FENCED'] as const).map((s): Row => ({ name: `${s} + tick`, from: inState(s, { nextHealthCheckAt: 0 }), event: ev.tick, now: 1e9, to: 'ignored' })),
  // A CLC restart: what was in flight is issued again under a new token; health is re-checked now.
  { name: 'CHECKING + resumed: the activity check again', from: inState('CHECKING', { lastActivityCheckAt: null, suspectSince: 0 }), event: ev.resumed, now: 40,
    to: 'CHECKING', does: ['activityCheck'], check: (n) => { expect(n.operation).toMatchObject({ kind: 'activity', token: 11, deadline: 45 }); expect(n.health).toBeNull(); } },
  { name: 'RECOVERING + resumed: the power cycle again, not counted twice', from: inState('RECOVERING'), event: ev.resumed, to: 'RECOVERING', does: ['recover'],
    check: (n) => { expect(n.recoveryAttempts).toBe(1); expect(n.operation?.token).toBe(11); } },
  { name: 'FENCING + resumed: disable and fence again', from: inState('FENCING'), event: ev.resumed, to: 'FENCING', does: ['disableHost', 'fence'] },
  { name: 'FENCING (needs operator) + resumed: still waits for the operator', from: inState('FENCING', { operation: null, needsOperator: true }), event: ev.resumed,
    to: 'FENCING', does: [], check: (n) => expect(n.needsOperator).toBe(true) },
  { name: 'REMEDIATING (not accepted) + resumed: handed out again under the same id', from: inState('REMEDIATING'), event: ev.resumed, now: 5, to: 'REMEDIATING', does: ['externalRemediation'],
    check: (n) => { expect(n.remediation).toEqual({ id: REM_ID, since: 0, accepted: false }); expect(n.operation).toMatchObject({ kind: 'remediate', token: 11, deadline: 5 + SETTINGS.externalRemediationTimeoutMs }); expect(n.remediationAttempts).toBe(1); } },
  { name: 'REMEDIATING (accepted) + resumed: not asked again, the same deadline', from: inState('REMEDIATING', { remediation: { id: REM_ID, since: 0, accepted: true } }), event: ev.resumed, now: 5,
    to: 'REMEDIATING', does: [], check: (n) => expect(n.operation).toMatchObject({ kind: 'remediate', token: OP, deadline: SETTINGS.externalRemediationTimeoutMs }) },
  { name: 'REMEDIATING + tick, within the timeout', from: inState('REMEDIATING'), event: ev.tick, now: 1, strategy: 'external', to: 'ignored' },
  { name: 'REMEDIATING + tick, timed out: escalated to a fence', from: inState('REMEDIATING'), event: ev.tick, now: SETTINGS.externalRemediationTimeoutMs, strategy: 'external',
    to: 'FENCING', does: ['disableHost', 'fence'], check: (n) => { expect(n.remediation).toBeNull(); expect(n.reason).toMatch(/external remediation failed: not reported done within 40 ms \(never accepted\)/); } },
  { name: 'REMEDIATING + tick, timed out during a storm: the fence held', from: inState('REMEDIATING'), event: ev.tick, now: SETTINGS.externalRemediationTimeoutMs, strategy: 'external',
    remediation: STORM, to: 'REMEDIATING', does: [], check: (n) => { expect(n.blocked?.target).toBe('FENCING'); expect(n.operation).toBeNull(); expect(n.remediation).toBeNull(); } },
  { name: 'REMEDIATING + remediation refused by the queue: held, not counted', from: inState('REMEDIATING'), event: ev.refused(OP), strategy: 'external', to: 'REMEDIATING', does: [],
    check: (n) => { expect(n.blocked?.target).toBe('REMEDIATING'); expect(n.remediationAttempts).toBe(0); expect(n.remediation).toBeNull(); } },
  { name: 'REMEDIATING (held by back-pressure) + tick: handed out under a new id', from: inState('REMEDIATING', { operation: null, remediation: null, remediationAttempts: 0, blocked: { target: 'REMEDIATING', reason: 'queue full', since: 0 } }),
    event: ev.tick, now: 2, strategy: 'external', to: 'REMEDIATING', does: ['externalRemediation'], check: (n) => expect(n.remediation?.id).toBe('11-2') },
  ...others('CHECKING', 'RECOVERING', 'REMEDIATING', 'FENCING').map((s): Row => ({
    name: `${s} + resumed: health re-checked now`, from: inState(s), event: ev.resumed, now: 3, to: s, does: [],
    check: (n) => { expect(n.health).toBeNull(); expect(n.nextHealthCheckAt).toBe(3); },
  })),
  // Back-pressure: a queue was full, the work never started.
  { name: 'AVAILABLE + health check refused: tried again later, no verdict', from: inState('AVAILABLE'), event: ev.refused(PROBE), now: 3, to: 'AVAILABLE', does: [],
    check: (n) => { expect(n.health).toBeNull(); expect(n.nextHealthCheckAt).toBe(13); } },
  { name: 'CHECKING + activity check refused: back to SUSPECT, no sample counted', from: inState('CHECKING', { activityChecks: 1 }), event: ev.refused(OP), now: 3,
    to: 'SUSPECT', does: [], check: (n) => { expect(n.activityChecks).toBe(1); expect(n.nextActivityCheckAt).toBe(3 + activityBackoffMs(1, SETTINGS)); } },
  { name: 'RECOVERING + power cycle refused: held, the attempt not counted', from: inState('RECOVERING'), event: ev.refused(OP), to: 'RECOVERING', does: [],
    check: (n) => { expect(n.blocked?.target).toBe('RECOVERING'); expect(n.recoveryAttempts).toBe(0); expect(n.operation).toBeNull(); } },
  { name: 'RECOVERING (held by back-pressure) + tick: the power cycle starts', from: inState('RECOVERING', { operation: null, recoveryAttempts: 0, blocked: { target: 'RECOVERING', reason: 'queue full', since: 0 } }),
    event: ev.tick, to: 'RECOVERING', does: ['recover'], check: (n) => expect(n.recoveryAttempts).toBe(1) },
  { name: 'FENCING + fence refused: held, retried on a tick', from: inState('FENCING'), event: ev.refused(OP), to: 'FENCING', does: [],
    check: (n) => { expect(n.blocked?.target).toBe('FENCING'); expect(n.operation).toBeNull(); expect(n.needsOperator).toBe(false); } },
  { name: 'FENCING (held by back-pressure) + tick: disable and fence', from: inState('FENCING', { operation: null, blocked: { target: 'FENCING', reason: 'queue full', since: 0 } }),
    event: ev.tick, to: 'FENCING', does: ['disableHost', 'fence'] },
  ...ALL.map((s): Row => ({ name: `${s} + refusal of a stale token`, from: inState(s), event: ev.refused(99), to: 'ignored' })),
  // Owed repairs (owedRepair.ts): the drain of a host that lost control, the restart elsewhere of a fenced one.
  { name: 'CHECKING + activity at the last check: DEGRADED, a drain owed and its first attempt', from: inState('CHECKING', { activityChecks: 2 }),
    event: ev.activity('active'), now: 3, to: 'DEGRADED', does: ['drain'],
    check: (n) => expect(n.owed).toEqual({ kind: 'drain', since: 3, attempts: 1, nextAttemptAt: 3, inFlight: 11, lastOutcome: null }) },
  { name: 'CHECKING (a drain already owed) + activity: DEGRADED again, the count kept', from: inState('CHECKING', { activityChecks: 2, owed: owedDue('drain', { attempts: 2 }) }),
    event: ev.activity('active'), to: 'DEGRADED', does: ['drain'], check: (n) => expect(n.owed?.attempts).toBe(3) },
  ...(['INELIGIBLE', 'AVAILABLE', 'SUSPECT', 'DEGRADED', 'RECOVERED'] as const).map((s): Row => ({
    name: `${s} (drain owed, due) + tick: the next attempt, whatever the health says`, from: inState(s, { owed: owedDue('drain') }), event: ev.tick,
    to: s, does: ['drain'], check: (n) => expect(n.owed).toMatchObject({ attempts: 2, inFlight: 11 }),
  })),
  { name: 'AVAILABLE (drain in flight) + tick: no second attempt', from: inState('AVAILABLE', { owed: inFlight('drain') }), event: ev.tick, to: 'ignored' },
  { name: 'AVAILABLE (drain owed, backing off) + tick', from: inState('AVAILABLE', { owed: owedDue('drain', { nextAttemptAt: 5 }) }), event: ev.tick, now: 4, to: 'ignored' },
  { name: 'INELIGIBLE (drain given up) + tick: no attempt beyond the bound', from: inState('INELIGIBLE', { owed: owedDue('drain', { attempts: SETTINGS.drainMaxAttempts }) }),
    event: ev.tick, now: 1e9, to: 'ignored' },
  { name: 'AVAILABLE (evacuation owed) + tick: a restart elsewhere only while FENCED', from: inState('AVAILABLE', { owed: owedDue('evacuate') }), event: ev.tick, to: 'ignored' },
  { name: 'INELIGIBLE (drain in flight) + done: nothing owed', from: inState('INELIGIBLE', { owed: inFlight('drain') }), event: ev.repaired(true),
    to: 'INELIGIBLE', does: [], check: (n) => expect(n.owed).toBeNull() },
  { name: 'DEGRADED (drain in flight) + not done: retried after the back-off', from: inState('DEGRADED', { owed: inFlight('drain') }), event: ev.repaired(false), now: 6,
    to: 'DEGRADED', does: [], check: (n) => expect(n.owed).toEqual({ kind: 'drain', since: 0, attempts: 1, nextAttemptAt: 6 + repairBackoffMs(1, SETTINGS), inFlight: null, lastOutcome: 'NC down' }) },
  { name: 'DEGRADED (last drain attempt in flight) + not done: given up, critical alert', from: inState('DEGRADED', { owed: inFlight('drain', SETTINGS.drainMaxAttempts) }),
    event: ev.repaired(false), to: 'DEGRADED', does: [], check: (n) => expect(n.owed?.inFlight).toBeNull() },
  { name: 'DEGRADED (drain in flight) + stale repair result', from: inState('DEGRADED', { owed: inFlight('drain') }), event: ev.repaired(true, 19), to: 'ignored' },
  ...ALL.map((s): Row => ({ name: `${s} (nothing owed) + repair result`, from: inState(s), event: ev.repaired(true), to: 'ignored' })),
  { name: 'FENCING + power off confirmed: the restart elsewhere is owed and started', from: inState('FENCING'), event: ev.fenced(true), now: 2, to: 'FENCED', does: ['evacuate'],
    check: (n) => expect(n.owed).toMatchObject({ kind: 'evacuate', attempts: 1, inFlight: 11 }) },
  { name: 'FENCED (restart in flight) + not done, many attempts: retried, never given up', from: inState('FENCED', { owed: inFlight('evacuate', 50) }), event: ev.repaired(false),
    now: 2, to: 'FENCED', does: [], check: (n) => expect(n.owed?.nextAttemptAt).toBe(2 + SETTINGS.repairRetryIntervalMs) },
  { name: 'FENCED (restart owed, due) + tick: the next attempt', from: inState('FENCED', { owed: owedDue('evacuate', { attempts: 50 }) }), event: ev.tick,
    to: 'FENCED', does: ['evacuate'], check: (n) => expect(n.owed?.attempts).toBe(51) },
  { name: 'FENCED (restart in flight) + tick: no overlapping restart', from: inState('FENCED', { owed: inFlight('evacuate') }), event: ev.tick, to: 'ignored' },
  { name: 'FENCED (restart owed) + unfenced: dropped; the power-on of its own instances is owed instead', from: inState('FENCED', { owed: owedDue('evacuate') }), event: ev.unfenced,
    now: 7, to: 'INELIGIBLE', does: [], check: (n) => expect(n.owed).toEqual({ kind: 'powerOn', since: 7, attempts: 0, nextAttemptAt: 7, inFlight: null, lastOutcome: null }) },
  ...(['INELIGIBLE', 'AVAILABLE', 'SUSPECT', 'DEGRADED'] as const).map((s): Row => ({
    name: `${s} (power-on owed, due) + tick: an attempt`, from: inState(s, { owed: owedDue('powerOn') }), event: ev.tick,
    to: s, does: ['powerOn'], check: (n) => expect(n.owed).toMatchObject({ kind: 'powerOn', attempts: 2, inFlight: 11 }),
  })),
  { name: 'FENCED (power-on owed) + tick: nothing starts behind a fence', from: inState('FENCED', { owed: owedDue('powerOn') }), event: ev.tick, to: 'ignored' },
  { name: 'AVAILABLE (power-on in flight) + not done, many attempts: retried, never given up', from: inState('AVAILABLE', { owed: inFlight('powerOn', 50) }), event: ev.repaired(false),
    now: 2, to: 'AVAILABLE', does: [], check: (n) => expect(n.owed).toMatchObject({ kind: 'powerOn', inFlight: null, nextAttemptAt: 2 + SETTINGS.repairRetryIntervalMs }) },
  { name: 'AVAILABLE (power-on in flight) + done: nothing owed', from: inState('AVAILABLE', { owed: inFlight('powerOn') }), event: ev.repaired(true),
    to: 'AVAILABLE', does: [], check: (n) => expect(n.owed).toBeNull() },
  { name: 'AVAILABLE (power-on owed) + FenceHost: dropped (its instances restart elsewhere once FENCED)', from: inState('AVAILABLE', { owed: owedDue('powerOn') }), event: ev.fenceHost,
    to: 'FENCING', does: ['disableHost', 'fence'], check: (n) => expect(n.owed).toBeNull() },
  { name: 'AVAILABLE (power-on owed) + EnableService again: kept', from: inState('AVAILABLE', { owed: owedDue('powerOn') }), event: ev.serviceEnabled, to: 'ignored' },
  { name: 'DEGRADED (drain owed) + FenceHost: the drain gives way to the fence', from: inState('DEGRADED', { owed: inFlight('drain') }), event: ev.fenceHost,
    to: 'FENCING', does: ['disableHost', 'fence'], check: (n) => expect(n.owed).toBeNull() },
  { name: 'AVAILABLE (drain in flight) + resumed: the lost attempt may start again at once', from: inState('AVAILABLE', { owed: inFlight('drain') }), event: ev.resumed, now: 3,
    to: 'AVAILABLE', does: [], check: (n) => expect(n.owed).toMatchObject({ inFlight: null, nextAttemptAt: 0, attempts: 1 }) },
  { name: 'INELIGIBLE (drain owed) + not eligible: still owed', from: inState('INELIGIBLE', { owed: owedDue('drain') }), event: ev.ineligible, to: 'INELIGIBLE', does: [],
    check: (n) => expect(n.owed?.kind).toBe('drain') },
  ...(['INELIGIBLE', 'AVAILABLE', 'DEGRADED'] as const).map((s): Row => ({
    name: `${s} (drain owed) + EnableService: the operator's word, dropped`, from: inState(s, { owed: owedDue('drain') }), event: ev.serviceEnabled,
    to: s, does: [], check: (n) => expect(n.owed).toBeNull(),
  })),
  ...ALL.map((s): Row => ({ name: `${s} (nothing owed) + EnableService`, from: inState(s), event: ev.serviceEnabled, to: 'ignored' })),
  { name: 'FENCED (restart owed) + EnableService of another kind: kept', from: inState('FENCED', { owed: owedDue('evacuate') }), event: ev.serviceEnabled, to: 'ignored' },
];

describe('step: every transition', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, r) => {
    const { next, effects } = step(r.from, r.event, r.now ?? 1, { settings: r.settings ?? SETTINGS, remediation: r.remediation ?? ALLOWED, ...(r.strategy ? { strategy: r.strategy } : {}) });
    if (r.to === 'ignored') {
      expect(next).toEqual(r.from);
      expect(effects).toEqual([]);
      return;
    }
    expect(next.state).toBe(r.to);
    expect(actions(effects)).toEqual(r.does ?? []);
    if (next.state !== r.from.state) expect(effects[0]).toMatchObject({ kind: 'transition', from: r.from.state, to: r.to });
    r.check?.(next);
  });

  it('covers every (state, event type) pair', () => {
    const covered = new Set(rows.map((r) => `${r.from.state}/${r.event.type}`));
    const types: HaEvent['type'][] = ['haDisabled', 'haEnabled', 'eligibility', 'tick', 'healthResult', 'activityResult', 'recoverResult', 'fenceResult', 'resumed', 'dispatchRefused'];
    const missing = ALL.flatMap((s) => types.map((t) => `${s}/${t}`)).filter((k) => !covered.has(k));
    expect(missing).toEqual([]);
  });
});

describe('step: operator commands refused in the wrong state', () => {
  const refused: [string, HostHaRecord, HaEvent][] = [
    ['FenceHost on a DISABLED host', inState('DISABLED'), ev.fenceHost],
    ['FenceHost while a fence runs', inState('FENCING'), ev.fenceHost],
    ...others('FENCING').map((s): [string, HostHaRecord, HaEvent] => [`ConfirmHostFenced on ${s}`, inState(s), ev.confirm]),
    ...others('FENCED').map((s): [string, HostHaRecord, HaEvent] => [`unfenced on ${s}`, inState(s), ev.unfenced]),
  ];
  it.each(refused)('%s', (_name, from, event) => {
    expect(() => step(from, event, 1, ctx())).toThrow(IllegalHaEventError);
    try {
      step(from, event, 1, ctx());
    } catch (e) {
      expect((e as IllegalHaEventError).state).toBe(from.state);
      expect((e as IllegalHaEventError).message).toContain(event.type);
    }
  });
});

describe('FenceHost on a FENCED host (OpenStack fencing blueprint)', () => {
  it.each(['agent', 'operator'] as const)('fenced by %s: a success that changes nothing and does nothing', (fencedBy) => {
    const from = inState('FENCED', { fencedBy });
    const { next, effects } = step(from, ev.fenceHost, 1, ctx());
    expect(next).toBe(from);
    expect(effects).toEqual([]);
  });
});

describe('owed repairs while automation is suspended (Ganeti harep)', () => {
  const SUSP = 'automation suspended for host:h1 by admin until lifted: x';
  const held = (r: { owed: HostHaRecord['owed'] }) => r.owed?.heldBy;
  const rows: [string, HostHaRecord, HaEvent][] = [
    ['DEGRADED, drain due, tick', inState('DEGRADED', { owed: owedDue('drain') }), ev.tick],
    ['FENCED, restart due, tick', inState('FENCED', { owed: owedDue('evacuate') }), ev.tick],
    ['FENCING + fence confirmed: the restart is owed but not started', inState('FENCING'), ev.fenced(true)],
    ['CHECKING + activity: DEGRADED owes a drain, not started', inState('CHECKING', { activityChecks: 2 }), ev.activity('active')],
  ];
  it.each(rows)('%s', (_name, from, event) => {
    const c = { ...ctx(), suspended: SUSP };
    const first = step(from, event, 1, c);
    expect(actions(first.effects).filter((k) => k === 'drain' || k === 'evacuate')).toEqual([]);
    expect(first.next.owed).not.toBeNull();
    expect(held(first.next)).toBe(SUSP);
    expect(first.next.owed?.attempts).toBe(from.owed?.attempts ?? 0);
    // Said once: the next tick neither alerts again nor starts it.
    const again = step(first.next, ev.tick, 2, c);
    expect(again.effects.filter((e) => e.kind !== 'healthCheck')).toEqual([]);
    expect(again.next.owed).toEqual(first.next.owed);
    // The suspension ends: the next tick starts it, and the hold is forgotten.
    const after = step(again.next, ev.tick, 3, ctx());
    expect(actions(after.effects)).toContain(first.next.owed?.kind);
    expect(held(after.next)).toBeUndefined();
    expect(after.next.owed?.inFlight).not.toBeNull();
  });
});

describe('owed drains during a storm (issue 19: 868 of 2,000 hosts DEGRADED at once were each disabled)', () => {
  const HOLD = 'storm protection: the unhealthy hosts of p1 are beyond maxUnhealthy 50; owed drains wait';
  const stormCtx = () => ({ ...ctx(STORM), stormHold: HOLD });
  it('entering DEGRADED in a storm owes the drain, holds it (said once), and starts it when the storm ends', () => {
    const first = step(inState('CHECKING', { activityChecks: 2 }), ev.activity('active'), 1, stormCtx());
    expect(first.next.state).toBe('DEGRADED');
    expect(actions(first.effects)).not.toContain('drain');
    expect(first.next.owed).toMatchObject({ kind: 'drain', attempts: 0, heldBy: HOLD, stormHeld: true });
    const again = step(first.next, ev.tick, 2, stormCtx());
    expect(again.effects.filter((e) => e.kind !== 'healthCheck')).toEqual([]);
    expect(again.next.owed).toEqual(first.next.owed);
    const after = step(again.next, ev.tick, 3, ctx());
    expect(actions(after.effects)).toContain('drain');
    expect(after.next.owed).toMatchObject({ attempts: 1 });
    expect(after.next.owed?.heldBy).toBeUndefined();
    expect(after.next.owed?.stormHeld).toBeUndefined();
  });
  it('a held drain is forgiven when the host passes its health check before it started', () => {
    const held = step(inState('CHECKING', { activityChecks: 2 }), ev.activity('active'), 1, stormCtx()).next;
    const healthy = step(held, ev.healthy(), 2, stormCtx());
    expect(healthy.next.state).toBe('AVAILABLE');
    expect(healthy.next.owed).toBeNull();
    expect(healthy.effects.some((e) => e.kind === 'alert' && /owed drain dropped after 0 attempt\(s\).*storm/.test(e.message))).toBe(true);
  });
  // Table: what a storm holds and what it does not.
  const rows: [string, HostHaRecord, boolean][] = [
    ['a due drain that had started before the storm: held', inState('DEGRADED', { owed: owedDue('drain') }), true],
    ['a restart elsewhere of a fenced host: not held (its instances are down)', inState('FENCED', { owed: owedDue('evacuate') }), false],
    ['a power-on of a returned host\'s instances: not held', inState('AVAILABLE', { owed: owedDue('powerOn') }), false],
  ];
  it.each(rows)('%s', (_name, from, heldByStorm) => {
    const r = step(from, ev.tick, 1, stormCtx());
    expect(actions(r.effects).includes(from.owed!.kind)).toBe(!heldByStorm);
    expect(r.next.owed?.heldBy).toBe(heldByStorm ? HOLD : undefined);
  });
  it('a drain that had started is still owed when the host passes its health check', () => {
    const from = inState('DEGRADED', { owed: owedDue('drain', { heldBy: HOLD, stormHeld: true }) });
    const r = step(from, ev.healthy(), 1, stormCtx());
    expect(r.next.state).toBe('AVAILABLE');
    expect(r.next.owed).toMatchObject({ kind: 'drain', attempts: 1, stormHeld: true });
  });
  it('a suspension outranks the storm: held by the suspension, not forgiven on health', () => {
    const c = { ...stormCtx(), suspended: 'automation suspended for host:h1 by admin until lifted: x' };
    const held = step(inState('CHECKING', { activityChecks: 2 }), ev.activity('active'), 1, c).next;
    expect(held.owed).toMatchObject({ heldBy: c.suspended, attempts: 0 });
    expect(held.owed?.stormHeld).toBeUndefined();
    expect(step(held, ev.healthy(), 2, c).next.owed).not.toBeNull();
  });
});

describe('FenceHost on a host that is up and healthy (OpenStack fencing blueprint)', () => {
  it('AVAILABLE and its NC answering: refused as healthy without force, nothing changes', () => {
    const from = inState('AVAILABLE');
    let err: unknown;
    try {
      step(from, ev.fenceHealthy(false), 1, ctx());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(IllegalHaEventError);
    expect((err as IllegalHaEventError).healthy).toBe(true);
    expect((err as IllegalHaEventError).state).toBe('AVAILABLE');
  });

  it('forced: fenced like any FenceHost, and the transition names who forced it', () => {
    const { next, effects } = step(inState('AVAILABLE'), ev.fenceHealthy(true), 1, ctx(STORM));
    expect(next.state).toBe('FENCING');
    expect(actions(effects)).toEqual(['disableHost', 'fence']);
    expect(effects.find((e) => e.kind === 'transition')).toMatchObject({ to: 'FENCING', reason: 'FenceHost by admin, forced (the host was up and healthy)' });
  });

  const unhealthyRows: [string, HostHaRecord][] = (['SUSPECT', 'CHECKING', 'DEGRADED', 'RECOVERED', 'INELIGIBLE'] as const).map((s) => [s, inState(s)]);
  it.each(unhealthyRows)('%s (not AVAILABLE): a FenceHost fences without force even if the NC answers now', (_s, from) => {
    expect(step(from, { type: 'fenceRequested', operator: 'admin', answering: true }, 1, ctx()).next.state).toBe('FENCING');
  });
});

describe('entering FENCING', () => {
  it('disables the host before it powers it off', () => {
    const { effects } = step(inState('RECOVERING'), ev.recovered(false), 1, ctx());
    const kinds = effects.map((e) => e.kind);
    expect(kinds.indexOf('disableHost')).toBeGreaterThan(-1);
    expect(kinds.indexOf('disableHost')).toBeLessThan(kinds.indexOf('fence'));
  });
});

describe('activity back-off', () => {
  it('doubles from the initial delay up to the interval', () => {
    expect([0, 1, 2, 3, 4, 10].map((k) => activityBackoffMs(k, SETTINGS))).toEqual([2, 4, 8, 16, 16, 16]);
  });

  it('a whole episode with CloudStack defaults ends in RECOVERING only after max attempts', () => {
    const settings = compileHaSettings({});
    let rec = inState('AVAILABLE');
    let now = 0;
    rec = step(rec, ev.unhealthy(), now, ctx(ALLOWED, settings)).next;
    let checks = 0;
    while (rec.state !== 'RECOVERING') {
      now = rec.nextActivityCheckAt ?? now;
      const r = step(rec, ev.tick, now, ctx(ALLOWED, settings));
      const check = r.effects.find((e) => e.kind === 'activityCheck');
      expect(check).toBeDefined();
      checks++;
      rec = step(r.next, ev.activity('inactive', check && 'token' in check ? check.token : -1), now + 1, ctx(ALLOWED, settings)).next;
    }
    expect(checks).toBe(settings.activityCheckMaxAttempts);
  });
});
