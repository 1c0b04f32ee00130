/**
 * The CLC's watch over what it does not decide itself: the migrations its CCs run (item changes,
 * outcomes) and host HA's log. Each round, on the injected clock: copy HA's new log entries, then,
 * while a recorded plan is unfinished (or every IDLE_POLL_MS to find plans the CLC never recorded,
 * such as one accepted just before a crash), ask every CC for its plans and record the differences
 * (migrationWatch.ts), computed against the stored state as it is written.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import type { Clusters } from '../clusters/clusters.js';
import type { HaLogEvent } from '../ha/haState.js';
import type { EventStream } from './eventStream.js';
import { anyUnfinished, observeMigrations, type ObservedPlan } from './migrationWatch.js';

/** Without an unfinished plan, the CCs are still asked this often: a plan the CLC never recorded is found within it. */
export const IDLE_POLL_MS = 30_000;

export interface EventWatcherOptions {
  readonly stream: EventStream;
  readonly clusters: Clusters;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Host HA's durable log (clc.json `ha.events`), read each round. */
  readonly haLog: () => readonly HaLogEvent[];
  /** The pace while a plan is unfinished. */
  readonly pollMs: number;
}

export class EventWatcher {
  private timer: TimerHandle | undefined;
  private stopped = false;
  private lastPoll = Number.NEGATIVE_INFINITY;
  /** Plans a poll saw that nobody recorded: recorded by the next poll if still unrecorded (MigrateInstances records its own within ms). */
  private unrecorded = new Set<string>();
  private round: Promise<void> = Promise.resolve();

  constructor(private readonly opts: EventWatcherOptions) {}

  start(): void {
    this.schedule(0);
  }

  /** Stops the rounds; resolves once the one under way ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.round;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.opts.clock.setTimer(ms, () => {
      this.round = this.runRound().finally(() => this.schedule(this.opts.pollMs));
    });
  }

  /** One round; errors are logged, never thrown (the next round tries again). */
  async runRound(): Promise<void> {
    const { stream, logger } = this.opts;
    try {
      await stream.copyHaEvents(this.opts.haLog);
    } catch (e) {
      logger.warn({ err: (e as Error).message }, 'event stream: copying host HA events failed; retried next round');
    }
    const now = this.opts.clock.now();
    const due = anyUnfinished(stream.state().migrations) || this.unrecorded.size > 0 || now - this.lastPoll >= IDLE_POLL_MS;
    if (!due) return;
    this.lastPoll = now;
    try {
      await this.pollMigrations();
    } catch (e) {
      logger.warn({ err: (e as Error).message }, 'event stream: recording migration events failed; retried next round');
    }
  }

  private async pollMigrations(): Promise<void> {
    const { clusters } = this.opts;
    const names = clusters.partitions.map((p) => p.name);
    const settled = await Promise.allSettled(names.map((p) => clusters.call(p, 'ccDescribeMigrations', {})));
    const answered = new Set<string>();
    const plans: ObservedPlan[] = [];
    settled.forEach((s, i) => {
      const partition = names[i] as string;
      if (s.status !== 'fulfilled') return;
      answered.add(partition);
      for (const plan of s.value.migrations) plans.push({ partition, plan });
    });
    const wasUnrecorded = this.unrecorded;
    const nowUnrecorded = new Set<string>();
    await this.opts.stream.recordFrom((state) => {
      // First sight of a plan nobody recorded: wait one poll, so MigrateInstances' own record (with its actor) wins.
      const ready = plans.filter((o) => state.migrations[o.plan.migrationId] !== undefined || wasUnrecorded.has(o.plan.migrationId));
      for (const o of plans) if (state.migrations[o.plan.migrationId] === undefined && !wasUnrecorded.has(o.plan.migrationId)) nowUnrecorded.add(o.plan.migrationId);
      const { next, events } = observeMigrations(state.migrations, answered, ready);
      state.migrations = next;
      return events;
    });
    this.unrecorded = nowUnrecorded;
  }
}
