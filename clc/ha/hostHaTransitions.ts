/**
 * The host-HA transition table (issue 15, STYLE habit 2): every move of the machine in one place,
 * read top to bottom. A trigger is an event (or one of the checks a tick makes, in the order listed);
 * its rows are tried in order and the first whose state is in `from` and whose guard holds runs.
 * `to` is the next state, `stay` (the record changes, the state does not) or `refused` (an operator's
 * command the state does not allow: IllegalHaEventError naming state and event). A trigger no row
 * matches changes nothing. docs/ARCHITECTURE.md's table is rendered from this one (haTableDoc.ts)
 * and a test fails when they differ.
 */
import type { ActivityOutcome, HaState, HealthOutcome, HostHaRecord, RemediationTarget } from './hostHaState.js';
import { HA_STATES } from './hostHaState.js';
import {
  ELIGIBILITY_MATTERS, EPISODE, HEALTH_WATCHED, IllegalHaEventError, POWER_WATCHED, activityBackoffMs, chain, enter, forgiveStormHeldDrain, onFenceFailed, onResumed,
  remediationTarget, repairHold, startRemediation, unchanged, type HaContext, type HaRefusal, type HaStep,
} from './hostHaMoves.js';
import { forgive, holdFor, onRepairResult, owe, startDueRepair } from './owedRepair.js';

/** What each trigger carries. */
export interface HaPayloads {
  haDisabled: { readonly reason: string };
  haEnabled: Record<string, never>;
  eligibility: { readonly eligible: boolean; readonly reason: string };
  health: { readonly outcome: HealthOutcome; readonly detail: string };
  activity: { readonly outcome: ActivityOutcome; readonly detail: string };
  recovered: { readonly detail: string };
  recoveryFailed: { readonly detail: string };
  fenced: { readonly detail: string };
  fenceFailed: { readonly detail: string };
  held: Record<string, never>;
  timers: Record<string, never>;
  healthDue: Record<string, never>;
  repairDue: Record<string, never>;
  fenceRequested: { readonly operator: string; readonly force?: boolean; readonly answering?: boolean };
  operatorConfirmedFenced: { readonly operator: string };
  unfenced: Record<string, never>;
  resumed: Record<string, never>;
  dispatchRefused: { readonly token: number };
  repairResult: { readonly token: number; readonly done: boolean; readonly detail: string };
  serviceEnabled: Record<string, never>;
  powerDue: Record<string, never>;
  startupTimeout: Record<string, never>;
  power: { readonly power: 'on' | 'off' | 'unknown'; readonly detail: string };
  remediationAccepted: { readonly detail: string };
  remediated: { readonly detail: string };
  remediationFailed: { readonly detail: string };
  remediationReported: { readonly id: string; readonly result: 'succeeded' | 'failed'; readonly message: string; readonly operator: string };
}
export type HaTrigger = keyof HaPayloads;

/** A row as the docs show it. */
export interface HaRowDoc {
  readonly from: readonly HaState[];
  /** The condition, in words; empty when the state is enough. */
  readonly guard: string;
  readonly to: HaState | 'stay' | 'refused';
  /** What the move does besides changing state, in words. */
  readonly effects: string;
}

export interface HaRow<P> extends HaRowDoc {
  readonly when?: (rec: HostHaRecord, p: P, now: number, ctx: HaContext) => boolean;
  readonly run: (rec: HostHaRecord, p: P, now: number, ctx: HaContext) => HaStep;
}

export interface HaTriggerRows<P> {
  /** Which events or tick checks feed the trigger (and how the record is prepared first). */
  readonly on: string;
  readonly rows: readonly HaRow<P>[];
}

export type HaTable = { readonly [K in HaTrigger]: HaTriggerRows<HaPayloads[K]> };

const ALL: readonly HaState[] = HA_STATES;
const but = (...excluded: HaState[]): HaState[] => HA_STATES.filter((s) => !excluded.includes(s));
const set = (s: ReadonlySet<HaState>): HaState[] => HA_STATES.filter((x) => s.has(x));

/** What entering FENCING does (hostHaMoves.ts enter). */
const ENTER_FENCING = '`disableHost` (DisableService), then `fence`; an owed drain or power-on is forgiven; critical alert';
/** What entering REMEDIATING does. */
const ENTER_REMEDIATING = '`externalRemediation` (the command or webhook, under a new remediation id), attempt counted; warn alert';
const THRESHOLD = 'recovery attempts reached recover.failure.threshold';

