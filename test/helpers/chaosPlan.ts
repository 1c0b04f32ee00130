/**
 * One round of the real-process chaos test, drawn from a seed before anything runs (pure): which
 * node drains under which allow/deny list, which nodes are in maintenance, what is kill -9'd when
 * and for how long, and which Enable/DisableService races the drain. Printed at the start of each
 * round, so FERRY_CHAOS_SEED replays the same schedule (real processes keep their own timing).
 */
import type { Prng } from '../../sim/prng.js';

/** `source`/`destination`: the drain's source NC, or the NC of a destination it uses (resolved when the kill happens). */
export type Victim = 'cc' | 'clc' | 'source' | 'destination';
export const VICTIMS: readonly Victim[] = ['cc', 'clc', 'source', 'destination'];

export interface Fault {
  readonly victim: Victim;
  /** After the previous fault's restart or kill (the first: after the drain request was sent; small = mid-request). */
  readonly killAfterMs: number;
  /** How long it stays dead before it is started again. */
  readonly downMs: number;
  /** Still dead when the next fault strikes (two components down at once); both restart after the next one's downMs. */
  readonly holdForNext: boolean;
}

export interface RoundPlan {
  readonly source: string;
  /** At most this many instances of earlier rounds are kept (the rest terminated). */
  readonly keep: number;
  /** The source holds this many instances when the drain starts. */
  readonly onSource: number;
  /** DisableService on the source first, as an operator would before a drain. */
  readonly disableSource: boolean;
  /** Another node in maintenance during the drain (excluded unless an allow list names it). */
  readonly disableOther: string | undefined;
  /** MigrateInstances destinations: none (any node), an allow list, or a deny list. */
  readonly variant: 'any' | 'allow' | 'deny';
  readonly listed: readonly string[];
  /** MigrateInstances Partial=true (move what fits) and ReserveDestinations=true (no new instances there meanwhile). */
  readonly partial: boolean;
  readonly reserveDestinations: boolean;
  readonly faults: readonly Fault[];
  /** An Enable/DisableService racing the drain and the kills. */
  readonly toggle: { readonly host: string; readonly enable: boolean; readonly afterMs: number } | undefined;
  /** Afterwards: kill -9 a disabled node's NC and the CC together; the node must come back disabled. */
  readonly crashDisabled: boolean;
}

export function planRound(rng: Prng, hosts: readonly string[]): RoundPlan {
  const source = rng.pick(hosts) ?? '';
  const others = hosts.filter((h) => h !== source);
  const variant = rng.pick(['any', 'allow', 'deny'] as const) ?? 'any';
  const pool = [...others];
  const draw = (n: number): string[] => Array.from({ length: n }, () => pool.splice(rng.int(0, pool.length - 1), 1)[0] ?? '');
  const listed = variant === 'allow' ? draw(rng.int(1, 2)) : variant === 'deny' ? draw(1) : [];
  const count = rng.int(1, 2);
  const faults: Fault[] = Array.from({ length: count }, (_, k) => ({
    victim: rng.pick(VICTIMS) ?? 'cc', killAfterMs: rng.int(0, 4000), downMs: rng.int(0, 3000), holdForNext: k < count - 1 && rng.chance(0.3),
  }));
  const disableOther = rng.chance(0.4) ? rng.pick(others) : undefined;
  return {
    source,
    keep: rng.int(0, 2),
    onSource: rng.int(2, 3),
    disableSource: rng.chance(0.5),
    disableOther,
    variant,
    listed,
    partial: rng.chance(0.3),
    reserveDestinations: rng.chance(0.3),
    faults,
    toggle: rng.chance(0.5) ? { host: rng.pick(hosts) ?? source, enable: rng.chance(0.5), afterMs: rng.int(0, 5000) } : undefined,
    crashDisabled: rng.chance(0.6),
  };
}

/** FERRY_CHAOS_SEED when set (a clear error when it is not a whole number), else one from the clock. */
export function chaosSeed(env: NodeJS.ProcessEnv, now: number): number {
  const raw = env.FERRY_CHAOS_SEED;
  if (raw === undefined || raw === '') return now % 1_000_000;
  if (!/^\d{1,9}$/.test(raw)) throw new Error(`FERRY_CHAOS_SEED must be a whole number (0-999999999), got ${JSON.stringify(raw)}`);
  return Number(raw);
}
