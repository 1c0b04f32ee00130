/**
 * How the CC spreads one polling round (pure). Sending all polls at once made every round a burst:
 * at 2,000 hosts, 2,000 answers to decode and apply arrived together, the CC's event loop was busy
 * for seconds at a time on a loaded machine, and the CLC's calls waiting behind them timed out
 * (issue 19; host HA then read the silence as unhealthy hosts). Spread over half the interval, the
 * same work leaves the loop free between steps; a small cloud (up to MIN_POLL_BATCH nodes) is still
 * polled in one step, as before.
 */

/** `batch` polls every `stepMs`, the first batch at once, never more than `maxInFlight` unanswered. */
export interface PollPace {
  readonly batch: number;
  readonly stepMs: number;
  readonly maxInFlight: number;
}

/** Time between two batches of a round. */
export const POLL_STEP_MS = 50;
/** Fewest polls per batch: up to this many nodes are polled at once. */
export const MIN_POLL_BATCH = 16;
/**
 * Polls of a round unanswered at once, at most: past it the round waits for answers. Without a cap,
 * NCs (or a CC) too slow to finish their TLS handshakes within the call timeout had every poll time
 * out and every next one start a new handshake: nothing ever got through (seen with 2,000 hosts on
 * a machine at load 10).
 */
export const MAX_POLLS_IN_FLIGHT = 128;

/** The pace that spreads `hosts` polls over at most half of `intervalMs` (whole steps of POLL_STEP_MS). */
export function pollPace(hosts: number, intervalMs: number): PollPace {
  const steps = Math.max(1, Math.floor(intervalMs / 2 / POLL_STEP_MS));
  return { batch: Math.max(MIN_POLL_BATCH, Math.ceil(hosts / steps)), stepMs: POLL_STEP_MS, maxInFlight: MAX_POLLS_IN_FLIGHT };
}

/** How long after its start a round sends its last batch. */
export function spreadMs(hosts: number, pace: PollPace): number {
  return Math.max(0, Math.ceil(hosts / pace.batch) - 1) * pace.stepMs;
}
