/**
 * The moves of the host-HA machine (issue 6): what entering a state does (`enter`), the storm-guarded
 * start of a recovery or fence, and the small record updates the transition table
 * (hostHaTransitions.ts) names as its effects. Pure: every function returns `{ next, effects }`.
 */
import type { HaSettings } from './settings.js';
import type { HaEffect, HaEvent, HaState, HostHaRecord } from './hostHaState.js';
import { forgive, owe, resumeRepair, startDueRepair, type RepairStep } from './owedRepair.js';

export type RemediationAllowance = { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

export interface HaContext {
  readonly settings: HaSettings;
  /** The storm guard's verdict for the host's partition, taken once per step (stormGuard.ts). */
  readonly remediation: RemediationAllowance;
  /**
   * Why the host's automation is suspended now (suspension.ts), or absent: owed repairs are then
   * kept but not started (Ganeti harep: neither executed nor lost), a storm alone does not hold them.
   */
  readonly suspended?: string;
}

export interface HaStep {
  readonly next: HostHaRecord;
  readonly effects: readonly HaEffect[];
}

/**
 * An operator command the host's state does not allow (ConfirmHostFenced of an AVAILABLE host, ...).
 * `healthy`: refused only because the host is up and healthy (FenceHost without Force).
 */
export class IllegalHaEventError extends Error {
  constructor(readonly host: string, readonly state: HaState, readonly event: HaEvent['type'], readonly detail: string, readonly healthy = false) {
    super(`${event} is not allowed for host ${host} in state ${state}: ${detail}`);
    this.name = 'IllegalHaEventError';
  }
}

/** States whose health is checked periodically. */
export const HEALTH_WATCHED: ReadonlySet<HaState> = new Set(['AVAILABLE', 'SUSPECT', 'CHECKING', 'DEGRADED', 'RECOVERED']);
/**
 * States whose BMC power status is watched (CloudStack): a host found off there is fenced through the
 * BMC ("already off" is a success). Not RECOVERING/RECOVERED (a power cycle is under way), not FENCING/FENCED.
 */
export const POWER_WATCHED: ReadonlySet<HaState> = new Set(['AVAILABLE', 'SUSPECT', 'CHECKING', 'DEGRADED']);
/** One failure episode: a health probe survives moves between these (a passing check must always win). */
export const EPISODE: ReadonlySet<HaState> = new Set(['SUSPECT', 'CHECKING', 'DEGRADED']);
/** States a failed eligibility evaluation moves to INELIGIBLE (a started fence is finished or handed to an operator). */
export const ELIGIBILITY_MATTERS: ReadonlySet<HaState> = new Set(['AVAILABLE', 'SUSPECT', 'CHECKING', 'DEGRADED', 'RECOVERING', 'RECOVERED']);

export const unchanged = (rec: HostHaRecord): HaStep => ({ next: rec, effects: [] });

const CLEAN_EPISODE = {
  suspectSince: null, nextActivityCheckAt: null, lastActivityCheckAt: null, activityChecks: 0, activityFailures: 0,
  recoveryAttempts: 0, fenceAttempts: 0, needsOperator: false, fencedBy: null,
} as const;

/** Delay before activity check number `done + 1` of an episode: doubles, capped at the interval. */
export function activityBackoffMs(done: number, s: HaSettings): number {
  return Math.min(s.activityCheckInitialDelayMs * 2 ** Math.min(done, 30), s.activityCheckIntervalMs);
}

/** Moves to `to`: clears the state's operation and held remediation, applies `patch`, emits the entry effects. */
export function enter(rec: HostHaRecord, to: HaState, now: number, ctx: HaContext, reason: string, patch: Partial<HostHaRecord> = {}): HaStep {
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
      settle(startDueRepair(owe(next, 'drain', now), now, s, ctx.suspended));
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
      if (next.owed?.kind === 'drain' || next.owed?.kind === 'powerOn') settle(forgive(next, 'the host is being fenced; its instances restart elsewhere once FENCED'));
      next = { ...next, fenceAttempts: next.fenceAttempts + 1 };
      effects.push({ kind: 'disableHost', host, reason: `fencing: ${reason}` });
      const token = newOp('fence', s.fenceTimeoutMs);
      effects.push({ kind: 'fence', host, token, deadline: now + s.fenceTimeoutMs });
      effects.push({ kind: 'alert', host, level: 'critical', message: `host ${host} is being fenced (${reason})` });
      break;
    }
    case 'FENCED':
      settle(startDueRepair(owe(next.owed?.kind === 'drain' ? { ...next, owed: null } : next, 'evacuate', now), now, s, ctx.suspended));
      effects.push({ kind: 'alert', host, level: 'critical', message: `host ${host} is fenced (${reason}); its instances restart elsewhere` });
      break;
  }
  return { next, effects };
}

/** Starts a recovery or a fence if the storm guard allows it; otherwise records why not and waits. */
export function startRemediation(rec: HostHaRecord, target: 'RECOVERING' | 'FENCING', now: number, ctx: HaContext, reason: string): HaStep {
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

export function onFenceFailed(rec: HostHaRecord, detail: string): HaStep {
  const next: HostHaRecord = { ...rec, operation: null, needsOperator: true, reason: `fence failed: ${detail}` };
  return {
    next,
    effects: [{
      kind: 'alert', host: rec.host, level: 'critical',
      message: `host ${rec.host}: fence failed (${detail}); an operator must power it off and ConfirmHostFenced, or retry FenceHost`,
    }],
  };
}

export type Handler = (rec: HostHaRecord) => HaStep;

/** Runs handlers in order, each on the record the previous one left. */
export function chain(rec: HostHaRecord, handlers: readonly Handler[]): HaStep {
  let next = rec;
  const effects: HaEffect[] = [];
  for (const h of handlers) {
    const r = h(next);
    next = r.next;
    effects.push(...r.effects);
  }
  return { next, effects };
}
/** After a CLC restart: the operation in flight is issued again under a new token (off and status are idempotent). */
export function onResumed(rec: HostHaRecord, now: number, ctx: HaContext): HaStep {
  const s = ctx.settings;
  const base: HostHaRecord = resumeRepair({ ...rec, health: null, nextHealthCheckAt: Math.min(rec.nextHealthCheckAt, now), powerProbe: null }, now);
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

