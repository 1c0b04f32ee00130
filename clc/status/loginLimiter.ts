/**
 * Failed status-page logins, counted per source address in a fixed window: past `maxFailures`
 * within `windowMs` that source is refused (StatusLoginThrottled) until its window ends. Only the
 * failing source is limited, so a guesser never locks out the administrator logging in from
 * elsewhere; a success from a source clears its count. The table is bounded: when full, the
 * source whose window started first is forgotten (a flood of sources costs memory, not lockouts).
 */
import type { Clock } from '../../shared/clock.js';

export const LOGIN_MAX_FAILURES = 5;
export const LOGIN_WINDOW_MS = 60_000;
export const LOGIN_MAX_SOURCES = 4096;

export interface LoginLimiterOptions {
  readonly clock: Clock;
  readonly maxFailures?: number;
  readonly windowMs?: number;
  readonly maxSources?: number;
}

interface Window { readonly start: number; failures: number }

export class LoginLimiter {
  private readonly windows = new Map<string, Window>();
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly maxSources: number;

  constructor(private readonly opts: LoginLimiterOptions) {
    this.maxFailures = opts.maxFailures ?? LOGIN_MAX_FAILURES;
    this.windowMs = opts.windowMs ?? LOGIN_WINDOW_MS;
    this.maxSources = opts.maxSources ?? LOGIN_MAX_SOURCES;
  }

  /** Milliseconds until `source` may try again; 0 when it may try now. */
  retryAfterMs(source: string): number {
    const w = this.current(source, this.opts.clock.now());
    if (!w || w.failures < this.maxFailures) return 0;
    return w.start + this.windowMs - this.opts.clock.now();
  }

  failed(source: string): void {
    const now = this.opts.clock.now();
    const w = this.current(source, now);
    if (w) {
      w.failures += 1;
      return;
    }
    while (this.windows.size >= this.maxSources) {
      const oldest = this.windows.keys().next();
      if (oldest.done === true) break;
      this.windows.delete(oldest.value);
    }
    this.windows.set(source, { start: now, failures: 1 });
  }

  succeeded(source: string): void {
    this.windows.delete(source);
  }

  get sources(): number {
    return this.windows.size;
  }

  private current(source: string, now: number): Window | undefined {
    const w = this.windows.get(source);
    if (w && now - w.start >= this.windowMs) {
      this.windows.delete(source);
      return undefined;
    }
    return w;
  }
}
