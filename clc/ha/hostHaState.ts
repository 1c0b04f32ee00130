/**
 * The data of the host-HA machine (issue 6): states, the persisted per-host record, the events fed
 * to it and the effects it asks for. All plain JSON (STYLE habit 5); the machine itself is
 * hostHaMachine.ts.
 */
import { z } from 'zod';

export const HA_STATES = [
  'DISABLED', 'INELIGIBLE', 'AVAILABLE', 'SUSPECT', 'CHECKING', 'DEGRADED', 'RECOVERING', 'RECOVERED', 'REMEDIATING', 'FENCING', 'FENCED',
] as const;

export type HaState =
  /** HA is switched off for the host or its partition: nothing is checked, nothing is done. */
  | 'DISABLED'
  /** HA is on but cannot act: partition disabled, host in maintenance, no neighbour, no power management. */
  | 'INELIGIBLE'
  /** Healthy; health is checked periodically. */
  | 'AVAILABLE'
  /** A health check failed; activity checks are scheduled with back-off. */
  | 'SUSPECT'
  /** An activity check (by a neighbour, on shared storage) is running. */
  | 'CHECKING'
  /** Activity but no control (VMs write, the NC does not answer): drained by live migration, never fenced. */
  | 'DEGRADED'
  /** No activity: being power-cycled. */
  | 'RECOVERING'
  /** Power-cycled (or externally remediated); waits up to the recover wait period for a passing health check. */
  | 'RECOVERED'
  /** Handed to the external remediator (strategy `external`): waits for its report of done or failed, or the timeout. */
  | 'REMEDIATING'
  /** In maintenance and being powered off; with `needsOperator` the fence failed and a human decides. */
  | 'FENCING'
  /** Power confirmed off (or confirmed by an operator): its instances may run elsewhere. */
  | 'FENCED';

export type { ActivityOutcome } from '../../shared/model/activity.js';
import type { ActivityOutcome } from '../../shared/model/activity.js';

/** The one operation in flight for a host (activity, recovery, external remediation or fence); its token keys the result. */
export interface HaOperation {
  readonly kind: 'activity' | 'recover' | 'remediate' | 'fence';
  readonly token: number;
  readonly startedAt: number;
  readonly deadline: number;
}

/** A health check in flight; runs alongside an operation. */
export interface HaHealthProbe {
  readonly token: number;
  readonly startedAt: number;
  readonly deadline: number;
}

/** What a storm-guarded remediation starts: a power cycle, an external remediation or a fence. */
export type RemediationTarget = 'RECOVERING' | 'REMEDIATING' | 'FENCING';

/** A recovery, external remediation or fence the storm guard held back; retried on every tick. */
export interface HaBlocked {
  readonly target: RemediationTarget;
  readonly reason: string;
  readonly since: number;
}

/**
 * A repair HA owes the host and retries with back-off until it is done: the drain of a host that lost
 * control while its VMs ran (DisableService, then MigrateInstances, until it is empty), or the
 * restart elsewhere of a fenced host's instances, or, once a fenced host is returned to service by
 * EnableService, the power-on there of its own instances that are shut off. At most one attempt is in
 * flight (`inFlight`).
 */
export interface HaOwedRepair {
  readonly kind: 'drain' | 'evacuate' | 'powerOn';
  /** When it became owed. */
  readonly since: number;
  /** Attempts started so far. */
  readonly attempts: number;
  /** When the next attempt may start. */
  readonly nextAttemptAt: number;
  /** The token of the attempt in flight, or null. */
  readonly inFlight: number | null;
  /** What the last attempt reported, or null before the first one. */
  readonly lastOutcome: string | null;
  /** Why a due attempt is held rather than started (HA automation suspended, or a drain during a storm); absent when not held. */
  readonly heldBy?: string;
  /**
   * The storm guard holds it (a drain never started while more hosts of the partition were unhealthy
   * than allowed): forgiven if the host passes its health check before it starts (hostHaMoves.ts).
   */
  readonly stormHeld?: true;
}

/**
 * The external remediation handed out for this episode (REMEDIATING only; Cluster API's external
 * remediation object, Medik8s' remediation CR). Its id is what CompleteHostRemediation must name;
 * it survives a CLC restart, so a remediator that accepted it is not asked twice.
 */
