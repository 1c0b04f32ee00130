/**
 * The source's live migrateOut calls, in memory: one per committed item, running outside the
 * mailbox (a migration takes seconds to minutes), with its progress ticks and the time bytes last
 * moved. The hypervisor owns the migration itself: if this process dies, a new job with the same
 * hypervisor migration id joins it and collects the outcome.
 */
import type { Clock } from '../shared/clock.js';
import { isFerryError } from '../shared/errors/registry.js';
import type { MigrationCredential, PlanItem } from '../shared/protocol/migrationProtocol.js';
import type { MigrationProgress, MigrationStats } from './hypervisor/driver.js';
import type { HypervisorLink } from './hypervisorLink.js';
import { hypervisorMigrationId } from './migrationSource.js';

export type Progress = NonNullable<PlanItem['progress']>;

export type JobOutcome =
  | { readonly kind: 'completed'; readonly stats: MigrationStats }
  /** The hypervisor answered with a refusal or a failure. */
  | { readonly kind: 'failed'; readonly error: unknown }
  /** No answer: the hypervisor may still be migrating; the job is re-joined after reconnect. */
  | { readonly kind: 'unknown'; readonly error: unknown };

export interface OutgoingJob {
  /** The hypervisor's migration id (hypervisorMigrationId). */
  readonly key: string;
  readonly migrationId: string;
  readonly instanceId: string;
  /** Started with a credential (a commit, or a re-join's re-issue); false for a join after a restart. */
  readonly withCredential: boolean;
  /** Settles with the hypervisor's answer; never rejects. */
  readonly outcome: Promise<JobOutcome>;
  /** Injected-clock time bytes last moved (the job's start until the first tick). */
  lastProgressAt: number;
  progress: Progress | undefined;
}

export class OutgoingJobs {
  private readonly jobs = new Map<string, OutgoingJob>();

  constructor(private readonly link: HypervisorLink, private readonly clock: Clock) {}

  get size(): number {
    return this.jobs.size;
  }

  keys(): ReadonlySet<string> {
    return new Set(this.jobs.keys());
  }

  all(): OutgoingJob[] {
    return [...this.jobs.values()];
  }

  of(migrationId: string, instanceId: string): OutgoingJob | undefined {
    return this.jobs.get(hypervisorMigrationId(migrationId, instanceId));
  }

  /**
   * Starts (or, the same id again, joins) the hypervisor's migration; `onOutcome` runs once it
   * settles. A job already live for the item is returned as it is.
   */
  start(
    migrationId: string, instanceId: string, destinationUri: string, credential: MigrationCredential | undefined,
    onOutcome: (job: OutgoingJob, o: JobOutcome) => void,
  ): OutgoingJob {
    const key = hypervisorMigrationId(migrationId, instanceId);
    const live = this.jobs.get(key);
    if (live) return live;
    const outcome: Promise<JobOutcome> = this.link
      .call('migrateOut', (d) => d.migrateOut(instanceId, { migrationId: key, destinationUri, ...(credential ? { credential } : {}) }))
      .then(
        (stats): JobOutcome => ({ kind: 'completed', stats }),
        (error: unknown): JobOutcome => ({ kind: isFerryError(error) && error.code === 'HypervisorUnavailable' ? 'unknown' : 'failed', error }),
      );
    const job: OutgoingJob = { key, migrationId, instanceId, withCredential: credential !== undefined, outcome, lastProgressAt: this.clock.now(), progress: undefined };
    this.jobs.set(key, job);
    void outcome.then((o) => onOutcome(job, o));
    return job;
  }

  /** Forgets `job` if it is still the live one for its item. */
  finished(job: OutgoingJob): void {
    if (this.jobs.get(job.key) === job) this.jobs.delete(job.key);
  }

  /** A progress event from the hypervisor; bytes moving resets the stall clock. */
  progressed(p: MigrationProgress): void {
    const job = this.jobs.get(p.migrationId);
    if (!job) return;
    if (p.bytesTransferred > (job.progress?.bytesTransferred ?? 0)) job.lastProgressAt = this.clock.now();
    job.progress = { bytesTotal: p.bytesTotal, bytesTransferred: p.bytesTransferred, bytesRemaining: p.bytesRemaining, iteration: p.iteration };
  }

  /** The job's outcome if it settles within `ms` of the injected clock, else undefined. */
  within(job: OutgoingJob, ms: number): Promise<JobOutcome | undefined> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(ms, () => resolve(undefined));
      void job.outcome.then((o) => {
        timer.cancel();
        resolve(o);
      });
    });
  }
}
