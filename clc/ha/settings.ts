/**
 * Host-HA settings (issue 6), after CloudStack's KVM HA table (KVMHAConfig / HAManager): the defaults
 * are CloudStack's, in milliseconds instead of seconds. A cluster may override any of them; the
 * result is compiled once (validated, frozen) and the machine trusts it (STYLE habit 7).
 */
import { z } from 'zod';

export interface HaSettings {
  /** kvm.ha.health.check.timeout: a health check that takes longer failed. */
  readonly healthCheckTimeoutMs: number;
  /** How often an AVAILABLE (or watched) host's health is checked. */
  readonly healthCheckIntervalMs: number;
  /** kvm.ha.activity.check.timeout: an activity check that takes longer is inconclusive. */
  readonly activityCheckTimeoutMs: number;
  /** First delay before an activity check in SUSPECT; doubles per round up to activityCheckIntervalMs. */
  readonly activityCheckInitialDelayMs: number;
  /** kvm.ha.activity.check.interval: the longest wait between two activity checks (the back-off cap). */
  readonly activityCheckIntervalMs: number;
  /** kvm.ha.activity.check.max.attempts: samples gathered before deciding RECOVERING or DEGRADED. */
  readonly activityCheckMaxAttempts: number;
  /** kvm.ha.activity.check.failure.ratio: more "no activity" samples than attempts × ratio → recover. */
  readonly activityCheckFailureRatio: number;
  /** kvm.ha.degraded.max.period: a DEGRADED host's activity is re-checked after this long. */
  readonly degradedMaxPeriodMs: number;
  /** kvm.ha.recover.timeout: a power cycle that takes longer failed. */
  readonly recoverTimeoutMs: number;
  /** kvm.ha.recover.wait.period: how long a RECOVERED host has to pass a health check. */
  readonly recoverWaitPeriodMs: number;
  /** kvm.ha.recover.failure.threshold: recovery attempts before the host is fenced. */
  readonly recoverFailureThreshold: number;
  /** kvm.ha.fence.timeout: a fence that takes longer needs an operator. */
  readonly fenceTimeoutMs: number;
  /** Ferry: wait before retrying an owed drain or restart elsewhere; doubles per attempt up to repairRetryIntervalMs. */
  readonly repairRetryInitialDelayMs: number;
  /** Ferry: the longest wait between two attempts at an owed repair (the back-off cap). */
  readonly repairRetryIntervalMs: number;
  /** Ferry: attempts at an owed drain before HA gives up and asks an operator (a restart elsewhere never gives up). */
  readonly drainMaxAttempts: number;
  /** Ferry (CloudStack's power-state watch): how often a watched host's BMC is asked its power status. */
  readonly powerCheckIntervalMs: number;
  /** Ferry: a power status that takes longer is unknown (never "off"). */
  readonly powerCheckTimeoutMs: number;
  /** Cluster API's nodeStartupTimeout: a host that joined but never reported healthy within it counts as unhealthy. */
  readonly nodeStartupTimeoutMs: number;
  /**
   * Ferry (Medik8s' escalation timeout): how long an external remediation may take to report done
   * (CompleteHostRemediation, or the command's exit 0) before HA escalates to its own fence.
   */
  readonly externalRemediationTimeoutMs: number;
}

const ms = z.number().int().positive();

/** Validates one layer (global or cluster override); every key optional, no unknown key. */
export const haSettingsOverrideSchema = z.strictObject({
  healthCheckTimeoutMs: ms,
  healthCheckIntervalMs: ms,
  activityCheckTimeoutMs: ms,
  activityCheckInitialDelayMs: ms,
  activityCheckIntervalMs: ms,
  activityCheckMaxAttempts: z.number().int().min(1).max(1000),
  // CloudStack advises keeping it above 0.5; below that a half-dead host could be power-cycled.
  activityCheckFailureRatio: z.number().gt(0).lt(1),
  degradedMaxPeriodMs: ms,
  recoverTimeoutMs: ms,
  recoverWaitPeriodMs: ms,
  recoverFailureThreshold: z.number().int().min(0).max(100),
  fenceTimeoutMs: ms,
  repairRetryInitialDelayMs: ms,
  repairRetryIntervalMs: ms,
  drainMaxAttempts: z.number().int().min(1).max(1000),
  powerCheckIntervalMs: ms,
  powerCheckTimeoutMs: ms,
  nodeStartupTimeoutMs: ms,
  externalRemediationTimeoutMs: ms,
}).partial();
export type HaSettingsOverride = z.infer<typeof haSettingsOverrideSchema>;

