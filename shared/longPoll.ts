/**
 * A long poll on the injected clock: answers as soon as `read` returns something, or with nothing
 * once `waitMs` has passed. Between looks it sleeps `recheckMs`, or less when `subscribe` is given
 * and says a change happened (DescribeEvents wakes on an append; DescribeHAEvents only rechecks).
 */
import type { Clock } from './clock.js';

export interface LongPollOptions {
  readonly clock: Clock;
  readonly waitMs: number;
  readonly recheckMs: number;
  /** Calls `wake` on a change; returns the unsubscribe function. */
  readonly subscribe?: (wake: () => void) => () => void;
}

export async function longPoll<T>(read: () => T[], o: LongPollOptions): Promise<T[]> {
  const deadline = o.clock.now() + o.waitMs;
  for (;;) {
    const out = read();
    const left = deadline - o.clock.now();
    if (out.length > 0 || left <= 0) return out;
    await new Promise<void>((resolve) => {
      const timer = o.clock.setTimer(Math.min(o.recheckMs, left), done);
      const off = o.subscribe?.(done);
      function done(): void {
        timer.cancel();
        off?.();
        resolve();
      }
    });
  }
}