export interface HaExternalRemediation {
  readonly id: string;
  readonly since: number;
  /** The webhook answered 2xx or the command started: it is not handed out again after a restart. */
  readonly accepted: boolean;
}

/** What one health check found (HaEvent healthResult). */
export type HealthOutcome = 'healthy' | 'unhealthy' | 'unknown';

export interface HostHaRecord {
  readonly version: 1;
  readonly host: string;
  readonly partition: string;
  readonly state: HaState;
  /** When the current state was entered. */
  readonly since: number;
  /** Source of tokens: every effect that expects a result takes the next value. */
  readonly seq: number;
  readonly operation: HaOperation | null;
  readonly health: HaHealthProbe | null;
  readonly nextHealthCheckAt: number;
  /** In SUSPECT: when the next activity check starts. */
  readonly nextActivityCheckAt: number | null;
  /** When the current failure episode began (first failed health check), or null. */
  readonly suspectSince: number | null;
  /** The last activity check's start: the reference for the next one ("between consecutive checks"). */
  readonly lastActivityCheckAt: number | null;
  readonly activityChecks: number;
  readonly activityFailures: number;
  readonly recoveryAttempts: number;
  readonly fenceAttempts: number;
  /** External remediations handed out this episode: after one, a further remediation escalates to a fence (Medik8s). */
  readonly remediationAttempts: number;
  /** REMEDIATING only: the remediation in flight, or null once it concluded (its escalation may be held). */
  readonly remediation: HaExternalRemediation | null;
  /** FENCING only: the fence failed or timed out; no retry without an operator. */
  readonly needsOperator: boolean;
  readonly blocked: HaBlocked | null;
  /** Who fenced it, once FENCED. */
  readonly fencedBy: 'agent' | 'operator' | null;
  /** Why it is DISABLED or INELIGIBLE, or why it last changed state. */
  readonly reason: string;
  /** The drain or restart elsewhere HA still owes the host (owedRepair.ts), whatever its state. */
  readonly owed: HaOwedRepair | null;
  /** A BMC power-status probe in flight (the power watch), or null. */
  readonly powerProbe: HaHealthProbe | null;
  /** When the BMC's power status is asked next (in POWER_WATCHED states). */
  readonly nextPowerCheckAt: number;
  /** When HA first saw the host (it joined: its CC reported it). */
  readonly joinedAt: number;
  /** A health check has passed at least once since it joined. */
  readonly reportedHealthy: boolean;
  /** Never reported healthy within nodeStartupTimeoutMs of joining: counted as unhealthy (storm guard) until it does. */
  readonly startupOverdue: boolean;
}

