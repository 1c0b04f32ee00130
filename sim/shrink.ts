/**
 * Shrinks a failing seed to a short replayable schedule: first drop every event after the
 * violation (a run is deterministic, so later events cannot matter), then remove chunks of events,
 * halving the chunk size, keeping each removal while the same invariant is still violated.
 */
import { runSeed, type SeedOptions, type SeedResult } from './runSeed.js';

export interface Shrunk {
  readonly seed: number;
  /** Indexes into the seed's full schedule. */
  readonly keep: readonly number[];
  readonly result: SeedResult;
  readonly runs: number;
}

export async function shrink(seed: number, failing: SeedResult, budget = 120, o: Omit<SeedOptions, 'keep'> = {}): Promise<Shrunk> {
  const first = failing.violations[0];
  // The simulator's own API misused (shrinking a seed that passed): a developer's error, not an operator's.
  if (!first) throw new Error(`seed ${seed} did not fail`);
  let runs = 0;
  let best = failing;
  const stillFails = async (keep: readonly number[]): Promise<boolean> => {
    runs++;
    const r = await runSeed(seed, { ...o, keep: new Set(keep) });
    if (!r.violations.some((v) => v.invariant === first.invariant)) return false;
    best = r;
    return true;
  };
  let keep = failing.events.map((_, i) => i).filter((i) => (failing.events[i]?.at ?? 0) <= first.atMs);
  if (keep.length < failing.events.length && !(await stillFails(keep))) keep = failing.events.map((_, i) => i);
  for (let chunk = Math.ceil(keep.length / 2); chunk >= 1 && runs < budget; chunk = chunk === 1 ? 0 : Math.ceil(chunk / 2)) {
    for (let at = 0; at < keep.length && runs < budget;) {
      const candidate = [...keep.slice(0, at), ...keep.slice(at + chunk)];
      if (candidate.length < keep.length && (await stillFails(candidate))) keep = candidate;
      else at += chunk;
    }
  }
  return { seed, keep, result: best, runs };
}