/**
 * The rows of a storm-guarded remediation: held with `blocked` and an alert (once per reason) while
 * the guard refuses; else what remediationTarget (hostHaMoves.ts) picks: with strategy external the
 * episode's first remediation is handed out (REMEDIATING), else a power cycle, or a fence once the
 * recovery attempts reached the threshold, after an external remediation, or when `target` says FENCING.
 * `targets` keeps only the rows a trigger can reach (an escalation only fences).
 */
function remediationRows<P>(
  from: readonly HaState[], guard: string, target: (rec: HostHaRecord) => RemediationTarget,
  reason: (rec: HostHaRecord, p: P) => string, when: (rec: HostHaRecord, p: P, now: number, ctx: HaContext) => boolean = () => true,
  fenceGuard = `storm guard allows; ${THRESHOLD}, or after an external remediation`, targets: readonly RemediationTarget[] = ['REMEDIATING', 'FENCING', 'RECOVERING'],
): HaRow<P>[] {
  const picks = (to: RemediationTarget) => (r: HostHaRecord, p: P, n: number, c: HaContext): boolean => when(r, p, n, c) && remediationTarget(r, target(r), c) === to;
  const run = (rec: HostHaRecord, p: P, now: number, ctx: HaContext): HaStep => startRemediation(rec, target(rec), now, ctx, reason(rec, p));
  const and = (g: string): string => (guard ? `${guard}; ${g}` : g);
  const rows: Record<RemediationTarget, HaRow<P>> = {
    REMEDIATING: {
      from, guard: and('storm guard allows; strategy external, none handed out this episode'), to: 'REMEDIATING', effects: ENTER_REMEDIATING, when: picks('REMEDIATING'), run,
    },
    FENCING: { from, guard: and(fenceGuard), to: 'FENCING', effects: ENTER_FENCING, when: picks('FENCING'), run },
    RECOVERING: { from, guard: and('storm guard allows'), to: 'RECOVERING', effects: 'power cycle (`recover`), attempt counted', when: picks('RECOVERING'), run },
  };
  return [
    { from, guard: and('storm guard refuses'), to: 'stay', effects: 'held: `blocked` + warn alert (once per reason)', when: (r, p, n, c) => when(r, p, n, c) && !c.remediation.allowed, run },
    ...targets.map((t) => rows[t]),
  ];
}

const toRecover = (): 'RECOVERING' => 'RECOVERING';
function heldTarget(rec: HostHaRecord): RemediationTarget {
  return rec.blocked?.target ?? 'RECOVERING';
}
const toFence = (): 'FENCING' => 'FENCING';

const noOpNoHold = (r: HostHaRecord): boolean => !r.blocked && !r.operation;
const activitySummary = (r: HostHaRecord, p: HaPayloads['activity']): string =>
  `${r.activityFailures} of ${r.activityChecks} activity checks found no activity (last: ${p.outcome}, ${p.detail})`;
const failedRecovery = (r: HostHaRecord, p: { readonly detail: string }): string => `recovery attempt ${r.recoveryAttempts} failed: ${p.detail}`;
const DISABLE_WAITS = 'HA switch-off waits until the fenced host is returned by EnableService';
const refuse = (event: 'fenceRequested' | 'operatorConfirmedFenced' | 'unfenced' | 'remediationReported', detail: string, refusal: HaRefusal = 'state') => (rec: HostHaRecord): never => {
  throw new IllegalHaEventError(rec.host, rec.state, event, detail, refusal);
};
/** CompleteHostRemediation names the remediation in flight. */
const itsId = (r: HostHaRecord, p: HaPayloads['remediationReported']): boolean => r.remediation !== null && r.remediation.id === p.id;
const reported = (p: HaPayloads['remediationReported']): string => `CompleteHostRemediation by ${p.operator}: ${p.result}${p.message ? ` (${p.message})` : ''}`;
/** A concluded remediation: the operation and the remediation in flight are cleared before the table decides. */
const concluded = (r: HostHaRecord): HostHaRecord => ({ ...r, operation: null, remediation: null });
/** CAPI: once the external remediation says done, the health check decides (RECOVERED: recover.wait for a pass). */
const REMEDIATED = 'health check now; not healthy within recover.wait → escalates to a fence (storm guard applies)';
/** OpenStack's fencing blueprint: a host HA finds AVAILABLE and whose NC answers now is up and healthy. */
const upAndHealthy = (r: HostHaRecord, p: HaPayloads['fenceRequested']): boolean => r.state === 'AVAILABLE' && p.answering === true;

