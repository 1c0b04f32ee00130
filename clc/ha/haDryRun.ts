/**
 * "What would HA do now?" (issue 6's dry run): for one host, the next thing the machine will do and
 * when, in words, without doing it. Pure: the same record, context and time as a step would see.
 */
import type { HaContext } from './hostHaMachine.js';
import type { HostHaRecord } from './hostHaState.js';

export interface HaForecast {
  /** What happens next. */
  readonly next: string;
  /** When (epoch ms), if it is timed. */
  readonly at: number | null;
  /** Whether an operator is needed for anything to happen. */
  readonly waitsForOperator: boolean;
}

const at = (next: string, when: number | null, waitsForOperator = false): HaForecast => ({ next, at: when, waitsForOperator });

export function forecast(rec: HostHaRecord, ctx: HaContext, now: number): HaForecast {
  const s = ctx.settings;
  if (rec.blocked) {
    return ctx.remediation.allowed
      ? at(`start ${rec.blocked.target} at the next tick (held since ${new Date(rec.blocked.since).toISOString()})`, now)
      : at(`hold ${rec.blocked.target}: ${ctx.remediation.reason}`, null);
  }
  const op = rec.operation;
  const rem = rec.remediation;
  if (op?.kind === 'remediate' && rem) {
    return at(`wait for external remediation ${rem.id} (${rem.accepted ? 'accepted' : 'not yet accepted'}) to report done (CompleteHostRemediation); fence if it fails or times out`, op.deadline);
  }
  if (op) return at(`wait for the ${op.kind} in flight (token ${op.token}); a late answer counts as failed`, op.deadline);
  const owed = rec.owed;
  // An owed drain, restart elsewhere or power-on (owedRepair.ts) goes on whatever the health says; a
  // restart only while FENCED, a power-on never while FENCING/FENCED.
  const due = owed && (owed.kind === 'drain' || (owed.kind === 'evacuate' ? rec.state === 'FENCED' : rec.state !== 'FENCING' && rec.state !== 'FENCED'));
  if (owed && due) {
    const what = owed.kind === 'drain' ? 'drain (DisableService, then MigrateInstances)'
      : owed.kind === 'evacuate' ? 'restart of its instances elsewhere' : 'power-on of its own instances left shut off there';
    if (owed.inFlight !== null) return at(`wait for ${what} attempt ${owed.attempts} in flight`, null);
    if (owed.kind === 'drain' && owed.attempts >= s.drainMaxAttempts) {
      return at(`nothing: the owed drain gave up after ${owed.attempts} attempts; drain it (MigrateInstances), fence it, or EnableService it`, null, true);
    }
    const last = owed.lastOutcome === null ? '' : ` (last: ${owed.lastOutcome})`;
    return at(`${what}, attempt ${owed.attempts + 1}${last}`, Math.max(now, owed.nextAttemptAt));
  }
  switch (rec.state) {
    case 'DISABLED':
      return at('nothing: HA is disabled for this host or its partition', null, true);
    case 'INELIGIBLE':
      return at(`nothing until the host is eligible again (${rec.reason})`, null);
    case 'AVAILABLE':
      return at('check health; a failure makes the host SUSPECT', Math.max(now, rec.nextHealthCheckAt));
    case 'SUSPECT': {
      const left = s.activityCheckMaxAttempts - rec.activityChecks;
      return at(`activity check ${rec.activityChecks + 1} of ${s.activityCheckMaxAttempts} (${left} to go before deciding)`, rec.nextActivityCheckAt ?? now);
    }
    case 'CHECKING':
      return at('collect the activity result', now);
    case 'DEGRADED':
      return at('re-check activity (the drain owed since it became DEGRADED is done)', rec.since + s.degradedMaxPeriodMs);
    case 'RECOVERING':
      return at(rec.recoveryAttempts >= s.recoverFailureThreshold ? 'fence if the power cycle fails' : 'power-cycle again if it fails', null);
    case 'RECOVERED':
      return at(rec.recoveryAttempts >= s.recoverFailureThreshold || rec.remediationAttempts > 0
        ? 'fence unless a health check passes before the wait period ends'
        : 'power-cycle again unless a health check passes before the wait period ends', rec.since + s.recoverWaitPeriodMs);
    case 'REMEDIATING':
      return at('fence once the storm guard allows it (the external remediation concluded)', null);
    case 'FENCING':
      return rec.needsOperator
        ? at('nothing: the fence failed; power the host off by hand and ConfirmHostFenced, or retry FenceHost', null, true)
        : at('wait for the fence', null);
    case 'FENCED':
      return at('nothing: the host stays fenced until it is cleaned and enabled again (EnableService)', null, true);
  }
}