export type HaEvent =
  /** HA switched off for the host or its partition. */
  | { readonly type: 'haDisabled'; readonly reason: string }
  | { readonly type: 'haEnabled' }
  /** The eligibility evaluation (partition enabled, not in maintenance, a neighbour, power management). */
  | { readonly type: 'eligibility'; readonly eligible: boolean; readonly reason: string }
  /** Time passed: starts due checks, times out operations, retries held remediation. */
  | { readonly type: 'tick' }
  /**
   * A health check's answer: `unknown` when the source could not tell (the CC did not answer in time,
   * or refused): the host's state is not judged on it. Only the host's own CC answering "not
   * reachable" or "no hypervisor" is `unhealthy`.
   */
  | { readonly type: 'healthResult'; readonly token: number; readonly outcome: HealthOutcome; readonly detail: string }
  | { readonly type: 'activityResult'; readonly token: number; readonly outcome: ActivityOutcome; readonly detail: string }
  | { readonly type: 'recoverResult'; readonly token: number; readonly ok: boolean; readonly detail: string }
  /** ok: the agent confirmed power off ("already off" included). */
  | { readonly type: 'fenceResult'; readonly token: number; readonly ok: boolean; readonly detail: string }
  /**
   * FenceHost by an operator: fence now (or retry a failed fence). `answering`: its NC answered a
   * health probe just before (OpenStack's fencing blueprint: a healthy host is fenced only with `force`).
   */
  | { readonly type: 'fenceRequested'; readonly operator: string; readonly force?: boolean; readonly answering?: boolean }
  /** ConfirmHostFenced: an operator vouches the host is off (a dead BMC). */
  | { readonly type: 'operatorConfirmedFenced'; readonly operator: string }
  /** The fenced host was cleaned and enabled again by an explicit EnableService. */
  | { readonly type: 'unfenced' }
  /** The CLC restarted: answers to what was in flight are lost; re-issue them, re-check health now. */
  | { readonly type: 'resumed' }
  /** The runner's queue for that kind of work was full (back-pressure): the work never started. */
  | { readonly type: 'dispatchRefused'; readonly token: number }
  /** An attempt at the owed drain or restart elsewhere finished: done, or why not yet. */
  | { readonly type: 'repairResult'; readonly token: number; readonly done: boolean; readonly detail: string }
  /** An operator's EnableService of the (not fenced) host: an owed drain is no longer wanted. */
  | { readonly type: 'serviceEnabled' }
  /**
   * The remediator's answer for the current remediation: `accepted` (webhook 2xx, or the command
   * started), `done` (the command exited 0) or `failed` (refused, exited non-zero, never accepted in time).
   */
  | { readonly type: 'remediationResult'; readonly token: number; readonly outcome: 'accepted' | 'done' | 'failed'; readonly detail: string }
  /** CompleteHostRemediation: the remediator (or an operator) reports the remediation `id` done or failed. */
  | { readonly type: 'remediationReported'; readonly id: string; readonly result: 'succeeded' | 'failed'; readonly message: string; readonly operator: string }
  /** The BMC's power status for the current power probe: `unknown` when it could not say (never treated as off). */
  | { readonly type: 'powerStatus'; readonly token: number; readonly power: 'on' | 'off' | 'unknown'; readonly detail: string };

export type HaEffect =
  | { readonly kind: 'healthCheck'; readonly host: string; readonly token: number; readonly deadline: number }
  /** A neighbour looks for writes since `since` (the suspect time first, then the previous check). */
  | { readonly kind: 'activityCheck'; readonly host: string; readonly token: number; readonly since: number; readonly deadline: number }
  /**
   * Power cycle. `notBefore` (a resume only): the previous CLC's agent may still run until then (it
   * outlives a killed CLC in its own process group), so a second one starts no earlier (issue 21).
   */
  | { readonly kind: 'recover'; readonly host: string; readonly token: number; readonly deadline: number; readonly notBefore?: number }
  /** Hand the host to the partition's external remediator (command or webhook); settles by `deadline`. */
  | { readonly kind: 'externalRemediation'; readonly host: string; readonly token: number; readonly id: string; readonly reason: string; readonly deadline: number }
  /** Maintenance through DisableService (gating included), always before a fence. */
  | { readonly kind: 'disableHost'; readonly host: string; readonly reason: string }
  /** Power off. `notBefore` as for recover: no second agent while the previous leader's may still be powering it off. */
  | { readonly kind: 'fence'; readonly host: string; readonly token: number; readonly deadline: number; readonly notBefore?: number }
  /** One attempt at the owed drain: DisableService, then MigrateInstances; for DEGRADED hosts, never a fence. */
  | { readonly kind: 'drain'; readonly host: string; readonly token: number; readonly attempt: number }
  /** The power watch: ask the host's BMC (its fence agent's `status`) whether its power is on. */
  | { readonly kind: 'powerStatus'; readonly host: string; readonly token: number; readonly deadline: number }
  /** One attempt at restarting the host's instances elsewhere: only ever while it is FENCED. */
  | { readonly kind: 'evacuate'; readonly host: string; readonly fencedBy: 'agent' | 'operator'; readonly token: number; readonly attempt: number }
  /** One attempt at powering on, on the host itself, its own instances that are shut off: never while FENCING/FENCED. */
  | { readonly kind: 'powerOn'; readonly host: string; readonly token: number; readonly attempt: number }
  | { readonly kind: 'alert'; readonly host: string; readonly level: 'info' | 'warn' | 'critical'; readonly message: string }
  | { readonly kind: 'transition'; readonly host: string; readonly from: HaState; readonly to: HaState; readonly reason: string };

/** HA is fencing or has fenced the host: it holds it in maintenance, and nothing may run or land there. */
export const FENCE_STATES: ReadonlySet<HaState> = new Set(['FENCING', 'FENCED']);

