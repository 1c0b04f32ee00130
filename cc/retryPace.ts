/**
 * Pacing of an effect the CC repeats until it takes (a migration step, a move repair): after a
 * success the next one waits RETRY_MIN_MS (its answer should have moved things on); after failures,
 * a pause doubling up to RETRY_MAX_MS, so an NC that refuses is not hammered. Pure.
 */
export const RETRY_MIN_MS = 1000;
export const RETRY_MAX_MS = 30_000;

export interface Pace {
  /** Not sent again before this (the injected clock). */
  readonly until: number;
  /** Failures in a row. */
  readonly failures: number;
}

/** The pace after one more failure, and the pause it means. */
export function failedPace(prev: Pace | undefined, now: number): Pace & { readonly retryInMs: number } {
  const failures = (prev?.failures ?? 0) + 1;
  const retryInMs = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (failures - 1));
  return { until: now + retryInMs, failures, retryInMs };
}
