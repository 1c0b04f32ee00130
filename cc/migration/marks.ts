/**
 * What the CC remembers about items in memory, and only in memory: since when an item is in its
 * phase (for the timeouts), that it asked a destination to prepare, which destinations refused it,
 * and that it gave up on it. None of it is durable: after a CC restart every phase starts again
 * from `now` — timeouts then run from the restart, which can only make them later, never earlier.
 * Pure helpers; the plan driver holds the map.
 */
import type { MigrationPlan, PlanItem } from '../../shared/protocol/migrationProtocol.js';
import type { Effect } from './effects.js';
import type { Phase } from './phases.js';

export interface Refusal {
  readonly host: string;
  readonly reason: string;
}

export interface Mark {
  /** Never 'final': a final item's mark is dropped. */
  readonly phase: Exclude<Phase, 'final'>;
  readonly destination: string;
  /** When the CC first saw the item in this phase at this destination (or restarted). */
  readonly since: number;
  /** The CC asked the destination to prepare and has not yet seen its record. */
  readonly asked: boolean;
  /** Destinations that refused to prepare the item since the CC started, with their reasons. */
  readonly refused: readonly Refusal[];
  /** The CC gave up on the item (a timeout, a refused commit): it rolls it back until it is final. */
  readonly giveUp?: string;
  /** Since when the item has waited for its briefly unreachable or unhealthy destination (none other fits). */
  readonly waitingSince?: number;
}

export type Marks = ReadonlyMap<string, Mark>;

/**
 * The CC's own migrating deadline: a backstop only. The source NC enforces the plan's allowance
 * (base + per GiB) and its stall timeout itself; the CC steps in when that NC did not (it crashed
 * mid-migration, or is wedged), so it waits twice the allowance plus one stall period.
 */
export function backstopMs(plan: MigrationPlan, item: PlanItem): number {
  return Math.ceil(2 * migratingAllowanceMs(plan, item) + plan.timeouts.stallMs);
}

/** The source NC's own limit on an item's migrating phase: base + per GiB of guest memory. */
function migratingAllowanceMs(plan: MigrationPlan, item: PlanItem): number {
  return plan.timeouts.migratingBaseMs + plan.timeouts.migratingPerGiBMs * (item.vmType.memoryMiB / 1024);
}

/** Migration credentials outlive the item's own deadlines by this much, then are useless. */
export const CREDENTIAL_GRACE_MS = 60_000;

/**
 * Lifetime of an item's credentials from their issue: "expire soon after the migration's own
 * timeout" (prepare + ready + the NC's migrating allowance, plus a grace for clock steps).
 */
export function credentialLifetimeMs(plan: MigrationPlan, item: PlanItem): number {
  return Math.ceil(plan.timeouts.prepareMs + plan.timeouts.readyMs + migratingAllowanceMs(plan, item) + CREDENTIAL_GRACE_MS);
}

/** How long an item may stay in a phase before the CC gives up on it; undefined: no limit. */
export function phaseLimitMs(phase: Phase, plan: MigrationPlan, item: PlanItem): number | undefined {
  switch (phase) {
    case 'preparing': return plan.timeouts.prepareMs;
    case 'ready': return plan.timeouts.readyMs;
    case 'migrating': return backstopMs(plan, item);
    default: return undefined;
  }
}

export function timeoutReason(phase: Phase, destination: string, ms: number): string {
  switch (phase) {
    case 'preparing': return `destination ${destination} was not ready within ${ms} ms`;
    case 'ready': return `not committed within ${ms} ms of destination ${destination} being ready`;
    default: return `still migrating to ${destination} after ${ms} ms (CC backstop)`;
  }
}

/** A failed call as the plan driver saw it: the CC error's code and message. */
export interface CallFailure {
  readonly code: string;
  readonly message: string;
  /** For NodeUnreachable: whether the request may have arrived anyway. */
  readonly maybeDelivered?: boolean;
}

/** Codes by which a destination proves it did not prepare the item: go elsewhere. */
const PREPARE_REFUSALS = new Set(['NodeFull', 'NodeDisabled', 'NodeUnhealthy', 'NodeFault', 'StateWriteFailed']);
/** Codes by which a destination refuses a re-join's credential for good: the item cannot complete there. */
const REJOIN_REFUSALS = new Set(['NodeFull', 'NodeFault', 'StateWriteFailed']);

/**
 * Folds a failed effect back into the marks (an event into the machine). A destination's refusal
 * makes the item queued again with that destination marked refused, so the next reconcile re-plans
 * it (for a migrating item, a re-join's re-prepare, the CC gives up instead); a source refusing
 * commit makes the CC give up on the item. Anything else changes nothing:
 * the next reconcile re-reads the NCs and the plan driver retries after a pause.
 */
export function noteFailure(marks: Marks, key: string, effect: Effect, failure: CallFailure, now: number): Marks {
  const mark = marks.get(key);
  if (!mark) return marks;
  const next = new Map(marks);
  if (effect.kind === 'prepareDestination') {
    if (mark.phase === 'migrating') {
      // A re-join's re-prepare refused for good (not unanswered, not a hypervisor away for a moment).
      if (!REJOIN_REFUSALS.has(failure.code)) return marks;
      next.set(key, { ...mark, giveUp: mark.giveUp ?? `destination refused the re-join's credential: ${failure.message}` });
      return next;
    }
    const provenNotPrepared = PREPARE_REFUSALS.has(failure.code) || (failure.code === 'NodeUnreachable' && failure.maybeDelivered === false);
    if (!provenNotPrepared) return marks;
    next.set(key, {
      ...mark, phase: 'queued', asked: false, since: now,
      refused: [...mark.refused.filter((r) => r.host !== effect.destination), { host: effect.destination, reason: failure.message }],
    });
    return next;
  }
  if (effect.kind === 'commit' && failure.code === 'MigrationNotPrepared') {
    next.set(key, { ...mark, giveUp: `source refused commit: ${failure.message}` });
    return next;
  }
  return marks;
}
