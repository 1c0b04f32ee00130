/**
 * Storm protection (issue 6), after Cluster API's MachineHealthCheck `maxUnhealthy`
 * (isAllowedRemediation) and oVirt's rule of not fencing when half a cluster looks down: when more
 * hosts of a partition are unhealthy than allowed, no new recovery or fence starts, and the reason is
 * recorded on every held host. Pure: the runner calls it once per partition per step.
 *
 * Counted hosts are those HA watches (not DISABLED, not INELIGIBLE: maintenance is not a failure);
 * unhealthy are all of them but AVAILABLE, so hosts being remediated (RECOVERING, FENCING) and fenced
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

/** oVirt's rule: fence nobody when more than half the hosts look unhealthy. */
export const DEFAULT_MAX_UNHEALTHY: MaxUnhealthy = Object.freeze({ kind: 'percent', value: 50 });

const NOT_COUNTED: ReadonlySet<HaState> = new Set(['DISABLED', 'INELIGIBLE']);

export interface StormVerdict {
  readonly total: number;
  readonly unhealthy: number;
  /** maxUnhealthy resolved against `total`. */
  readonly limit: number;
  readonly allowance: RemediationAllowance;
}

export function formatMaxUnhealthy(m: MaxUnhealthy): string {
  return m.kind === 'percent' ? `${m.value}%` : String(m.value);
}

export function resolveLimit(m: MaxUnhealthy, total: number): number {
  return m.kind === 'count' ? m.value : Math.ceil((total * m.value) / 100);
}

export function judgeStorm(partition: string, states: readonly HaState[], max: MaxUnhealthy): StormVerdict {
  const counted = states.filter((s) => !NOT_COUNTED.has(s));
  const total = counted.length;
  const unhealthy = counted.filter((s) => s !== 'AVAILABLE').length;
  const limit = resolveLimit(max, total);
  if (unhealthy <= limit) return { total, unhealthy, limit, allowance: { allowed: true } };
  return {
    total, unhealthy, limit,
    allowance: {
      allowed: false,
      reason: `storm protection: ${unhealthy} of ${total} hosts in ${partition} are unhealthy, more than maxUnhealthy `
        + `${formatMaxUnhealthy(max)} (= ${limit}); no new recovery or fence starts`,
    },
  };
}