/** A periodic probe (a health check, or the BMC's power status) starts: token, deadline, and the next one's time. */
function startProbe(r: HostHaRecord, kind: 'health' | 'power', now: number, timeoutMs: number, intervalMs: number): HaStep {
  const token = r.seq + 1;
  const deadline = now + timeoutMs;
  const probe = { token, startedAt: now, deadline };
  return kind === 'health'
    ? { next: { ...r, seq: token, health: probe, nextHealthCheckAt: now + intervalMs }, effects: [{ kind: 'healthCheck', host: r.host, token, deadline }] }
    : { next: { ...r, seq: token, powerProbe: probe, nextPowerCheckAt: now + intervalMs }, effects: [{ kind: 'powerStatus', host: r.host, token, deadline }] };
}

export const HA_TABLE: HaTable = {
  haDisabled: {
    on: 'haDisabled (DisableHAForHost/Cluster/Partition)',
    rows: [
      { from: ['FENCED'], guard: '', to: 'stay', effects: 'none: a fenced host stays HA\'s until EnableService', run: (r) => unchanged(r) },
      {
        from: ['FENCING'], guard: 'switch-off not yet deferred', to: 'stay', effects: 'reason notes the deferral + warn alert',
        when: (r) => !r.reason.endsWith(DISABLE_WAITS),
        run: (r, p) => ({
          next: { ...r, reason: `${r.reason}; ${DISABLE_WAITS}` },
          effects: [{ kind: 'alert', host: r.host, level: 'warn', message: `host ${r.host}: ${p.reason}, but it is being fenced: ${DISABLE_WAITS}` }],
        }),
      },
      { from: but('DISABLED', 'FENCING', 'FENCED'), guard: '', to: 'DISABLED', effects: 'episode cleared, owed repair forgiven', run: (r, p, now, ctx) => enter(r, 'DISABLED', now, ctx, p.reason) },
    ],
  },
  haEnabled: {
    on: 'haEnabled',
    rows: [{ from: ['DISABLED'], guard: '', to: 'INELIGIBLE', effects: 'eligibility evaluated next', run: (r, _p, now, ctx) => enter(r, 'INELIGIBLE', now, ctx, 'HA enabled; eligibility not yet evaluated') }],
  },
  eligibility: {
    on: 'eligibility (partition, maintenance, neighbour, power management)',
    rows: [
      { from: set(ELIGIBILITY_MATTERS), guard: 'not eligible', to: 'INELIGIBLE', effects: 'episode cleared', when: (_r, p) => !p.eligible, run: (r, p, now, ctx) => enter(r, 'INELIGIBLE', now, ctx, p.reason) },
      { from: ['INELIGIBLE'], guard: 'eligible', to: 'AVAILABLE', effects: 'health check now', when: (_r, p) => p.eligible, run: (r, _p, now, ctx) => enter(r, 'AVAILABLE', now, ctx, 'eligible', { nextHealthCheckAt: now }) },
      { from: ['INELIGIBLE'], guard: 'not eligible, for another reason', to: 'stay', effects: 'reason updated', when: (r, p) => !p.eligible && r.reason !== p.reason, run: (r, p) => ({ next: { ...r, reason: p.reason }, effects: [] }) },
    ],
  },
  health: {
    on: 'healthResult for the current probe; tick: probe past its deadline (unknown: the source did not answer). The probe is cleared first',
    rows: [
      {
        from: [...set(EPISODE), 'RECOVERED'], guard: 'healthy', to: 'AVAILABLE', effects: 'episode cleared + info alert; a drain the storm guard held before its first attempt is forgiven',
        when: (_r, p) => p.outcome === 'healthy', run: (r, p, now, ctx) => chain(r, [(x) => enter(x, 'AVAILABLE', now, ctx, `health check passed: ${p.detail}`), forgiveStormHeldDrain]),
      },
      {
        from: ['AVAILABLE'], guard: 'unhealthy (its CC says: not reachable, or no hypervisor)', to: 'SUSPECT', effects: 'episode starts; first activity check after the initial delay; warn alert', when: (_r, p) => p.outcome === 'unhealthy',
        run: (r, p, now, ctx) => enter(r, 'SUSPECT', now, ctx, p.detail, { suspectSince: now, nextActivityCheckAt: now + activityBackoffMs(0, ctx.settings) }),
      },
      // A CC that is slow or down says nothing about its hosts: judging them on its silence turned
      // every host of a busy 2,000-host partition SUSPECT, then DEGRADED (issue 19). The runner
      // alerts once per partition while its CC does not answer (haRunner.ts).
      {
        from: ALL, guard: 'unknown (the CC did not answer in time, or refused)', to: 'stay', effects: 'nothing judged; next check after the interval',
        when: (_r, p) => p.outcome === 'unknown', run: (r) => unchanged(r),
      },
    ],
  },
  activity: {
    on: 'activityResult for the current check; tick: check past its deadline (`unknown`). The sample is counted first',
    rows: [
      {
        from: ['CHECKING'], guard: 'fewer than activity.max.attempts samples', to: 'SUSPECT', effects: 'next check after back-off',
        when: (r, _p, _n, ctx) => r.activityChecks < ctx.settings.activityCheckMaxAttempts,
        run: (r, p, now, ctx) => enter(r, 'SUSPECT', now, ctx, activitySummary(r, p), { nextActivityCheckAt: now + activityBackoffMs(r.activityChecks, ctx.settings) }),
      },
      // CloudStack's rule: recover when failures exceed attempts × ratio; inconclusive samples never push toward power actions.
      ...remediationRows<HaPayloads['activity']>(['CHECKING'], 'failures > attempts × ratio', toRecover, activitySummary,
        (r, _p, _n, ctx) => r.activityFailures > r.activityChecks * ctx.settings.activityCheckFailureRatio),
      { from: ['CHECKING'], guard: 'failures ≤ attempts × ratio', to: 'DEGRADED', effects: 'owes a drain (disable + migrate) + warn alert', run: (r, p, now, ctx) => enter(r, 'DEGRADED', now, ctx, activitySummary(r, p)) },
    ],
  },
  remediationAccepted: {
    on: 'remediationResult accepted for the current remediation (webhook 2xx, or the command started)',
    rows: [{
      from: ['REMEDIATING'], guard: 'remediation in flight', to: 'stay', effects: '`accepted` (not handed out again after a CLC restart); waits for done, failed or the timeout',
      when: (r) => r.remediation !== null, run: (r, p) => (r.remediation === null ? unchanged(r) : { next: { ...r, remediation: { ...r.remediation, accepted: true }, reason: `external remediation ${r.remediation.id} accepted: ${p.detail}` }, effects: [] }),
    }],
  },
  remediated: {
    on: 'remediationResult done for the current remediation (the command exited 0)',
    rows: [{ from: ['REMEDIATING'], guard: '', to: 'RECOVERED', effects: REMEDIATED, run: (r, p, now, ctx) => enter(concluded(r), 'RECOVERED', now, ctx, `external remediation ${r.remediation?.id ?? '?'} done: ${p.detail}`) }],
  },
  remediationFailed: {
    on: 'remediationResult failed; tick: remediation past its timeout (externalRemediationTimeoutMs). The remediation is cleared first',
    rows: remediationRows<HaPayloads['remediationFailed']>(['REMEDIATING'], '', toFence, (_r, p) => `external remediation failed: ${p.detail}`, () => true, 'storm guard allows', ['FENCING']),
  },
  remediationReported: {
    on: 'CompleteHostRemediation (Host, RemediationId, Result)',
    rows: [
      { from: but('REMEDIATING'), guard: '', to: 'refused', effects: 'RemediationNotInProgress', run: refuse('remediationReported', 'no external remediation is in progress', 'notRemediating') },
      {
        from: ['REMEDIATING'], guard: 'none in flight (its escalation is held)', to: 'refused', effects: 'RemediationNotInProgress', when: (r) => r.remediation === null,
        run: refuse('remediationReported', 'its external remediation already concluded', 'notRemediating'),
      },
      {
        from: ['REMEDIATING'], guard: 'another id (a stale report)', to: 'refused', effects: 'RemediationIdMismatch; nothing changes', when: (r, p) => !itsId(r, p),
        run: (r, p) => refuse('remediationReported', `remediation ${p.id} is not the one in progress (${r.remediation?.id ?? 'none'})`, 'staleRemediation')(r),
      },
      { from: ['REMEDIATING'], guard: 'its id; succeeded', to: 'RECOVERED', effects: REMEDIATED, when: (_r, p) => p.result === 'succeeded', run: (r, p, now, ctx) => enter(concluded(r), 'RECOVERED', now, ctx, reported(p)) },
      ...remediationRows<HaPayloads['remediationReported']>(['REMEDIATING'], 'its id; failed', toFence, (_r, p) => reported(p), () => true, 'storm guard allows', ['FENCING'])
        .map((row) => ({ ...row, run: (r: HostHaRecord, p: HaPayloads['remediationReported'], now: number, ctx: HaContext) => row.run(concluded(r), p, now, ctx) })),
    ],
  },
  recovered: {
    on: 'recoverResult ok for the current power cycle',
    rows: [{ from: ['RECOVERING'], guard: '', to: 'RECOVERED', effects: 'health check now', run: (r, p, now, ctx) => enter(r, 'RECOVERED', now, ctx, `power cycled: ${p.detail}`) }],
  },
  recoveryFailed: {
    on: 'recoverResult failed; tick: power cycle past its deadline, or RECOVERED without a passing health check within recover.wait',
    rows: remediationRows<HaPayloads['recoveryFailed']>(['RECOVERING', 'RECOVERED'], '', toRecover, failedRecovery),
  },
  fenced: {
    on: 'fenceResult ok for the current fence ("already off" included)',
    rows: [{ from: ['FENCING'], guard: '', to: 'FENCED', effects: 'fencedBy agent; owes a restart elsewhere (evacuate); critical alert', run: (r, p, now, ctx) => enter(r, 'FENCED', now, ctx, `power off confirmed: ${p.detail}`, { fencedBy: 'agent' }) }],
  },
  fenceFailed: {
    on: 'fenceResult failed; tick: fence past its deadline',
    rows: [{ from: ['FENCING'], guard: '', to: 'stay', effects: 'needsOperator (no retry by itself) + critical alert', run: (r, p) => onFenceFailed(r, p.detail) }],
  },
  held: {
    on: 'tick, while a recovery or fence is held (`blocked`)',
    rows: remediationRows<HaPayloads['held']>(ALL, '', heldTarget, (r) => `${r.reason} (held since ${r.blocked?.since ?? 0})`, (r) => r.blocked !== null,
      `storm guard allows; the held target is FENCING or ${THRESHOLD}`),
  },
  timers: {
    on: 'tick, nothing in flight or held',
    rows: [
      {
        from: ['SUSPECT'], guard: 'activity check due', to: 'CHECKING', effects: '`activityCheck` by a neighbour since the previous check',
        when: (r, _p, now) => noOpNoHold(r) && r.nextActivityCheckAt !== null && now >= r.nextActivityCheckAt,
        run: (r, _p, now, ctx) => enter(r, 'CHECKING', now, ctx, `activity check ${r.activityChecks + 1} of ${ctx.settings.activityCheckMaxAttempts}`),
      },
      {
        from: ['DEGRADED'], guard: 'degraded.max.period over', to: 'SUSPECT', effects: 'activity samples reset; check now',
        when: (r, _p, now, ctx) => noOpNoHold(r) && now >= r.since + ctx.settings.degradedMaxPeriodMs,
        run: (r, _p, now, ctx) => enter(r, 'SUSPECT', now, ctx, 'degraded period over: re-checking activity', {
          activityChecks: 0, activityFailures: 0, lastActivityCheckAt: null, nextActivityCheckAt: now,
        }),
      },
      ...remediationRows<HaPayloads['timers']>(['RECOVERED'], 'recover.wait over', toRecover,
        (r) => failedRecovery(r, { detail: 'no passing health check within the recover wait period' }),
        (r, _p, now, ctx) => noOpNoHold(r) && now >= r.since + ctx.settings.recoverWaitPeriodMs),
    ],
  },
  healthDue: {
    on: 'tick',
    rows: [{
      from: set(HEALTH_WATCHED), guard: 'no probe in flight; health check due', to: 'stay', effects: '`healthCheck`',
      when: (r, _p, now) => !r.health && now >= r.nextHealthCheckAt,
      run: (r, _p, now, ctx) => startProbe(r, 'health', now, ctx.settings.healthCheckTimeoutMs, ctx.settings.healthCheckIntervalMs),
    }],
  },
  repairDue: {
    on: 'tick',
    rows: [
      // Ganeti harep: while suspended, an owed repair is neither executed nor lost; it starts once the suspension ends, if still owed.
      // A storm holds drains alike: 868 of 2,000 hosts went DEGRADED at once in a starved bench cloud, and each was disabled (issue 19).
      {
        from: ALL, guard: 'an owed repair is due, none in flight; automation suspended, or (a drain) the storm guard refuses', to: 'stay',
        effects: 'kept, not started: `owed.heldBy` (`stormHeld` for a storm) + warn alert (once per reason)',
        when: (r, _p, _n, ctx) => r.owed != null && holdFor(r.owed.kind, repairHold(ctx)) !== undefined,
        run: (r, _p, now, ctx) => startDueRepair(r, now, ctx.settings, repairHold(ctx)),
      },
      { from: ALL, guard: 'an owed repair is due, none in flight', to: 'stay', effects: '`drain`, (FENCED only) `evacuate` or (not FENCING/FENCED) `powerOn` attempt', run: (r, _p, now, ctx) => startDueRepair(r, now, ctx.settings) },
    ],
  },
  fenceRequested: {
    on: 'FenceHost (an operator; the storm guard does not apply)',
    rows: [
      { from: ['DISABLED'], guard: '', to: 'refused', effects: 'HA is disabled for it', run: refuse('fenceRequested', 'HA is disabled for it') },
      // OpenStack's fencing blueprint: fencing a fenced host succeeds and does nothing more (idempotent for retrying callers).
      { from: ['FENCED'], guard: '', to: 'stay', effects: 'none: already fenced, a success', run: (r) => unchanged(r) },
      { from: ['FENCING'], guard: 'fence running (not needsOperator)', to: 'refused', effects: 'a fence is already running', when: (r) => !r.needsOperator, run: refuse('fenceRequested', 'a fence is already running') },
      // OpenStack's fencing blueprint: fencing a host that is up and healthy needs the operator's Force.
      {
        from: ['AVAILABLE'], guard: 'its NC answers; not forced', to: 'refused', effects: 'HostHealthy: up and healthy, FenceHost needs Force=true',
        when: (r, p) => upAndHealthy(r, p) && p.force !== true, run: refuse('fenceRequested', 'it is up and healthy (its NC answers); pass Force=true to fence it anyway', 'healthy'),
      },
      {
        from: ['AVAILABLE'], guard: 'its NC answers; forced', to: 'FENCING', effects: `${ENTER_FENCING}; the event log names who forced it`,
        when: upAndHealthy, run: (r, p, now, ctx) => enter(r, 'FENCING', now, ctx, `FenceHost by ${p.operator}, forced (the host was up and healthy)`),
      },
      { from: but('DISABLED', 'FENCED'), guard: '', to: 'FENCING', effects: ENTER_FENCING, run: (r, p, now, ctx) => enter(r, 'FENCING', now, ctx, `FenceHost by ${p.operator}${p.force === true ? ' (forced)' : ''}`) },
    ],
  },
  operatorConfirmedFenced: {
    on: 'ConfirmHostFenced (an operator vouches the host is off)',
    rows: [
      { from: ['FENCING'], guard: '', to: 'FENCED', effects: 'fencedBy operator; owes a restart elsewhere', run: (r, p, now, ctx) => enter(r, 'FENCED', now, ctx, `ConfirmHostFenced by ${p.operator}`, { fencedBy: 'operator' }) },
      { from: but('FENCING'), guard: '', to: 'refused', effects: 'only a host being fenced can be confirmed fenced', run: refuse('operatorConfirmedFenced', 'only a host being fenced can be confirmed fenced') },
    ],
  },
  unfenced: {
    on: 'EnableService of a fenced host (after cleaning)',
    rows: [
      {
        from: ['FENCED'], guard: '', to: 'INELIGIBLE',
        effects: 'owed restart elsewhere forgiven; owes the power-on, on the host, of its own instances left shut off (`powerOn`, on the next tick)',
        run: (r, _p, now, ctx) => chain(r, [
          (x) => enter(x, 'INELIGIBLE', now, ctx, 'unfenced by EnableService'),
          (x) => forgive(x, 'unfenced by EnableService'),
          (x) => ({ next: owe(x, 'powerOn', now), effects: [] }),
        ]),
      },
      { from: but('FENCED'), guard: '', to: 'refused', effects: 'the host is not fenced', run: refuse('unfenced', 'the host is not fenced') },
    ],
  },
  resumed: {
    on: 'resumed (CLC restart)',
    rows: [{ from: ALL, guard: '', to: 'stay', effects: 'operation in flight re-issued under a new token (a fence after `disableHost`; a fence or power cycle not before the stored deadline of the one in flight, whose agent may still run); health checked now; owed attempt restarts', run: (r, _p, now, ctx) => onResumed(r, now, ctx) }],
  },
  dispatchRefused: {
    on: 'dispatchRefused (the runner\'s queue was full: the work never started)',
    rows: [
      {
        from: ALL, guard: 'the health probe', to: 'stay', effects: 'probe dropped; next check after the interval', when: (r, p) => r.health?.token === p.token,
        run: (r, _p, now, ctx) => unchanged({ ...r, health: null, nextHealthCheckAt: now + ctx.settings.healthCheckIntervalMs }),
      },
      {
        from: ['CHECKING'], guard: 'the activity check', to: 'SUSPECT', effects: 'next check after back-off', when: (r, p) => r.operation?.kind === 'activity' && r.operation.token === p.token,
        run: (r, _p, now, ctx) => enter(r, 'SUSPECT', now, ctx, 'activity check not started: the work queue is full (back-pressure)', { nextActivityCheckAt: now + activityBackoffMs(r.activityChecks, ctx.settings) }),
      },
      {
        from: ALL, guard: 'the power probe', to: 'stay', effects: 'probe dropped; next check after the interval', when: (r, p) => r.powerProbe?.token === p.token,
        run: (r, _p, now, ctx) => unchanged({ ...r, powerProbe: null, nextPowerCheckAt: now + ctx.settings.powerCheckIntervalMs }),
      },
      {
        from: ['RECOVERING', 'REMEDIATING', 'FENCING'], guard: 'the power cycle, remediation or fence', to: 'stay', effects: 'held like a storm; the attempt is not counted', when: (r, p) => r.operation?.token === p.token,
        run: (r, _p, now) => heldByBackPressure(r, now),
      },
    ],
  },
  repairResult: {
    on: 'repairResult for the owed attempt in flight',
    rows: [{ from: ALL, guard: '', to: 'stay', effects: 'done: debt cleared; else retried after back-off (a drain gives up after drainMaxAttempts)', run: (r, p, now, ctx) => onRepairResult(r, p.token, p.done, p.detail, now, ctx.settings) }],
  },
  serviceEnabled: {
    on: 'EnableService of a host that is not fenced',
    rows: [{ from: ALL, guard: 'a drain is owed', to: 'stay', effects: 'the drain is forgiven', when: (r) => r.owed?.kind === 'drain', run: (r) => forgive(r, 'the host was returned to service by EnableService') }],
  },
  powerDue: {
    on: 'tick (the BMC power watch)',
    rows: [{
      from: set(POWER_WATCHED), guard: 'no power probe in flight; power check due', to: 'stay', effects: '`powerStatus` (the fence agent\'s status, on the bounded power pool)',
      when: (r, _p, now) => !r.powerProbe && now >= r.nextPowerCheckAt,
      run: (r, _p, now, ctx) => startProbe(r, 'power', now, ctx.settings.powerCheckTimeoutMs, ctx.settings.powerCheckIntervalMs),
    }],
  },
  startupTimeout: {
    on: 'tick (Cluster API\'s nodeStartupTimeout)',
    rows: [{
      from: but('DISABLED'), guard: 'joined nodeStartupTimeoutMs ago, never reported healthy, not yet overdue', to: 'stay',
      effects: '`startupOverdue`: counted as unhealthy by the storm guard until a health check passes; warn alert',
      when: (r, _p, now, ctx) => !r.reportedHealthy && !r.startupOverdue && now >= r.joinedAt + ctx.settings.nodeStartupTimeoutMs,
      run: (r, _p, _now, ctx) => ({
        next: { ...r, startupOverdue: true },
        effects: [{
          kind: 'alert', host: r.host, level: 'warn',
          message: `host ${r.host} joined but has not reported healthy within the node-startup timeout (${ctx.settings.nodeStartupTimeoutMs} ms): counted as unhealthy (${r.reason})`,
        }],
      }),
    }],
  },
  power: {
    on: 'powerStatus for the current power probe (tick: past its deadline, dropped as unknown). The probe is cleared first',
    rows: [
      // CloudStack: a host found powered off out of band counts as fenced only once the BMC confirms it; the fence's "already off" does.
      {
        from: set(POWER_WATCHED), guard: 'the BMC says off; storm guard (counting this host unhealthy) and suspension allow', to: 'FENCING',
        effects: `${ENTER_FENCING} (the fence answers "already off")`,
        when: (_r, p, _n, ctx) => p.power === 'off' && offAllowance(ctx).allowed,
        run: (r, p, now, ctx) => enter(r, 'FENCING', now, ctx, `the BMC reports the power off (out of band): ${p.detail}`),
      },
      {
        from: set(POWER_WATCHED), guard: 'the BMC says off; storm guard or suspension refuses', to: 'stay', effects: 'warn alert; looked at again at the next power check',
        when: (_r, p) => p.power === 'off',
        run: (r, p, _now, ctx) => ({
          next: r,
          effects: [{ kind: 'alert', host: r.host, level: 'warn', message: `host ${r.host}: the BMC reports the power off (${p.detail}), not fenced: ${reasonOf(offAllowance(ctx))}` }],
        }),
      },
      { from: ALL, guard: 'on, unknown, or no longer watched', to: 'stay', effects: 'none (next check at its time)', run: (r) => unchanged(r) },
    ],
  },
};

