/** Shared fixtures for the host-HA machine tests: small settings and records built in any state. */
import type { HaContext, RemediationAllowance } from '../../../clc/ha/hostHaMachine.js';
import { newHostHaRecord, type HaEffect, type HaState, type HostHaRecord } from '../../../clc/ha/hostHaState.js';
import { compileHaSettings } from '../../../clc/ha/settings.js';

export const SETTINGS = compileHaSettings({
  healthCheckIntervalMs: 10, healthCheckTimeoutMs: 5,
  activityCheckInitialDelayMs: 2, activityCheckIntervalMs: 16, activityCheckTimeoutMs: 5,
  activityCheckMaxAttempts: 3, activityCheckFailureRatio: 0.5,
  degradedMaxPeriodMs: 100, recoverTimeoutMs: 20, recoverWaitPeriodMs: 50, recoverFailureThreshold: 1, fenceTimeoutMs: 30,
  repairRetryInitialDelayMs: 4, repairRetryIntervalMs: 16, drainMaxAttempts: 3, externalRemediationTimeoutMs: 40,
});

/** An owed repair (owedRepair.ts) with nothing in flight, due at time 0. */
export const owedDue = (kind: 'drain' | 'evacuate' | 'powerOn', patch: Partial<NonNullable<HostHaRecord['owed']>> = {}): HostHaRecord['owed'] =>
  ({ kind, since: 0, attempts: 1, nextAttemptAt: 0, inFlight: null, lastOutcome: 'NC down', ...patch });

export const ALLOWED: RemediationAllowance = { allowed: true };
export const STORM: RemediationAllowance = { allowed: false, reason: 'storm protection: test' };

export const ctx = (remediation: RemediationAllowance = ALLOWED, settings = SETTINGS): HaContext => ({ settings, remediation });
/** A context whose partition hands remediation to an external remediator (strategy external). */
export const extCtx = (remediation: RemediationAllowance = ALLOWED, settings = SETTINGS): HaContext => ({ settings, remediation, strategy: 'external' });

/** The id of the external remediation the REMEDIATING fixture has in flight. */
export const REM_ID = '7-0';

/** The token of the operation each fixture state has in flight. */
export const OP = 7;
/** The token of the health probe in flight in health-watched states. */
export const PROBE = 8;

/** A record in `state` at time 0, with the operation that state normally has in flight. */
export function inState(state: HaState, patch: Partial<HostHaRecord> = {}): HostHaRecord {
  const base: HostHaRecord = { ...newHostHaRecord('h1', 'p1', 0), state, since: 0, seq: 10, reason: 'fixture', nextHealthCheckAt: 1000, nextPowerCheckAt: 1000, reportedHealthy: true };
  const op = (kind: 'activity' | 'recover' | 'remediate' | 'fence', timeout: number) => ({ kind, token: OP, startedAt: 0, deadline: timeout });
  const health = { token: PROBE, startedAt: 0, deadline: SETTINGS.healthCheckTimeoutMs };
  const byState: Partial<Record<HaState, Partial<HostHaRecord>>> = {
    AVAILABLE: { health },
    SUSPECT: { health, suspectSince: 0, nextActivityCheckAt: 2 },
    CHECKING: { health, suspectSince: 0, operation: op('activity', SETTINGS.activityCheckTimeoutMs) },
    DEGRADED: { health, suspectSince: 0, activityChecks: 3, activityFailures: 1 },
    RECOVERING: { suspectSince: 0, recoveryAttempts: 1, operation: op('recover', SETTINGS.recoverTimeoutMs) },
    RECOVERED: { health, suspectSince: 0, recoveryAttempts: 1 },
    REMEDIATING: { suspectSince: 0, remediationAttempts: 1, operation: op('remediate', SETTINGS.externalRemediationTimeoutMs), remediation: { id: REM_ID, since: 0, accepted: false } },
    FENCING: { suspectSince: 0, recoveryAttempts: 1, fenceAttempts: 1, operation: op('fence', SETTINGS.fenceTimeoutMs) },
    FENCED: { fencedBy: 'agent' },
  };
  return { ...base, ...byState[state], ...patch };
}

/** Effect kinds, without the event-log ones (transition, alert). */
export function actions(effects: readonly HaEffect[]): string[] {
  return effects.filter((e) => e.kind !== 'transition' && e.kind !== 'alert').map((e) => e.kind);
}
