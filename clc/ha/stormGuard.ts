/**
 * Storm protection (issue 6), after Cluster API's MachineHealthCheck `maxUnhealthy`
 * (isAllowedRemediation) and oVirt's rule of not fencing when half a cluster looks down: when more
 * hosts of a partition are unhealthy than allowed, no new recovery or fence starts, and the reason is
 * recorded on every held host. Pure: the runner calls it once per partition per step.
 *
 * Counted hosts are those HA watches (not DISABLED, not INELIGIBLE: maintenance is not a failure),
 * and any host past the node-startup timeout (Cluster API: joined, never healthy in time; it counts as
 * unhealthy whatever its state but DISABLED); unhealthy are all of them but AVAILABLE, so hosts being remediated (RECOVERING, REMEDIATING, FENCING) and fenced
 * ones count too: a recovery storm cannot let itself grow.
 */
import { z } from 'zod';
import type { RemediationAllowance } from './hostHaMachine.js';
import type { HaState } from './hostHaState.js';

export type MaxUnhealthy =
  | { readonly kind: 'count'; readonly value: number }
  | { readonly kind: 'percent'; readonly value: number };

/** "2" (hosts) or "40%" (of the counted hosts, rounded up as Cluster API does). */
export const maxUnhealthySchema = z.string().regex(/^\d{1,6}%?$/, 'a host count ("2") or a percentage ("40%")')
  .transform((s): MaxUnhealthy => (s.endsWith('%')
    ? { kind: 'percent', value: Number(s.slice(0, -1)) }
    : { kind: 'count', value: Number(s) }))
  .refine((m) => m.kind === 'count' || m.value <= 100, 'a percentage is at most 100%');

/** Cluster API's unhealthyRange: remediation only while the unhealthy count is within [min, max]. */
export interface UnhealthyRange {
  readonly min: number;
  readonly max: number;
}

/** "[2-5]" (inclusive), as Cluster API writes it; takes precedence over maxUnhealthy. */
export const unhealthyRangeSchema = z.string().regex(/^\[\d{1,6}-\d{1,6}\]$/, 'a range such as "[2-5]"')
  .transform((s): UnhealthyRange => {
    const [min, max] = s.slice(1, -1).split('-').map(Number) as [number, number];
    return { min, max };
  })
  .refine((r) => r.min <= r.max, 'the range\'s lower bound is above its upper bound');

/** oVirt's rule: fence nobody when more than half the hosts look unhealthy. */
export const DEFAULT_MAX_UNHEALTHY: MaxUnhealthy = Object.freeze({ kind: 'percent', value: 50 });

const NOT_COUNTED: ReadonlySet<HaState> = new Set(['DISABLED', 'INELIGIBLE']);

export interface StormVerdict {
  readonly total: number;
  readonly unhealthy: number;
  /** maxUnhealthy resolved against `total`. */
  readonly limit: number;
  readonly allowance: RemediationAllowance;
  /**
   * The verdict were one more host unhealthy: what remediating a host the guard does not count as
   * unhealthy yet (an AVAILABLE host its BMC reports off) must pass, since it becomes one by it.
   */
  readonly ifOneMore: RemediationAllowance;
}

/** Whether the guard counts this host as unhealthy now (so remediating it adds none). */
export function countedUnhealthy(s: StormSample): boolean {
  const h = typeof s === 'string' ? { state: s, startupOverdue: false } : s;
  if (h.state === 'DISABLED') return false;
  return h.startupOverdue || (!NOT_COUNTED.has(h.state) && h.state !== 'AVAILABLE');
}

export function formatMaxUnhealthy(m: MaxUnhealthy): string {
  return m.kind === 'percent' ? `${m.value}%` : String(m.value);
}

export function resolveLimit(m: MaxUnhealthy, total: number): number {
  return m.kind === 'count' ? m.value : Math.ceil((total * m.value) / 100);
}

/** The verdict; an unhealthyRange, when given, decides instead of maxUnhealthy (Cluster API: it takes precedence). */
/** A host as the guard counts it: its state, or a host past the node-startup timeout (Cluster API: unhealthy whatever its state). */
export type StormSample = HaState | { readonly state: HaState; readonly startupOverdue: boolean };

export function judgeStorm(partition: string, samples: readonly StormSample[], max: MaxUnhealthy, range?: UnhealthyRange): StormVerdict {
  const hosts = samples.map((s) => (typeof s === 'string' ? { state: s, startupOverdue: false } : s)).filter((h) => h.state !== 'DISABLED');
  // A host that joined but never became healthy in time counts, even while INELIGIBLE.
  const counted = hosts.filter((h) => !NOT_COUNTED.has(h.state) || h.startupOverdue);
  const total = counted.length;
  const unhealthy = counted.filter((h) => h.state !== 'AVAILABLE' || h.startupOverdue).length;
  if (range) {
    const within = (u: number): RemediationAllowance => (u >= range.min && u <= range.max
      ? { allowed: true }
      : {
        allowed: false,
        reason: `storm protection: ${u} of ${total} hosts in ${partition} ${u === unhealthy ? 'are' : 'would be'} unhealthy, outside unhealthyRange `
          + `[${range.min}-${range.max}]; no new recovery or fence starts`,
      });
    return { total, unhealthy, limit: range.max, allowance: within(unhealthy), ifOneMore: within(unhealthy + 1) };
  }
  const limit = resolveLimit(max, total);
  const under = (u: number): RemediationAllowance => (u <= limit
    ? { allowed: true }
    : {
      allowed: false,
      reason: `storm protection: ${u} of ${total} hosts in ${partition} ${u === unhealthy ? 'are' : 'would be'} unhealthy, more than maxUnhealthy `
        + `${formatMaxUnhealthy(max)} (= ${limit}); no new recovery or fence starts`,
    });
  return { total, unhealthy, limit, allowance: under(unhealthy), ifOneMore: under(unhealthy + 1) };
}