/** A host found off may not yet count as unhealthy: fencing it must pass the guard as one more unhealthy host. */
function offAllowance(ctx: HaContext): HaContext['remediation'] {
  return ctx.remediationIfNewlyUnhealthy ?? ctx.remediation;
}

const reasonOf = (a: HaContext['remediation']): string => (a.allowed ? '' : a.reason);

/** Back-pressure on a power action: retried on the next tick; the attempt that never ran is not counted. */
function heldByBackPressure(rec: HostHaRecord, now: number): HaStep {
  const why = 'the work queue is full (back-pressure)';
  const kind = rec.operation?.kind === 'recover' || rec.operation?.kind === 'remediate' ? rec.operation.kind : 'fence';
  const target: RemediationTarget = kind === 'recover' ? 'RECOVERING' : kind === 'remediate' ? 'REMEDIATING' : 'FENCING';
  const next: HostHaRecord = {
    ...rec, operation: null, remediation: null, blocked: { target, reason: why, since: now },
    recoveryAttempts: kind === 'recover' ? rec.recoveryAttempts - 1 : rec.recoveryAttempts,
    remediationAttempts: kind === 'remediate' ? rec.remediationAttempts - 1 : rec.remediationAttempts,
    fenceAttempts: kind === 'fence' ? rec.fenceAttempts - 1 : rec.fenceAttempts,
  };
  return { next, effects: [{ kind: 'alert', host: rec.host, level: 'warn', message: `host ${rec.host}: ${kind} not started: ${why}` }] };
}

