/**
 * What only the leading replica runs (issue 21): for a CLC host HA's loop, the event watcher, the
 * webhook, the recovery of volumes left in flight, the paging key; for a CC node polling, the plan
 * driver and move repair. Level-based (STYLE, the reconcile loop):
 * `reconcile()` compares "leads now" with "duties running" and starts or stops them; it is called on
 * every change the election reports, so a missed call is harmless.
 *
 * Stopping is at once, not queued behind a start: the election reports the loss at the lease's
 * deadline minus its margin (shared/leader/leaderMachine.ts), and every duty's stop() cancels its
 * timers before its first await, so nothing is started after that moment. Work already under way
 * finishes or fails; its store writes are refused by the store's fence and by etcd's guard. Duties are
 * built afresh per term, from the store as the previous leader left it.
 */
import type { Logger } from 'pino';

/** One background job of the leader. stop() may come before, during or after start(). */
export interface Duty {
  readonly name: string;
  start(): Promise<void>;
  /** Cancels its timers synchronously (before any await), then waits for the work under way. */
  stop(): Promise<void>;
}

export interface LeaderDutiesOptions {
  readonly leadership: { leading(): boolean };
  /** Who runs them, for the log ('CLC', 'CC'). */
  readonly role?: string;
  /** This term's duties, in start order (made when leadership is gained). */
  readonly duties: () => readonly Duty[];
  /** Leadership lost: refuse what waits (the change gate's queue). */
  readonly onLost?: () => void;
  readonly logger: Logger;
}

export class LeaderDuties {
  private term: { readonly duties: readonly Duty[]; stopped: boolean } | undefined;
  private starting: Promise<Error | undefined> = Promise.resolve(undefined);
  private stopping: Promise<unknown> = Promise.resolve();
  private terms = 0;

  constructor(private readonly opts: LeaderDutiesOptions) {}

  /** Whether duties run now (for tests and the log). */
  running(): boolean {
    return this.term !== undefined;
  }

  /** How many times leadership was taken up (for tests). */
  termsStarted(): number {
    return this.terms;
  }

  reconcile(): void {
    const leads = this.opts.leadership.leading();
    if (!leads && this.term !== undefined) this.end('leadership lost');
    else if (leads && this.term === undefined) this.begin();
  }

  /** Resolves once the duties of the current term have started, with the first start that failed (each is logged; the rest still start). */
  ready(): Promise<Error | undefined> {
    return this.starting;
  }

  /** Stops the duties (process shutdown); resolves once their work under way ended. */
  async stop(): Promise<void> {
    if (this.term !== undefined) this.end('stopping');
    await this.starting;
    await this.stopping;
  }

  private begin(): void {
    const term = { duties: this.opts.duties(), stopped: false };
    this.term = term;
    this.terms++;
    this.opts.logger.info({ duties: term.duties.map((d) => d.name) }, `this ${this.opts.role ?? 'CLC'} replica leads: starting the leader's duties`);
    // After the previous term's stops settled: two terms never run one duty at once.
    const previous = this.stopping;
    this.starting = previous.then(async () => {
      let failed: Error | undefined;
      for (const d of term.duties) {
        if (term.stopped) break;
        try {
          await d.start();
        } catch (e) {
          failed ??= e as Error;
          this.opts.logger.error({ duty: d.name, err: (e as Error).message }, 'a leader duty failed to start; it runs again at the next leadership');
        }
      }
      return failed;
    });
  }

  private end(why: string): void {
    const term = this.term;
    if (term === undefined) return;
    this.term = undefined;
    term.stopped = true;
    // Synchronous part first, for every duty: their timers are gone before this returns.
    const stops = term.duties.map((d) => d.stop().catch((e: unknown) => this.opts.logger.warn({ duty: d.name, err: (e as Error).message }, 'a leader duty did not stop cleanly')));
    this.stopping = Promise.all([this.stopping, ...stops]);
    this.opts.logger.warn({ why }, `this ${this.opts.role ?? 'CLC'} replica no longer leads: its duties are stopped`);
    this.opts.onLost?.();
  }
}
