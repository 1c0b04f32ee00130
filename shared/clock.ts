/** Time as an input (STYLE habit 3): cores read `now` from an injected Clock, never Date.now(). */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` after `ms` milliseconds of this clock's time. */
  setTimer(ms: number, fn: () => void): TimerHandle;
}

/** The wall clock, for real processes. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that moves only when told to: for unit tests and the whole-cloud simulator. */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const timer: PendingTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => { timer.cancelled = true; } };
  }

  /** Advances time by `ms`, firing due timers in time order (ties in creation order). */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.current = next.at;
      next.fn();
    }
    this.current = target;
  }

  /** When the earliest pending timer is due; undefined when none is (the simulator steps to it). */
  nextTimerAt(): number | undefined {
    let at: number | undefined;
    for (const t of this.timers) if (!t.cancelled && (at === undefined || t.at < at)) at = t.at;
    return at;
  }

  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
