/**
 * The host-HA state machine (issue 6), after CloudStack's Host-HA design, as a pure function
 * (STYLE habit 1): `step(record, event, now, ctx) -> { next, effects }`. It never runs anything; the
 * runner executes the effects and feeds their results back as events carrying the effect's token.
 * A result whose token is not the host's current operation (or health probe) is stale and changes
 * nothing: the host moved on meanwhile. The transition table is docs/ARCHITECTURE.md "Host HA".
 *
 * Safety rules kept here:
 *  - fence before evacuate: `evacuate` is emitted only while FENCED (owed from entering it), which
 *    needs a successful fence result or an operator's ConfirmHostFenced;
 *  - entering FENCING emits `disableHost` (the DisableService path) before `fence`;
 *  - a DEGRADED host (activity, no control) is owed a drain (owedRepair.ts), retried until it is
 *    disabled and empty even once its NC answers again; it is never fenced by the machine;
 *  - the restart elsewhere is owed from entering FENCED and retried until done;
 *  - HA switched off during FENCING or FENCED keeps the host until EnableService: a power-off cannot be un-issued;
 *  - a fence that fails or times out leaves FENCING with `needsOperator`: no retry by itself;
 *  - a new recovery or fence starts only when the storm guard allows it (ctx.remediation);
 *  - switching HA off does not abandon a FENCING/FENCED host: it stays until unfenced.
 */
import type { HaSettings } from './settings.js';
import type { HaEffect, HaEvent, HaState, HostHaRecord } from './hostHaState.js';
import { forgive, onRepairResult, owe, resumeRepair, startDueRepair, type RepairStep } from './owedRepair.js';

