/**
 * A bounded queue with a bounded worker pool, one per kind of HA work (CloudStack's
 * ha.max.pending.* / ha.max.concurrent.*): at most `maxConcurrent` tasks run, at most `maxPending`
 * wait; one more is refused at once (back-pressure, never unbounded growth). A task is checked again
 * when its turn comes: a stale one (its host moved on) is dropped without running.
 */
import type { HaPoolLimits } from './settings.js';

export interface PoolTask {
  /** True when the result would be ignored anyway: the task is dropped instead of run. */
  isStale(): boolean;
  /** Never rejects (the runner turns failures into result events). */
  run(): Promise<void>;
}

export type SubmitResult = 'accepted' | 'full';

export interface PoolStats {
  readonly running: number;
  readonly pending: number;
  readonly completed: number;
  readonly dropped: number;
  readonly refused: number;
}

export class WorkPool {
  private readonly queue: PoolTask[] = [];
  private running = 0;
  private completed = 0;
  private dropped = 0;
  private refused = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(readonly name: string, private readonly limits: HaPoolLimits) {}

  submit(task: PoolTask): SubmitResult {
    if (this.running < this.limits.maxConcurrent && this.queue.length === 0) {
      this.start(task);
      return 'accepted';
    }
    if (this.queue.length >= this.limits.maxPending) {
      this.refused++;
      return 'full';
    }
    this.queue.push(task);
    return 'accepted';
  }

  stats(): PoolStats {
    return { running: this.running, pending: this.queue.length, completed: this.completed, dropped: this.dropped, refused: this.refused };
  }

  /** Resolves once nothing runs or waits. */
  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private start(task: PoolTask): void {
    if (task.isStale()) {
      this.dropped++;
      this.next();
      return;
    }
    this.running++;
    void task.run().catch(() => undefined).finally(() => {
      this.running--;
      this.completed++;
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.limits.maxConcurrent) {
      const task = this.queue.shift();
      if (!task) break;
      if (task.isStale()) {
        this.dropped++;
        continue;
      }
      this.start(task);
    }
    if (this.running === 0 && this.queue.length === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }
}
