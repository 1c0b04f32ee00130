/**
 * One life of a simulated process (an NC, the CC, a hypervisor host). kill -9 ends it: its timers
 * stop firing and every I/O it starts or awaits from then on never completes, so the code of a dead
 * process simply stops — exactly what a crashed process does. A restart is a new incarnation.
 */
import type { Clock, TimerHandle } from '../shared/clock.js';

export class Incarnation {
  private alive = true;
  private readonly onDeath: (() => void)[] = [];

  constructor(readonly name: string, readonly number: number) {}

  get isAlive(): boolean {
    return this.alive;
  }

  kill(): void {
    if (!this.alive) return;
    this.alive = false;
    for (const fn of this.onDeath.splice(0)) fn();
  }

  /** Runs `fn` when this incarnation dies (at once if it is already dead). */
  whenDead(fn: () => void): void {
    if (this.alive) this.onDeath.push(fn);
    else fn();
  }

  /** The shared clock as this process sees it: its timers die with it. */
  clock(base: Clock): Clock {
    return {
      now: () => base.now(),
      setTimer: (ms: number, fn: () => void): TimerHandle => base.setTimer(ms, () => {
        if (this.alive) fn();
      }),
    };
  }

  /** Passes `p` through while alive; a dead process never sees the outcome. */
  guard<T>(p: Promise<T>): Promise<T> {
    return p.then(
      (v) => (this.alive ? v : never<T>()),
      (e: unknown) => (this.alive ? Promise.reject(e) : never<T>()),
    );
  }
}

/** A promise that never settles: what a dead process waits on. */
export function never<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}
