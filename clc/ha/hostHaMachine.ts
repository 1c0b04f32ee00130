/**
 * The host-HA state machine (issue 6), after CloudStack's Host-HA design, as a pure function
 * (STYLE habit 1): `step(record, event, now, ctx) -> { next, effects }`. It never runs anything; the
 * runner executes the effects and feeds their results back as events carrying the effect's token.
 * A result whose token is not the host's current operation (or health probe) is stale and changes
 * nothing: the host moved on meanwhile. Every move is a row of the transition table
 * (hostHaTransitions.ts, rendered in docs/ARCHITECTURE.md "Host HA"); step() only maps an event to
 * the table's triggers (a tick to its checks, in order) and prepares the record.
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
 *  - a new recovery, external remediation or fence starts only when the storm guard allows it (ctx.remediation);
 *  - an external remediation (strategy external) never restarts instances elsewhere: done means the
 *    health check decides; failed or timed out escalates to a fence, which must succeed before FENCED;
 *  - switching HA off does not abandon a FENCING/FENCED host: it stays until unfenced.
 */
import type { HaEvent, HostHaRecord } from './hostHaState.js';
import { chain, unchanged, type HaContext, type HaStep } from './hostHaMoves.js';
import { countSample, fire } from './hostHaTransitions.js';

export { IllegalHaEventError, activityBackoffMs, type HaContext, type HaStep, type RemediationAllowance } from './hostHaMoves.js';

const isCurrent = (rec: HostHaRecord, kind: 'activity' | 'recover' | 'remediate' | 'fence', token: number): boolean =>
  rec.operation?.kind === kind && rec.operation.token === token;

/** A tick's checks, in order, each on the record the previous one left: timeouts first (a late answer is a failed or inconclusive one). */
function onTick(rec: HostHaRecord, now: number, ctx: HaContext): HaStep {
  return chain(rec, [
    (r) => (r.health && now >= r.health.deadline ? fire('health', { ...r, health: null }, { outcome: 'unknown', detail: 'health check timed out' }, now, ctx) : unchanged(r)),
    (r) => {
      const op = r.operation;
      if (!op || now < op.deadline) return unchanged(r);
      if (op.kind === 'activity') return fire('activity', countSample(r, 'unknown', now), { outcome: 'unknown', detail: 'activity check timed out' }, now, ctx);
      if (op.kind === 'recover') return fire('recoveryFailed', { ...r, operation: null }, { detail: 'power cycle timed out' }, now, ctx);
      if (op.kind === 'remediate') {
        const detail = `not reported done within ${ctx.settings.externalRemediationTimeoutMs} ms (${r.remediation?.accepted === true ? 'accepted' : 'never accepted'})`;
        return fire('remediationFailed', { ...r, operation: null, remediation: null }, { detail }, now, ctx);
      }
      return fire('fenceFailed', r, { detail: 'fence timed out' }, now, ctx);
    },
    (r) => fire('held', r, {}, now, ctx),
    (r) => fire('timers', r, {}, now, ctx),
    (r) => fire('healthDue', r, {}, now, ctx),
    (r) => fire('repairDue', r, {}, now, ctx),
    // A power status past its deadline is unknown: dropped, never read as "off".
    (r) => (r.powerProbe && now >= r.powerProbe.deadline ? unchanged({ ...r, powerProbe: null }) : unchanged(r)),
    (r) => fire('powerDue', r, {}, now, ctx),
    (r) => fire('startupTimeout', r, {}, now, ctx),
  ]);
}

export function step(rec: HostHaRecord, event: HaEvent, now: number, ctx: HaContext): HaStep {
  switch (event.type) {
    case 'tick':
      return onTick(rec, now, ctx);
    case 'healthResult':
      if (rec.health?.token !== event.token) return unchanged(rec);
      // A passing check is the host's first report of health, if it never made one: the startup timeout no longer applies.
      return fire('health', event.outcome === 'healthy' ? { ...rec, health: null, reportedHealthy: true, startupOverdue: false } : { ...rec, health: null }, event, now, ctx);
    case 'activityResult':
      return isCurrent(rec, 'activity', event.token) ? fire('activity', countSample(rec, event.outcome, now), event, now, ctx) : unchanged(rec);
    case 'recoverResult':
      if (!isCurrent(rec, 'recover', event.token)) return unchanged(rec);
      return event.ok ? fire('recovered', rec, event, now, ctx) : fire('recoveryFailed', { ...rec, operation: null }, event, now, ctx);
    case 'fenceResult':
      if (!isCurrent(rec, 'fence', event.token)) return unchanged(rec);
      return event.ok ? fire('fenced', rec, event, now, ctx) : fire('fenceFailed', rec, event, now, ctx);
    case 'remediationResult':
      if (!isCurrent(rec, 'remediate', event.token)) return unchanged(rec);
      if (event.outcome === 'accepted') return fire('remediationAccepted', rec, event, now, ctx);
      return event.outcome === 'done'
        ? fire('remediated', rec, event, now, ctx)
        : fire('remediationFailed', { ...rec, operation: null, remediation: null }, event, now, ctx);
    case 'remediationReported':
      return fire('remediationReported', rec, event, now, ctx);
    case 'powerStatus':
      return rec.powerProbe?.token === event.token ? fire('power', { ...rec, powerProbe: null }, event, now, ctx) : unchanged(rec);
    case 'haDisabled':
    case 'eligibility':
    case 'fenceRequested':
    case 'operatorConfirmedFenced':
    case 'dispatchRefused':
    case 'repairResult':
      return fire(event.type, rec, event, now, ctx);
    case 'haEnabled':
    case 'unfenced':
    case 'resumed':
    case 'serviceEnabled':
      return fire(event.type, rec, {}, now, ctx);
  }
}
