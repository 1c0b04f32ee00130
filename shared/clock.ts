/** Time as an input (STYLE habit 3): cores read `now` from an injected Clock, never Date.now(). */
import { TimerHeap } from './timerHeap.js';

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
  private readonly timers = new TimerHeap<PendingTimer>();
  /** Pending timers not cancelled (cancelled ones leave the heap when they reach its top). */
  private live = 0;

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const timer: PendingTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    this.live++;
    return {
      cancel: () => {
        if (timer.cancelled) return;
        timer.cancelled = true;
        this.live--;
      },
    };
  }

  /** Advances time by `ms`, firing due timers in time order (ties in creation order). */
  advance(ms: number): void {
    const target = this.current + ms;
    for (let next = this.head(); next && next.at <= target; next = this.head()) {
      this.timers.pop();
      this.live--;
      next.cancelled = true; // fired: a later cancel() is a no-op
      this.current = next.at;
      next.fn();
    }
    this.current = target;
  }

  /** When the earliest pending timer is due; undefined when none is (the simulator steps to it). */
  nextTimerAt(): number | undefined {
    return this.head()?.at;
  }

  pendingTimers(): number {
    return this.live;
  }

  /** The earliest timer not cancelled, dropping cancelled ones on the way. */
  private head(): PendingTimer | undefined {
    for (let t = this.timers.peek(); t; t = this.timers.peek()) {
      if (!t.cancelled) return t;
      this.timers.pop();
    }
    return undefined;
  }
}
