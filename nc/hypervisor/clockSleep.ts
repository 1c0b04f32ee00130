/** Waiting on an injected Clock (never a bare setTimeout), cancellable with an AbortSignal. */
import type { Clock } from '../../shared/clock.js';

export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  // A zero wait resolves at once: a ManualClock would otherwise hold it until the next advance().
  if (ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      timer.cancel();
      reject(abortReason(signal as AbortSignal));
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal): unknown {
  // Only when the caller aborted without a reason: its own cancellation, which it catches (never coded, never logged).
  return signal.reason ?? new Error('aborted');
}