export const DEFAULT_HA_SETTINGS: HaSettings = Object.freeze({
  healthCheckTimeoutMs: 10_000,
  healthCheckIntervalMs: 10_000, // ha.checking.interval
  activityCheckTimeoutMs: 60_000,
  activityCheckInitialDelayMs: 5_000,
  activityCheckIntervalMs: 60_000,
  activityCheckMaxAttempts: 10,
  activityCheckFailureRatio: 0.7,
  degradedMaxPeriodMs: 300_000,
  recoverTimeoutMs: 60_000,
  recoverWaitPeriodMs: 600_000,
  recoverFailureThreshold: 1,
  fenceTimeoutMs: 60_000,
  repairRetryInitialDelayMs: 10_000,
  repairRetryIntervalMs: 300_000,
  drainMaxAttempts: 30,
  powerCheckIntervalMs: 60_000,
  powerCheckTimeoutMs: 30_000,
  nodeStartupTimeoutMs: 600_000, // Cluster API's default, 10 minutes
  externalRemediationTimeoutMs: 600_000, // a reboot or reprovision through another system: minutes
});

/** Global defaults, then the global layer, then the cluster's: the most specific wins. */
export function compileHaSettings(...layers: readonly unknown[]): HaSettings {
  let out: HaSettings = DEFAULT_HA_SETTINGS;
  for (const layer of layers) {
    if (layer === undefined) continue;
    out = { ...out, ...haSettingsOverrideSchema.parse(layer) };
  }
  const capped = [['activityCheckInitialDelayMs', 'activityCheckIntervalMs'], ['repairRetryInitialDelayMs', 'repairRetryIntervalMs']] as const;
  for (const [first, cap] of capped) {
    if (out[first] > out[cap]) {
      throw new z.ZodError([{ code: 'custom', path: [first], input: out[first], message: `must not exceed ${cap} (${out[cap]})` }]);
    }
  }
  return Object.freeze(out);
}

/** Bounded queues and worker pools per operation kind (ha.max.pending.* / ha.max.concurrent.*). */
export interface HaPoolLimits {
  readonly maxPending: number;
  readonly maxConcurrent: number;
}

export type HaOperationKind = 'health' | 'activity' | 'recovery' | 'remediation' | 'fence' | 'power';

/** CloudStack's HAManager defaults per management server. */
export const DEFAULT_HA_POOLS: Readonly<Record<HaOperationKind, HaPoolLimits>> = Object.freeze({
  // Ferry: a health check waits for its partition's shared describe (ccSources.ts freshNodes) and costs
  // nothing else, so a whole pass joins one describe. With 50 at a time a pass of 2,000 hosts was 40
  // describes in a row, the later checks passed their deadline queued, and their hosts went unjudged
  // (`unknown`) while they were down (issue 19: 61 of 100 failed hosts, a quiet machine).
  health: Object.freeze({ maxPending: 20_000, maxConcurrent: 10_000 }),
  activity: Object.freeze({ maxPending: 2500, maxConcurrent: 25 }),
  recovery: Object.freeze({ maxPending: 2500, maxConcurrent: 25 }),
  // Ferry: external remediations (a command runs, or a webhook is retried, until accepted or done).
  remediation: Object.freeze({ maxPending: 2500, maxConcurrent: 25 }),
  fence: Object.freeze({ maxPending: 2500, maxConcurrent: 25 }),
  // Ferry: the BMC power-status watch; few at a time, as BMCs are slow and a status is never urgent.
  power: Object.freeze({ maxPending: 5000, maxConcurrent: 10 }),
});