/** The hosts among `records` that HA fences or has fenced (of one partition when given), sorted. */
export function fencedHostsOf(records: Readonly<Record<string, HostHaRecord>>, partition?: string): string[] {
  return Object.values(records).filter((r) => FENCE_STATES.has(r.state) && (partition === undefined || r.partition === partition)).map((r) => r.host).sort();
}

export function newHostHaRecord(host: string, partition: string, now: number): HostHaRecord {
  return {
    version: 1, host, partition, state: 'INELIGIBLE', since: now, seq: 0, operation: null, health: null,
    nextHealthCheckAt: now, nextActivityCheckAt: null, suspectSince: null, lastActivityCheckAt: null,
    activityChecks: 0, activityFailures: 0, recoveryAttempts: 0, fenceAttempts: 0, remediationAttempts: 0, remediation: null, needsOperator: false,
    blocked: null, fencedBy: null, reason: 'not yet evaluated', owed: null, powerProbe: null, nextPowerCheckAt: now,
    joinedAt: now, reportedHealthy: false, startupOverdue: false,
  };
}

const timed = { token: z.number().int().min(0), startedAt: z.number(), deadline: z.number() };

/** Validates a persisted record (the store's schema). */
export const hostHaRecordSchema = z.strictObject({
  version: z.literal(1),
  host: z.string().min(1),
  partition: z.string().min(1),
  state: z.enum(HA_STATES),
  since: z.number(),
  seq: z.number().int().min(0),
  operation: z.strictObject({ kind: z.enum(['activity', 'recover', 'remediate', 'fence']), ...timed }).nullable(),
  health: z.strictObject(timed).nullable(),
  nextHealthCheckAt: z.number(),
  nextActivityCheckAt: z.number().nullable(),
  suspectSince: z.number().nullable(),
  lastActivityCheckAt: z.number().nullable(),
  activityChecks: z.number().int().min(0),
  activityFailures: z.number().int().min(0),
  recoveryAttempts: z.number().int().min(0),
  fenceAttempts: z.number().int().min(0),
  remediationAttempts: z.number().int().min(0).optional(),
  remediation: z.strictObject({ id: z.string().min(1), since: z.number(), accepted: z.boolean() }).nullable().optional(),
  needsOperator: z.boolean(),
  blocked: z.strictObject({ target: z.enum(['RECOVERING', 'REMEDIATING', 'FENCING']), reason: z.string(), since: z.number() }).nullable(),
  fencedBy: z.enum(['agent', 'operator']).nullable(),
  reason: z.string(),
  owed: z.strictObject({
    kind: z.enum(['drain', 'evacuate', 'powerOn']), since: z.number(), attempts: z.number().int().min(0), nextAttemptAt: z.number(),
    inFlight: z.number().int().min(0).nullable(), lastOutcome: z.string().nullable(), heldBy: z.string().optional(), stormHeld: z.literal(true).optional(),
  }).nullable().optional(),
  powerProbe: z.strictObject(timed).nullable().optional(),
  nextPowerCheckAt: z.number().optional(),
  joinedAt: z.number().optional(),
  reportedHealthy: z.boolean().optional(),
  startupOverdue: z.boolean().optional(),
}).transform((r): HostHaRecord => ({
  ...r,
  // Absent in stores written before external remediation: none was ever handed out.
  remediationAttempts: r.remediationAttempts ?? 0,
  remediation: r.remediation ?? null,
  // Absent in stores written before the node-startup timeout: such a host started long ago, so it is not held to it.
  joinedAt: r.joinedAt ?? r.since,
  reportedHealthy: r.reportedHealthy ?? true,
  startupOverdue: r.startupOverdue ?? false,
  // Absent in stores written before the power watch: nothing in flight, first check due now.
  powerProbe: r.powerProbe ?? null,
  nextPowerCheckAt: r.nextPowerCheckAt ?? r.since,
  // Absent in stores written before owed repairs: a FENCED host then re-ran its restart at every start, so it owes one.
  owed: r.owed !== undefined ? r.owed : r.state === 'FENCED'
    ? { kind: 'evacuate', since: r.since, attempts: 0, nextAttemptAt: r.since, inFlight: null, lastOutcome: null }
    : null,
}));