export type RemediationAllowance = { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

export interface HaContext {
  readonly settings: HaSettings;
  /** The storm guard's verdict for the host's partition, taken once per step (stormGuard.ts). */
  readonly remediation: RemediationAllowance;
}

export interface HaStep {
  readonly next: HostHaRecord;
  readonly effects: readonly HaEffect[];
}

/** An operator command the host's state does not allow (FenceHost on a FENCED host, ...). */
export class IllegalHaEventError extends Error {
  constructor(readonly host: string, readonly state: HaState, readonly event: HaEvent['type'], detail: string) {
    super(`${event} is not allowed for host ${host} in state ${state}: ${detail}`);
    this.name = 'IllegalHaEventError';
  }
}

/** States whose health is checked periodically. */
const HEALTH_WATCHED: ReadonlySet<HaState> = new Set(['AVAILABLE', 'SUSPECT', 'CHECKING', 'DEGRADED', 'RECOVERED']);
/** One failure episode: a health probe survives moves between these (a passing check must always win). */
const EPISODE: ReadonlySet<HaState> = new Set(['SUSPECT', 'CHECKING', 'DEGRADED']);
/** States a failed eligibility evaluation moves to INELIGIBLE (a started fence is finished or handed to an operator). */
const ELIGIBILITY_MATTERS: ReadonlySet<HaState> = new Set(['AVAILABLE', 'SUSPECT', 'CHECKING', 'DEGRADED', 'RECOVERING', 'RECOVERED']);

const unchanged = (rec: HostHaRecord): HaStep => ({ next: rec, effects: [] });

const CLEAN_EPISODE = {
  suspectSince: null, nextActivityCheckAt: null, lastActivityCheckAt: null, activityChecks: 0, activityFailures: 0,
  recoveryAttempts: 0, fenceAttempts: 0, needsOperator: false, fencedBy: null,
} as const;

/** Delay before activity check number `done + 1` of an episode: doubles, capped at the interval. */
export function activityBackoffMs(done: number, s: HaSettings): number {
  return Math.min(s.activityCheckInitialDelayMs * 2 ** Math.min(done, 30), s.activityCheckIntervalMs);
}

/** Moves to `to`: clears the state's operation and held remediation, applies `patch`, emits the entry effects. */
function enter(rec: HostHaRecord, to: HaState, now: number, ctx: HaContext, reason: string, patch: Partial<HostHaRecord> = {}): HaStep {
  const keepHealth = EPISODE.has(rec.state) && EPISODE.has(to);
  let next: HostHaRecord = {
    ...rec, state: to, since: now, reason, operation: null, blocked: null, needsOperator: false, health: keepHealth ? rec.health : null, ...patch,
  };
  const effects: HaEffect[] = [{ kind: 'transition', host: rec.host, from: rec.state, to, reason }];
  const s = ctx.settings;
  const host = rec.host;
  const settle = (r: RepairStep): void => {
    next = r.next;
    effects.push(...r.effects);
  };
  const newOp = (kind: 'activity' | 'recover' | 'fence', timeoutMs: number) => {
    const token = next.seq + 1;
    next = { ...next, seq: token, operation: { kind, token, startedAt: now, deadline: now + timeoutMs } };
    return token;
  };
  switch (to) {
    case 'DISABLED':
      next = { ...next, ...CLEAN_EPISODE };
      settle(forgive(next, `HA switched off (${reason})`));
      break;
    case 'INELIGIBLE':
      next = { ...next, ...CLEAN_EPISODE };
      break;
    case 'AVAILABLE':
      next = { ...next, ...CLEAN_EPISODE, nextHealthCheckAt: Math.min(next.nextHealthCheckAt, now + s.healthCheckIntervalMs) };
      if (rec.state !== 'INELIGIBLE') effects.push({ kind: 'alert', host, level: 'info', message: `host ${host} is healthy again (${reason})` });
      break;
    case 'SUSPECT':
      if (rec.state === 'AVAILABLE') effects.push({ kind: 'alert', host, level: 'warn', message: `host ${host} failed a health check: ${reason}` });
      break;
    case 'CHECKING': {
      const since = next.lastActivityCheckAt ?? next.suspectSince ?? now;
      const token = newOp('activity', s.activityCheckTimeoutMs);
      next = { ...next, nextActivityCheckAt: null };
      effects.push({ kind: 'activityCheck', host, token, since, deadline: now + s.activityCheckTimeoutMs });
      break;
    }
    case 'DEGRADED':
      // Owed from now on: a host that lost control while its VMs ran leaves service and is emptied, even if its NC comes back.
      settle(startDueRepair(owe(next, 'drain', now), now, s));
      effects.push({ kind: 'alert', host, level: 'warn', message: `host ${host} is degraded (activity without control): disabling and draining it` });
      break;
    case 'RECOVERING': {
      next = { ...next, recoveryAttempts: next.recoveryAttempts + 1 };
      const token = newOp('recover', s.recoverTimeoutMs);
      effects.push({ kind: 'recover', host, token, deadline: now + s.recoverTimeoutMs });
      effects.push({ kind: 'alert', host, level: 'warn', message: `host ${host}: power cycle ${next.recoveryAttempts} of ${s.recoverFailureThreshold} (${reason})` });
      break;
    }
    case 'RECOVERED':
      next = { ...next, nextHealthCheckAt: now };
      break;
    case 'FENCING': {
      if (next.owed?.kind === 'drain') settle(forgive(next, 'the host is being fenced; its instances restart elsewhere once FENCED'));
      next = { ...next, fenceAttempts: next.fenceAttempts + 1 };
      effects.push({ kind: 'disableHost', host, reason: `fencing: ${reason}` });
      const token = newOp('fence', s.fenceTimeoutMs);
      effects.push({ kind: 'fence', host, token, deadline: now + s.fenceTimeoutMs });
      effects.push({ kind: 'alert', host, level: 'critical', message: `host ${host} is being fenced (${reason})` });
      break;
    }
    case 'FENCED':
      settle(startDueRepair(owe(next.owed?.kind === 'drain' ? { ...next, owed: null } : next, 'evacuate', now), now, s));
      effects.push({ kind: 'alert', host, level: 'critical', message: `host ${host} is fenced (${reason}); its instances restart elsewhere` });
      break;
  }
  return { next, effects };
}

/** Starts a recovery or a fence if the storm guard allows it; otherwise records why not and waits. */
function startRemediation(rec: HostHaRecord, target: 'RECOVERING' | 'FENCING', now: number, ctx: HaContext, reason: string): HaStep {
  const to = target === 'RECOVERING' && rec.recoveryAttempts >= ctx.settings.recoverFailureThreshold ? 'FENCING' : target;
  const why = to !== target ? `${reason}; ${rec.recoveryAttempts} recovery attempt(s) reached the threshold` : reason;
  if (ctx.remediation.allowed) return enter(rec, to, now, ctx, why);
  if (rec.blocked?.target === to && rec.blocked.reason === ctx.remediation.reason) return unchanged(rec);
  const blocked = { target: to, reason: ctx.remediation.reason, since: rec.blocked?.since ?? now };
  return {
    next: { ...rec, operation: null, blocked },
    effects: [{ kind: 'alert', host: rec.host, level: 'warn', message: `host ${rec.host}: ${to} held back: ${ctx.remediation.reason}` }],
  };
}

function onHealth(rec: HostHaRecord, healthy: boolean, detail: string, now: number, ctx: HaContext): HaStep {
  const cleared = { ...rec, health: null };
  if (healthy) {
    if (rec.state === 'AVAILABLE') return unchanged(cleared);
    if (EPISODE.has(rec.state) || rec.state === 'RECOVERED') return enter(cleared, 'AVAILABLE', now, ctx, `health check passed: ${detail}`);
    return unchanged(cleared);
  }
  if (rec.state !== 'AVAILABLE') return unchanged(cleared);
  return enter(cleared, 'SUSPECT', now, ctx, detail, {
    suspectSince: now, nextActivityCheckAt: now + activityBackoffMs(0, ctx.settings),
  });
}

function onActivity(rec: HostHaRecord, outcome: 'active' | 'inactive' | 'unknown', detail: string, now: number, ctx: HaContext): HaStep {
  const s = ctx.settings;
  const counted: HostHaRecord = {
    ...rec, operation: null,
    activityChecks: rec.activityChecks + 1,
    activityFailures: rec.activityFailures + (outcome === 'inactive' ? 1 : 0),
    lastActivityCheckAt: rec.operation?.startedAt ?? now,
  };
  const summary = `${counted.activityFailures} of ${counted.activityChecks} activity checks found no activity (last: ${outcome}, ${detail})`;
  if (counted.activityChecks < s.activityCheckMaxAttempts) {
    return enter(counted, 'SUSPECT', now, ctx, summary, { nextActivityCheckAt: now + activityBackoffMs(counted.activityChecks, s) });
  }
  // CloudStack's rule: recover when failures exceed attempts × ratio; inconclusive samples never push toward power actions.
  if (counted.activityFailures > counted.activityChecks * s.activityCheckFailureRatio) {
    return startRemediation(counted, 'RECOVERING', now, ctx, summary);
  }
  return enter(counted, 'DEGRADED', now, ctx, summary);
}

function onRecoveryFailed(rec: HostHaRecord, detail: string, now: number, ctx: HaContext): HaStep {
  // Another power cycle while under the threshold, else FENCING (startRemediation decides); both pass the storm guard.
  return startRemediation({ ...rec, operation: null }, 'RECOVERING', now, ctx, `recovery attempt ${rec.recoveryAttempts} failed: ${detail}`);
}

function onFenceFailed(rec: HostHaRecord, detail: string): HaStep {
  const next: HostHaRecord = { ...rec, operation: null, needsOperator: true, reason: `fence failed: ${detail}` };
  return {
    next,
    effects: [{
      kind: 'alert', host: rec.host, level: 'critical',
      message: `host ${rec.host}: fence failed (${detail}); an operator must power it off and ConfirmHostFenced, or retry FenceHost`,
    }],
  };
}

type Handler = (rec: HostHaRecord) => HaStep;

/** Runs handlers in order, each on the record the previous one left. */
function chain(rec: HostHaRecord, handlers: readonly Handler[]): HaStep {
  let next = rec;
  const effects: HaEffect[] = [];
  for (const h of handlers) {
    const r = h(next);
    next = r.next;
    effects.push(...r.effects);
  }
  return { next, effects };
}

function onTick(rec: HostHaRecord, now: number, ctx: HaContext): HaStep {
  const s = ctx.settings;
  return chain(rec, [
    // Timeouts first: a late answer is a failed (or, for activity, inconclusive) one.
    (r) => (r.health && now >= r.health.deadline ? onHealth(r, false, 'health check timed out', now, ctx) : unchanged(r)),
    (r) => {
      const op = r.operation;
      if (!op || now < op.deadline) return unchanged(r);
      if (op.kind === 'activity') return onActivity(r, 'unknown', 'activity check timed out', now, ctx);
      if (op.kind === 'recover') return onRecoveryFailed(r, 'power cycle timed out', now, ctx);
      return onFenceFailed(r, 'fence timed out');
    },
    (r) => (r.blocked ? startRemediation(r, r.blocked.target, now, ctx, `${r.reason} (held since ${r.blocked.since})`) : unchanged(r)),
    (r) => {
      if (r.blocked || r.operation) return unchanged(r);
      if (r.state === 'SUSPECT' && r.nextActivityCheckAt !== null && now >= r.nextActivityCheckAt) {
        return enter(r, 'CHECKING', now, ctx, `activity check ${r.activityChecks + 1} of ${s.activityCheckMaxAttempts}`);
      }
      if (r.state === 'DEGRADED' && now >= r.since + s.degradedMaxPeriodMs) {
        return enter(r, 'SUSPECT', now, ctx, 'degraded period over: re-checking activity', {
          activityChecks: 0, activityFailures: 0, lastActivityCheckAt: null, nextActivityCheckAt: now,
        });
      }
      if (r.state === 'RECOVERED' && now >= r.since + s.recoverWaitPeriodMs) {
        return onRecoveryFailed(r, 'no passing health check within the recover wait period', now, ctx);
      }
      return unchanged(r);
    },
    (r) => {
      if (!HEALTH_WATCHED.has(r.state) || r.health || now < r.nextHealthCheckAt) return unchanged(r);
      const token = r.seq + 1;
      const deadline = now + s.healthCheckTimeoutMs;
      return {
        next: { ...r, seq: token, health: { token, startedAt: now, deadline }, nextHealthCheckAt: now + s.healthCheckIntervalMs },
        effects: [{ kind: 'healthCheck', host: r.host, token, deadline }],
      };
    },
    (r) => startDueRepair(r, now, s),
  ]);
}

/** After a CLC restart: the operation in flight is issued again under a new token (off and status are idempotent). */
function onResumed(rec: HostHaRecord, now: number, ctx: HaContext): HaStep {
  const s = ctx.settings;
  const base: HostHaRecord = resumeRepair({ ...rec, health: null, nextHealthCheckAt: Math.min(rec.nextHealthCheckAt, now) }, now);
  const op = rec.operation;
  if (!op) return { next: base, effects: [] };
  const token = rec.seq + 1;
  const host = rec.host;
  const timeoutMs = op.kind === 'activity' ? s.activityCheckTimeoutMs : op.kind === 'recover' ? s.recoverTimeoutMs : s.fenceTimeoutMs;
  const deadline = now + timeoutMs;
  const next: HostHaRecord = { ...base, seq: token, operation: { kind: op.kind, token, startedAt: now, deadline } };
  const effect: HaEffect = op.kind === 'activity'
    ? { kind: 'activityCheck', host, token, since: rec.lastActivityCheckAt ?? rec.suspectSince ?? op.startedAt, deadline }
    : { kind: op.kind, host, token, deadline };
  const again: HaEffect[] = op.kind === 'fence' ? [{ kind: 'disableHost', host, reason: `fencing resumed after a restart: ${rec.reason}` }] : [];
  return { next, effects: [...again, effect, { kind: 'alert', host, level: 'info', message: `host ${host}: ${op.kind} resumed after a CLC restart` }] };
}

/** Back-pressure: the work never started, so it is no verdict; it is tried again later. */
function onRefused(rec: HostHaRecord, token: number, now: number, ctx: HaContext): HaStep {
  const s = ctx.settings;
  const why = 'the work queue is full (back-pressure)';
  if (rec.health?.token === token) return unchanged({ ...rec, health: null, nextHealthCheckAt: now + s.healthCheckIntervalMs });
  const op = rec.operation;
  if (op?.token !== token) return unchanged(rec);
  if (op.kind === 'activity') {
    return enter(rec, 'SUSPECT', now, ctx, `activity check not started: ${why}`, { nextActivityCheckAt: now + activityBackoffMs(rec.activityChecks, s) });
  }
  // Held like a storm: retried on the next tick; the attempt that never ran is not counted.
  const target = op.kind === 'recover' ? 'RECOVERING' : 'FENCING';
  const next: HostHaRecord = {
    ...rec, operation: null, blocked: { target, reason: why, since: now },
    recoveryAttempts: op.kind === 'recover' ? rec.recoveryAttempts - 1 : rec.recoveryAttempts,
    fenceAttempts: op.kind === 'fence' ? rec.fenceAttempts - 1 : rec.fenceAttempts,
  };
  return { next, effects: [{ kind: 'alert', host: rec.host, level: 'warn', message: `host ${rec.host}: ${op.kind} not started: ${why}` }] };
}

const isCurrent = (rec: HostHaRecord, kind: 'activity' | 'recover' | 'fence', token: number): boolean =>
  rec.operation?.kind === kind && rec.operation.token === token;

const DISABLE_WAITS = 'HA switch-off waits until the fenced host is returned by EnableService';

/** HA switched off: at once, except for a host being fenced or fenced (a power-off cannot be un-issued; the host stays HA's until EnableService). */
function onHaDisabled(rec: HostHaRecord, reason: string, now: number, ctx: HaContext): HaStep {
  // A fence is a commitment: a FENCED host stays in HA's hands (maintenance, obsolete copies destroyed)
  // until an operator returns it with EnableService; then HA goes off (found by simulator seed 326).
  if (rec.state === 'DISABLED' || rec.state === 'FENCED') return unchanged(rec);
  if (rec.state !== 'FENCING') return enter(rec, 'DISABLED', now, ctx, reason);
  if (rec.reason.endsWith(DISABLE_WAITS)) return unchanged(rec);
  return {
    next: { ...rec, reason: `${rec.reason}; ${DISABLE_WAITS}` },
    effects: [{ kind: 'alert', host: rec.host, level: 'warn', message: `host ${rec.host}: ${reason}, but it is being fenced: ${DISABLE_WAITS}` }],
  };
}

export function step(rec: HostHaRecord, event: HaEvent, now: number, ctx: HaContext): HaStep {
  switch (event.type) {
    case 'haDisabled':
      return onHaDisabled(rec, event.reason, now, ctx);
    case 'haEnabled':
      return rec.state === 'DISABLED' ? enter(rec, 'INELIGIBLE', now, ctx, 'HA enabled; eligibility not yet evaluated') : unchanged(rec);
    case 'eligibility':
      if (!event.eligible && ELIGIBILITY_MATTERS.has(rec.state)) return enter(rec, 'INELIGIBLE', now, ctx, event.reason);
      if (event.eligible && rec.state === 'INELIGIBLE') return enter(rec, 'AVAILABLE', now, ctx, 'eligible', { nextHealthCheckAt: now });
      // Still ineligible, for a reason now known (or changed): say why, without a transition.
      if (!event.eligible && rec.state === 'INELIGIBLE' && rec.reason !== event.reason) return { next: { ...rec, reason: event.reason }, effects: [] };
      return unchanged(rec);
    case 'tick':
      return onTick(rec, now, ctx);
    case 'healthResult':
      return rec.health?.token === event.token ? onHealth(rec, event.healthy, event.detail, now, ctx) : unchanged(rec);
    case 'activityResult':
      return isCurrent(rec, 'activity', event.token) ? onActivity(rec, event.outcome, event.detail, now, ctx) : unchanged(rec);
    case 'recoverResult':
      if (!isCurrent(rec, 'recover', event.token)) return unchanged(rec);
      return event.ok
        ? enter(rec, 'RECOVERED', now, ctx, `power cycled: ${event.detail}`)
        : onRecoveryFailed(rec, event.detail, now, ctx);
    case 'fenceResult':
      if (!isCurrent(rec, 'fence', event.token)) return unchanged(rec);
      return event.ok
        ? enter(rec, 'FENCED', now, ctx, `power off confirmed: ${event.detail}`, { fencedBy: 'agent' })
        : onFenceFailed(rec, event.detail);
    case 'fenceRequested':
      if (rec.state === 'DISABLED' || rec.state === 'FENCED') {
        throw new IllegalHaEventError(rec.host, rec.state, event.type, rec.state === 'FENCED' ? 'already fenced' : 'HA is disabled for it');
      }
      if (rec.state === 'FENCING' && !rec.needsOperator) throw new IllegalHaEventError(rec.host, rec.state, event.type, 'a fence is already running');
      // An operator's decision: the storm guard does not apply.
      return enter(rec, 'FENCING', now, ctx, `FenceHost by ${event.operator}`);
    case 'operatorConfirmedFenced':
      if (rec.state !== 'FENCING') throw new IllegalHaEventError(rec.host, rec.state, event.type, 'only a host being fenced can be confirmed fenced');
      return enter(rec, 'FENCED', now, ctx, `ConfirmHostFenced by ${event.operator}`, { fencedBy: 'operator' });
    case 'unfenced':
      if (rec.state !== 'FENCED') throw new IllegalHaEventError(rec.host, rec.state, event.type, 'the host is not fenced');
      return chain(rec, [(r) => enter(r, 'INELIGIBLE', now, ctx, 'unfenced by EnableService'), (r) => forgive(r, 'unfenced by EnableService')]);
    case 'resumed':
      return onResumed(rec, now, ctx);
    case 'dispatchRefused':
      return onRefused(rec, event.token, now, ctx);
    case 'repairResult':
      return onRepairResult(rec, event.token, event.done, event.detail, now, ctx.settings);
    case 'serviceEnabled':
      return rec.owed?.kind === 'drain' ? forgive(rec, 'the host was returned to service by EnableService') : unchanged(rec);
  }
}
