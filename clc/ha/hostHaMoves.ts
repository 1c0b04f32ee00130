/**
 * The moves of the host-HA machine (issue 6): what entering a state does (`enter`), the storm-guarded
 * start of a recovery or fence, and the small record updates the transition table
 * (hostHaTransitions.ts) names as its effects. Pure: every function returns `{ next, effects }`.
 */
import type { HaSettings } from './settings.js';
import type { HaEffect, HaEvent, HaState, HostHaRecord, RemediationTarget } from './hostHaState.js';
import { forgive, owe, resumeRepair, startDueRepair, type RepairHold, type RepairStep } from './owedRepair.js';

export type RemediationAllowance = { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

export interface HaContext {
  readonly settings: HaSettings;
  /** The storm guard's verdict for the host's partition, taken once per step (stormGuard.ts). */
  readonly remediation: RemediationAllowance;
  /**
   * The verdict counting this host as unhealthy, for a host the guard does not count so yet (an
   * AVAILABLE host its BMC reports off): remediating it must not itself take the partition past its
   * bound. Absent: the same as `remediation`.
   */
  readonly remediationIfNewlyUnhealthy?: RemediationAllowance;
  /**
   * Why the host's automation is suspended now (suspension.ts), or absent: owed repairs are then
   * kept but not started (Ganeti harep: neither executed nor lost), a storm alone does not hold them.
   */
  readonly suspended?: string;
  /**
   * While the storm guard refuses remediation in the host's partition: a stable text saying so
   * (haRunner.haContexts). Owed drains are then held too (owedRepair.holdFor): a drain takes a host
   * out of service, and a partition-wide storm has a common cause more often than many sick hosts.
   */
  readonly stormHold?: string;
  /**
   * The partition's remediation strategy (remediation.ts): `fence` (default) power-cycles and fences;
   * `external` hands the host to an operator-supplied command or webhook first (Cluster API's
   * external remediation), escalating to the fence if it fails or times out.
   */
  readonly strategy?: 'fence' | 'external';
}

export interface HaStep {
  readonly next: HostHaRecord;
  readonly effects: readonly HaEffect[];
}

/**
 * Why an operator command is refused: the state does not allow it, the host is up and healthy
 * (FenceHost without Force), no external remediation is in flight, or the report names another one.
 */
export type HaRefusal = 'state' | 'healthy' | 'notRemediating' | 'staleRemediation';

/** An operator command the host's state does not allow (ConfirmHostFenced of an AVAILABLE host, ...). */
export class IllegalHaEventError extends Error {
  constructor(readonly host: string, readonly state: HaState, readonly event: HaEvent['type'], readonly detail: string, readonly refusal: HaRefusal = 'state') {
    super(`${event} is not allowed for host ${host} in state ${state}: ${detail}`);
    this.name = 'IllegalHaEventError';
  }

  /** Refused only because the host is up and healthy (FenceHost without Force). */
  get healthy(): boolean {
    return this.refusal === 'healthy';
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
export const ELIGIBILITY_MATTERS: ReadonlySet<HaState> = new Set(['AVAILABLE', 'SUSPECT', 'CHECKING', 'DEGRADED', 'RECOVERING', 'RECOVERED', 'REMEDIATING']);

export const unchanged = (rec: HostHaRecord): HaStep => ({ next: rec, effects: [] });

/** What holds a due owed repair in this context (owedRepair.holdFor decides per kind). */
export function repairHold(ctx: HaContext): RepairHold {
  return { ...(ctx.suspended !== undefined ? { suspended: ctx.suspended } : {}), ...(ctx.stormHold !== undefined ? { storm: ctx.stormHold } : {}) };
}

const CLEAN_EPISODE = {
  suspectSince: null, nextActivityCheckAt: null, lastActivityCheckAt: null, activityChecks: 0, activityFailures: 0,
  recoveryAttempts: 0, fenceAttempts: 0, remediationAttempts: 0, needsOperator: false, fencedBy: null,
} as const;

/** Delay before activity check number `done + 1` of an episode: doubles, capped at the interval. */
export function activityBackoffMs(done: number, s: HaSettings): number {
  return Math.min(s.activityCheckInitialDelayMs * 2 ** Math.min(done, 30), s.activityCheckIntervalMs);
}

/** Moves to `to`: clears the state's operation and held remediation, applies `patch`, emits the entry effects. */
export function enter(rec: HostHaRecord, to: HaState, now: number, ctx: HaContext, reason: string, patch: Partial<HostHaRecord> = {}): HaStep {
  const keepHealth = EPISODE.has(rec.state) && EPISODE.has(to);
  let next: HostHaRecord = {
    ...rec, state: to, since: now, reason, operation: null, blocked: null, needsOperator: false, remediation: null, health: keepHealth ? rec.health : null, ...patch,
  };
  const effects: HaEffect[] = [{ kind: 'transition', host: rec.host, from: rec.state, to, reason }];
  const s = ctx.settings;
  const host = rec.host;
  const settle = (r: RepairStep): void => {
    next = r.next;
    effects.push(...r.effects);
  };
  const newOp = (kind: 'activity' | 'recover' | 'remediate' | 'fence', timeoutMs: number) => {
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
      effects.push({ kind: 'alert', host, level: 'warn', message: `host ${host} is degraded (activity without control): it owes a drain (disable, then migrate its instances)` });
      settle(startDueRepair(owe(next, 'drain', now), now, s, repairHold(ctx)));
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
    case 'REMEDIATING': {
      const timeoutMs = s.externalRemediationTimeoutMs;
      const token = newOp('remediate', timeoutMs);
      // Unique per host record and episode: the token only grows; a stale report names an older one.
      const id = `${token}-${now.toString(36)}`;
      next = { ...next, remediationAttempts: next.remediationAttempts + 1, remediation: { id, since: now, accepted: false } };
      effects.push({ kind: 'externalRemediation', host, token, id, reason, deadline: now + timeoutMs });
      effects.push({ kind: 'alert', host, level: 'warn', message: `host ${host} handed to external remediation ${id}; waiting up to ${timeoutMs} ms for it to report done (${reason})` });
      break;
    }
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
      settle(startDueRepair(owe(next.owed?.kind === 'drain' ? { ...next, owed: null } : next, 'evacuate', now), now, s, repairHold(ctx)));
      effects.push({ kind: 'alert', host, level: 'critical', message: `host ${host} is fenced (${reason}); its instances restart elsewhere` });
      break;
  }
  return { next, effects };
}

/**
 * What a remediation asked as `target` starts. A fence stays a fence. With strategy `external`, the
 * episode's first remediation is handed out (REMEDIATING) and any further one escalates to a fence
 * (Medik8s); otherwise a power cycle, or a fence once recover.failure.threshold attempts were made.
 */
export function remediationTarget(rec: HostHaRecord, target: RemediationTarget, ctx: HaContext): RemediationTarget {
  if (target === 'FENCING') return 'FENCING';
  if (ctx.strategy === 'external') return rec.remediationAttempts > 0 ? 'FENCING' : 'REMEDIATING';
  return rec.recoveryAttempts >= ctx.settings.recoverFailureThreshold ? 'FENCING' : 'RECOVERING';
}

/** Starts a recovery, external remediation or fence if the storm guard allows it; otherwise records why not and waits. */
export function startRemediation(rec: HostHaRecord, target: RemediationTarget, now: number, ctx: HaContext, reason: string): HaStep {
  const to = remediationTarget(rec, target, ctx);
  const why = to === target ? reason : to === 'REMEDIATING' ? `${reason}; handed to external remediation`
    : rec.remediationAttempts > 0 ? `${reason}; escalated after ${rec.remediationAttempts} external remediation(s)`
      : `${reason}; ${rec.recoveryAttempts} recovery attempt(s) reached the threshold`;
  if (ctx.remediation.allowed) return enter(rec, to, now, ctx, why);
  if (rec.blocked?.target === to && rec.blocked.reason === ctx.remediation.reason) return unchanged(rec);
  const blocked = { target: to, reason: ctx.remediation.reason, since: rec.blocked?.since ?? now };
  return {
    next: { ...rec, operation: null, remediation: null, blocked },
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
/**
 * A drain the storm guard held before its first attempt, forgiven once the host passes a health
 * check: it degraded during a storm in its partition, whose common cause (a slow CC, a network
 * fault) is likelier than many sick hosts at once. One whose drain had started is still drained.
 */
export function forgiveStormHeldDrain(rec: HostHaRecord): HaStep {
  const o = rec.owed;
  if (o?.kind !== 'drain' || o.stormHeld !== true || o.attempts > 0 || o.inFlight !== null) return unchanged(rec);
  return forgive(rec, 'its health check passed before the drain started; it degraded during a storm in its partition');
}

/** After a CLC restart: the operation in flight is issued again under a new token (off and status are idempotent). */
export function onResumed(rec: HostHaRecord, now: number, ctx: HaContext): HaStep {
  const s = ctx.settings;
  const base: HostHaRecord = resumeRepair({ ...rec, health: null, nextHealthCheckAt: Math.min(rec.nextHealthCheckAt, now), powerProbe: null }, now);
  const op = rec.operation;
  if (!op) return { next: base, effects: [] };
  const host = rec.host;
  const rem = rec.remediation;
  if (op.kind === 'remediate' && rem?.accepted === true) {
    // Handed out and accepted before the restart: not asked again; its report (or the timeout) concludes it.
    return { next: base, effects: [{ kind: 'alert', host, level: 'info', message: `host ${host}: external remediation ${rem.id} resumed after a CLC restart; still waiting for its report` }] };
  }
  const token = rec.seq + 1;
  const timeoutMs = op.kind === 'activity' ? s.activityCheckTimeoutMs : op.kind === 'recover' ? s.recoverTimeoutMs
    : op.kind === 'remediate' ? s.externalRemediationTimeoutMs : s.fenceTimeoutMs;
  // Issue 21: the fence or power cycle a killed (or deposed) CLC started may still run until its stored
  // deadline (the agent outlives the CLC): the new one starts then, so two agents never race to power it off.
  const notBefore = (op.kind === 'fence' || op.kind === 'recover') && op.deadline > now ? op.deadline : undefined;
  const deadline = (notBefore ?? now) + timeoutMs;
  const next: HostHaRecord = { ...base, seq: token, operation: { kind: op.kind, token, startedAt: now, deadline } };
  // A remediation never accepted is handed out again under its id, so a receiver that did see it can tell.
  const effect: HaEffect = op.kind === 'activity'
    ? { kind: 'activityCheck', host, token, since: rec.lastActivityCheckAt ?? rec.suspectSince ?? op.startedAt, deadline }
    : op.kind === 'remediate' ? { kind: 'externalRemediation', host, token, id: rem?.id ?? `${token}-${now.toString(36)}`, reason: rec.reason, deadline }
      : { kind: op.kind, host, token, deadline, ...(notBefore !== undefined ? { notBefore } : {}) };
  const again: HaEffect[] = op.kind === 'fence' ? [{ kind: 'disableHost', host, reason: `fencing resumed after a restart: ${rec.reason}` }] : [];
  return { next, effects: [...again, effect, { kind: 'alert', host, level: 'info', message: `host ${host}: ${op.kind} resumed after a CLC restart` }] };
}

