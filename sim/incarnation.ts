/**
 * One life of a simulated process (an NC, the CC, a hypervisor host). kill -9 ends it: its timers
 * stop firing and every I/O it starts or awaits from then on never completes, so the code of a dead
 * process simply stops — exactly what a crashed process does. A restart is a new incarnation.
 * A pause (SIGSTOP, a VM frozen by its host, a long GC) stops it without killing it: timers due and
 * answers that arrive meanwhile wait, and run in order when it resumes, on the clock of that moment.
 */
import type { Clock, TimerHandle } from '../shared/clock.js';

export class Incarnation {
  private alive = true;
  private readonly onDeath: (() => void)[] = [];
  /** While paused: what came due, to run on resume (undefined while running). */
  private held: (() => void)[] | undefined;

  constructor(readonly name: string, readonly number: number) {}

  get isAlive(): boolean {
    return this.alive;
  }

  get isPaused(): boolean {
    return this.alive && this.held !== undefined;
  }

  /** Stops running without dying (see the file's comment); a paused process is still alive. */
  pause(): void {
    if (this.alive && this.held === undefined) this.held = [];
  }

  /** Runs what came due while paused, in order (a dead process runs nothing). */
  resume(): void {
    const held = this.held;
    this.held = undefined;
    for (const fn of held ?? []) {
      if (this.alive) fn();
    }
  }

  /** Resolves at once while running, on resume while paused, never once dead. */
  whenRunning(): Promise<void> {
    if (!this.alive) return never<void>();
    if (this.held === undefined) return Promise.resolve();
    return new Promise<void>((resolve) => this.held?.push(resolve));
  }

  /** Runs `fn` now, or on resume while paused; never once dead. */
  private run(fn: () => void): void {
    if (!this.alive) return;
    if (this.held !== undefined) this.held.push(fn);
    else fn();
  }

  kill(): void {
    if (!this.alive) return;
    this.alive = false;
    this.held = undefined;
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
      setTimer: (ms: number, fn: () => void): TimerHandle => base.setTimer(ms, () => this.run(fn)),
    };
  }

  /** Passes `p` through while alive (on resume while paused); a dead process never sees the outcome. */
  guard<T>(p: Promise<T>): Promise<T> {
    // Running: passed straight through, so runs without pauses keep their interleavings (and trace hashes).
    return p.then(
      (v) => (this.held === undefined ? (this.alive ? v : never<T>()) : this.whenRunning().then(() => v)),
      (e: unknown) => (this.held === undefined ? (this.alive ? Promise.reject(e) : never<T>()) : this.whenRunning().then(() => Promise.reject(e))),
    );
  }
}

/** A promise that never settles: what a dead process waits on. */
export function never<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}