/** The activity sample counted on the record, before the table decides (result or timeout alike). */
export function countSample(rec: HostHaRecord, outcome: ActivityOutcome, now: number): HostHaRecord {
  return {
    ...rec, operation: null,
    activityChecks: rec.activityChecks + 1,
    activityFailures: rec.activityFailures + (outcome === 'inactive' ? 1 : 0),
    lastActivityCheckAt: rec.operation?.startedAt ?? now,
  };
}

/** The row a trigger selects for `rec`, or null (the trigger changes nothing). */
export function selectRow<K extends HaTrigger>(trigger: K, rec: HostHaRecord, p: HaPayloads[K], now: number, ctx: HaContext): HaRow<HaPayloads[K]> | null {
  const rows: readonly HaRow<HaPayloads[K]>[] = HA_TABLE[trigger].rows;
  return rows.find((row) => row.from.includes(rec.state) && (row.when?.(rec, p, now, ctx) ?? true)) ?? null;
}

/** Fires one trigger: the first matching row runs; none matching changes nothing. */
export function fire<K extends HaTrigger>(trigger: K, rec: HostHaRecord, p: HaPayloads[K], now: number, ctx: HaContext): HaStep {
  const row = selectRow(trigger, rec, p, now, ctx);
  return row ? row.run(rec, p, now, ctx) : unchanged(rec);
}
