/**
 * The live-migration item executor: executes the pure decisions of migrationSource.ts and
 * migrationRecovery.ts (the destination half is incomingItemExecutor.ts) against the store and the
 * hypervisor. Every step runs in the node's mailbox (one operation at a time, with runs and
 * terminates), and keeps the NC's rule: persist the intent, act on the hypervisor, persist the
 * outcome, then reply. The hypervisor's migration runs outside the mailbox (outgoingJobs.ts); its
 * outcome comes back in. Timeouts and arrivals are looked at on a tick of the injected clock while
 * anything is active.
 */
import type { TimerHandle } from '../shared/clock.js';
import { isFerryError } from '../shared/errors/registry.js';
import { credentialIdentity } from '../shared/pki/migrationPeer.js';
import type { Incoming, MigrationPlan, NcMigrateRequest } from '../shared/protocol/migrationProtocol.js';
import { NcErrors } from './errors.js';
import type { HypervisorDriver, HypervisorEvent } from './hypervisor/driver.js';
import { IncomingItemExecutor } from './incomingItemExecutor.js';
import type { MigrationCredential } from '../shared/protocol/migrationProtocol.js';
import { tell, type MigrateAnswer, type MigrationContext } from './migrationContext.js';
import { incomingView } from './migrationDestination.js';
import { planView } from './migrationPlans.js';
import { planMigrationWork, type MigrationWork, type RecoveryTrigger } from './migrationRecovery.js';
import {
  applyAwaitCredential, applyCleaning, applyCommit, applyCompleted, applyOutcomeEnd, applyRejoin, applyReplanFail, applyReplanMove,
  applyRollback, applySourcePrepare, applyTimeoutAbort, decideCommit, decideOutcome, decideReplan, decideSourcePrepare, decideSourceRollback, findItem,
  hypervisorMigrationId, timeoutReason, type CommitRequest, type MigrationOutcome, type ReplanRequest, type RollbackRequest,
} from './migrationSource.js';
import type { NcSnapshot } from './ncStore.js';
import { OutgoingJobs, type JobOutcome, type OutgoingJob } from './outgoingJobs.js';

export type { MigrateAnswer };

export interface MigrationTiming {
  /** While a migration is active, how often timeouts and arrivals are looked at (injected clock). */
  readonly tickMs: number;
  /** How long a rollback waits for an aborted migration to settle before it answers anyway. */
  readonly abortWaitMs: number;
}

export const DEFAULT_MIGRATION_TIMING: MigrationTiming = Object.freeze({ tickMs: 1000, abortWaitMs: 10_000 });

export interface MigrationItemExecutorOptions extends MigrationContext {
  /** For events only; every call goes through `link`. */
  readonly driver: HypervisorDriver;
  readonly timing?: Partial<MigrationTiming>;
}

export class MigrationItemExecutor {
  private readonly jobs: OutgoingJobs;
  private readonly incoming: IncomingItemExecutor;
  private readonly timing: MigrationTiming;
  private tickTimer: TimerHandle | undefined;
  private offEvents: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly o: MigrationItemExecutorOptions) {
    this.jobs = new OutgoingJobs(o.link, o.clock);
    this.incoming = new IncomingItemExecutor(o, () => this.ensureTick());
    this.timing = { ...DEFAULT_MIGRATION_TIMING, ...o.timing };
  }

  /** Subscribes to hypervisor events (hints: every decision re-reads the hypervisor). */
  start(): void {
    this.offEvents ??= this.o.driver.onEvent((e) => this.onEvent(e));
  }

  /** Stops ticking and listening; live hypervisor migrations carry on and are re-joined at next start. */
  stop(): void {
    this.stopped = true;
    this.tickTimer?.cancel();
    this.tickTimer = undefined;
    this.offEvents?.();
    this.offEvents = undefined;
  }

  // --- inside the mailbox only ---

  handle(req: NcMigrateRequest): Promise<MigrateAnswer> {
    switch (req.action) {
      case 'prepare': return req.role === 'source' ? this.prepareSource(req.plan) : this.incoming.prepare(req);
      case 'commit': return this.commit(req);
      case 'replan': return this.replan(req);
      case 'rollback': return req.role === 'source' ? this.rollbackSource(req) : this.incoming.rollback(req);
    }
  }

  /** Level-based recovery from the store and the cached observation; the caller refreshed it. */
  async reconcile(trigger: RecoveryTrigger): Promise<void> {
    if (!this.o.link.healthy) return;
    const work = planMigrationWork({ snapshot: this.snap, observation: this.o.domains.current, liveJobs: this.jobs.keys(), trigger });
    for (const w of work) {
      try {
        await this.execute(w);
      } catch (e) {
        // Lost the hypervisor: the reconnect runs this again. A refusal: log it and go on.
        if (!this.o.link.healthy) break;
        this.o.logger.error({ err: e, work: w }, 'migration recovery step failed; retried on the next look');
      }
    }
    this.ensureTick();
  }

  planViews(): MigrationPlan[] {
    return Object.values(this.snap.plans)
      .sort((a, b) => a.createdAt - b.createdAt || a.migrationId.localeCompare(b.migrationId))
      .map((p) => planView(p, (id) => this.jobs.of(p.migrationId, id)?.progress));
  }

  incomingViews(): Incoming[] {
    return Object.values(this.snap.incoming).sort((a, b) => a.instanceId.localeCompare(b.instanceId)).map(incomingView);
  }

  // --- source ---

  private async prepareSource(plan: MigrationPlan): Promise<MigrateAnswer> {
    const id = plan.migrationId;
    if (this.snap.plans[id]) return this.answer(id);
    // Source prepare is the check that every domain runs: look at the hypervisor now.
    const observation = this.o.domains.replace(await this.o.link.call('list', (d) => d.list()));
    const d = decideSourcePrepare({ host: this.o.host, snapshot: this.snap, plan, observation, now: this.now() });
    if (d.kind === 'refuse') throw NcErrors.make(d.code, d.fields);
    if (d.kind === 'accept') {
      await this.o.persist((draft) => applySourcePrepare(draft, d.plan));
      this.o.logger.info({ migrationId: id, kind: plan.request.kind, items: plan.items.length }, 'migration plan prepared');
      this.tell('migration', id);
    }
    return this.answer(id);
  }

  private async commit(req: CommitRequest): Promise<MigrateAnswer> {
    const generation = req.credential ? credentialIdentity(req.credential)?.generation : undefined;
    const d = decideCommit(this.o.host, this.snap, req, generation);
    if (d.kind === 'refuse') throw NcErrors.make(d.code, d.fields);
    if (d.kind === 'rejoin' && req.credential) {
      // Persisted first: if this process dies before its hypervisor has the migration, the next one asks again.
      await this.o.persist((draft) => applyRejoin(draft, req.migrationId, req.instanceId));
      this.o.logger.info({ migrationId: req.migrationId, instanceId: req.instanceId, generation }, 're-joining a migration with a re-issued credential');
      this.tell('migration', req.migrationId, req.instanceId);
      this.startJob(req.migrationId, req.instanceId, d.item.destinationUri ?? req.destinationUri, req.credential);
      this.ensureTick();
      return this.answer(req.migrationId);
    }
    if (d.kind === 'start' && !req.credential && this.o.requireCredentials) {
      throw NcErrors.make('MigrationCredentialMissing', { host: this.o.host, step: 'commit', instanceId: req.instanceId, migrationId: req.migrationId });
    }
    if (d.kind === 'start') {
      // The domain must run here now: afterwards a missing domain means it moved (decideOutcome).
      const domain = await this.o.link.call('info', (drv) => drv.info(req.instanceId));
      if (domain) this.o.domains.note(domain);
      if (domain?.state !== 'running' && domain?.state !== 'suspended') {
        throw NcErrors.make('InstanceNotRunning', { host: this.o.host, instanceId: req.instanceId, state: domain?.state ?? 'missing' });
      }
      await this.o.persist((draft) => applyCommit(draft, req, this.now()));
      this.o.logger.info({ migrationId: req.migrationId, instanceId: req.instanceId, destination: req.destination }, 'migration committed');
      this.tell('migration', req.migrationId, req.instanceId);
      this.startJob(req.migrationId, req.instanceId, req.destinationUri, req.credential);
      this.ensureTick();
    }
    return this.answer(req.migrationId);
  }

  private async replan(req: ReplanRequest): Promise<MigrateAnswer> {
    const d = decideReplan(this.o.host, this.snap, req);
    if (d.kind === 'refuse') throw NcErrors.make(d.code, d.fields);
    if (d.kind === 'move') {
      await this.o.persist((draft) => applyReplanMove(draft, req.migrationId, req.instanceId, d.destination));
    } else if (d.kind === 'fail') {
      await this.o.persist((draft) => applyReplanFail(draft, req.migrationId, req.instanceId, d.error, this.now()));
    }
    if (d.kind !== 'answer') {
      this.o.logger.info({ migrationId: req.migrationId, instanceId: req.instanceId, destination: req.destination }, 'migration item re-planned');
      this.tell('migration', req.migrationId, req.instanceId);
    }
    return this.answer(req.migrationId);
  }

  private async rollbackSource(req: RollbackRequest): Promise<MigrateAnswer> {
    const d = decideSourceRollback(this.snap, req);
    if (d.kind === 'nothing') return this.answer(req.migrationId);
    const ended = req.cancel ? 'cancelled' : 'rolled-back';
    // Uncommitted items end now; migrating ones get their abort recorded before the hypervisor hears it.
    await this.o.persist((draft) => {
      for (const id of [...d.end, ...d.abort]) applyRollback(draft, req.migrationId, id, d.reason, req.cancel, this.now());
      const plan = draft.plans[req.migrationId];
      if (plan && d.setCancelRequested) plan.cancelRequested = true;
    });
    this.o.logger.info({ migrationId: req.migrationId, ended: d.end, aborting: d.abort, reason: d.reason }, `migration ${ended}`);
    this.tell('migration', req.migrationId, req.instanceId);
    for (const id of d.abort) await this.abortOutgoing(req.migrationId, id, true);
    return this.answer(req.migrationId);
  }

  /**
   * The credential goes to the hypervisor with the job and is not kept: a job re-joined after a
   * restart has none, which is enough to join a live migration and refuses to start a new one (the
   * item then awaits a re-issued credential: settle).
   */
  private startJob(migrationId: string, instanceId: string, destinationUri: string, credential?: MigrationCredential): OutgoingJob {
    return this.jobs.start(migrationId, instanceId, destinationUri, credential, (job, outcome) => {
      if (this.stopped) return;
      this.o.post(() => this.settle(job, outcome)).catch((e: unknown) => this.o.logger.error({ err: e, migrationId, instanceId }, 'could not record a migration outcome'));
    });
  }

  /**
   * Asks the hypervisor to abort; `wait`: then waits (bounded) for the outcome and records it. A
   * refusal (the switchover has begun) is not an error: the outcome, either way, decides.
   */
  private async abortOutgoing(migrationId: string, instanceId: string, wait: boolean): Promise<void> {
    const item = findItem(this.snap, migrationId, instanceId);
    if (item?.state !== 'migrating') return;
    const job = this.jobs.of(migrationId, instanceId) ?? this.startJob(migrationId, instanceId, item.destinationUri ?? '');
    const key = hypervisorMigrationId(migrationId, instanceId);
    try {
      await this.o.link.call('abortMigration', (d) => d.abortMigration(instanceId, key));
    } catch (e) {
      if (!isFerryError(e) || e.code !== 'HypervisorRefused') throw e;
      this.o.logger.info({ migrationId, instanceId, err: e }, 'the hypervisor did not abort (switchover under way?); its outcome decides');
    }
    if (!wait) return;
    const outcome = await this.jobs.within(job, this.timing.abortWaitMs);
    if (outcome) await this.settle(job, outcome);
  }

  /** A migrateOut call came back: end the item from the outcome and what is still on this host. */
  private async settle(job: OutgoingJob, outcome: JobOutcome): Promise<void> {
    this.jobs.finished(job);
    const { migrationId, instanceId } = job;
    const item = findItem(this.snap, migrationId, instanceId);
    if (item?.state !== 'migrating') return; // already settled (a rollback waited for it)
    if (outcome.kind === 'unknown') {
      this.o.logger.warn({ migrationId, instanceId, err: outcome.error }, 'lost the hypervisor during a migration; re-joining it after reconnect');
      return;
    }
    let result: MigrationOutcome;
    if (outcome.kind === 'completed') {
      result = { kind: 'completed', stats: outcome.stats };
    } else {
      // If this throws (hypervisor gone), the item stays migrating and the reconnect re-joins it.
      const domain = await this.o.link.call('info', (d) => d.info(instanceId));
      if (domain) this.o.domains.note(domain);
      const needsCredential = this.o.requireCredentials && !job.withCredential && refusedForWantOfCredential(outcome.error);
      result = { kind: 'failed', error: describeError(outcome.error), domain: domain ? 'present' : 'missing', needsCredential };
    }
    const decision = decideOutcome(item, result);
    if (decision.next === 'await-credential') {
      const generation = await this.o.persist((d) => applyAwaitCredential(d, migrationId, instanceId, this.now()));
      this.o.logger.warn(
        { migrationId, instanceId, generation },
        'the hypervisor never got this migration and cannot start it without the credential the last NC process lost: awaiting a re-issued one',
      );
      this.tell('migration', migrationId, instanceId);
      return;
    }
    if (decision.next === 'cleaning') {
      await this.o.persist((d) => applyCleaning(d, migrationId, instanceId, decision.stats, job.progress));
      if (decision.inferred) this.o.logger.warn({ migrationId, instanceId }, 'the domain left this host though its migration outcome was lost: it moved');
      this.tell('migration', migrationId, instanceId);
      await this.finishCleaning(migrationId, instanceId);
      return;
    }
    if (decision.next === 'settled') return;
    await this.o.persist((d) => applyOutcomeEnd(d, migrationId, instanceId, result, this.now()));
    this.o.logger.warn({ migrationId, instanceId, error: decision.error }, `migration ${decision.next}; the instance runs here`);
    this.tell('migration', migrationId, instanceId);
  }

  /** The VM runs on the destination: remove a stale definition left here, then the record, in that order. */
  private async finishCleaning(migrationId: string, instanceId: string): Promise<void> {
    const domain = await this.o.link.call('info', (d) => d.info(instanceId));
    if (domain?.state === 'shutoff' || domain?.state === 'crashed') {
      await this.o.link.call('destroy', (d) => d.destroy(instanceId));
      this.o.logger.info({ migrationId, instanceId }, 'removed the definition the migration left here');
      this.o.domains.forget(instanceId);
    } else if (domain) {
      // Never destroy a live guest on an inference: it is kept, logged and counted as an orphan.
      this.o.logger.error({ migrationId, instanceId, state: domain.state }, 'a migrated instance still has a live domain here; leaving it alone');
    } else {
      this.o.domains.forget(instanceId);
    }
    // The instance runs on the destination with its volumes: this host's access to them is revoked.
    const volumes = (this.snap.instances[instanceId]?.volumes ?? []).map(({ volumeId, device, path }) => ({ volumeId, device, path }));
    await this.o.volumes.disconnect(instanceId, volumes);
    await this.o.persist((d) => applyCompleted(d, migrationId, instanceId, this.now()));
    const item = findItem(this.snap, migrationId, instanceId);
    this.o.logger.info({ migrationId, instanceId, destination: item?.destination, stats: item?.stats }, 'instance migrated away');
    this.tell('migration', migrationId, instanceId);
    this.tell('instance', migrationId, instanceId);
  }

  // --- recovery, ticks, events ---

  private async execute(w: MigrationWork): Promise<void> {
    switch (w.kind) {
      case 'join': {
        const item = findItem(this.snap, w.migrationId, w.instanceId);
        if (item?.state !== 'migrating') return;
        this.o.logger.info({ migrationId: w.migrationId, instanceId: w.instanceId }, 're-joining a migration');
        this.startJob(w.migrationId, w.instanceId, item.destinationUri ?? '');
        if (item.abort) await this.abortOutgoing(w.migrationId, w.instanceId, false);
        return;
      }
      case 'finish-cleaning': return this.finishCleaning(w.migrationId, w.instanceId);
      case 'release':
        await this.o.persist((d) => {
          const rec = d.instances[w.instanceId];
          if (!rec) return;
          rec.migrationState = 'none';
          delete rec.migrationId;
        });
        this.o.logger.warn({ instanceId: w.instanceId }, 'released an instance no live migration holds');
        return;
      case 'finalize': return this.incoming.finalize(w.instanceId);
      case 'finish-rollback': return this.incoming.finishRollback(w.instanceId, 'rollback resumed after a restart');
      case 'prepare-incoming': return this.incoming.prepareAgain(w.instanceId);
    }
  }

  private active(): boolean {
    if (this.jobs.size > 0 || Object.keys(this.snap.incoming).length > 0) return true;
    return Object.values(this.snap.plans).some((p) => p.items.some((i) => i.state === 'migrating' || i.state === 'cleaning'));
  }

  private ensureTick(): void {
    if (this.stopped || this.tickTimer || !this.active()) return;
    this.tickTimer = this.o.clock.setTimer(this.timing.tickMs, () => {
      this.tickTimer = undefined;
      this.o.post(() => this.tick()).catch((e: unknown) => this.o.logger.error({ err: e }, 'migration tick failed'));
    });
  }

  /** Source timeouts, then (when something is incoming or unsettled) a fresh look at the hypervisor. */
  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.o.link.healthy) {
      await this.checkTimeouts();
      try {
        if (Object.keys(this.snap.incoming).length > 0) this.o.domains.replace(await this.o.link.call('list', (d) => d.list()));
        await this.reconcile('poll');
      } catch (e) {
        this.o.logger.debug({ err: e }, 'migration tick could not look at the hypervisor');
      }
    }
    this.ensureTick();
  }

  private async checkTimeouts(): Promise<void> {
    const now = this.now();
    // Live jobs (allowance and stall), and items awaiting a re-issued credential (allowance only).
    const watched: { migrationId: string; instanceId: string; lastProgressAt: number | undefined }[] = this.jobs.all()
      .map((j) => ({ migrationId: j.migrationId, instanceId: j.instanceId, lastProgressAt: j.lastProgressAt }));
    for (const plan of Object.values(this.snap.plans)) {
      for (const i of plan.items) {
        if (i.awaitingCredential === true && !this.jobs.of(plan.migrationId, i.instanceId)) watched.push({ migrationId: plan.migrationId, instanceId: i.instanceId, lastProgressAt: undefined });
      }
    }
    for (const { migrationId, instanceId, lastProgressAt } of watched) {
      const plan = this.snap.plans[migrationId];
      const item = findItem(this.snap, migrationId, instanceId);
      if (!plan || !item) continue;
      const reason = timeoutReason(item, plan.timeouts, lastProgressAt, now);
      if (!reason) continue;
      this.o.logger.warn({ migrationId, instanceId, reason }, 'aborting a migration');
      try {
        await this.o.persist((d) => applyTimeoutAbort(d, migrationId, instanceId, reason));
        await this.abortOutgoing(migrationId, instanceId, false);
      } catch (e) {
        this.o.logger.warn({ err: e, migrationId, instanceId }, 'abort not delivered; recovery repeats it');
      }
    }
  }

  private onEvent(e: HypervisorEvent): void {
    if (this.stopped) return;
    if (e.kind === 'migration-progress') {
      this.jobs.progressed(e.progress);
    } else if (e.kind === 'migration-incoming-done' && this.snap.incoming[e.id]) {
      const id = e.id;
      this.o.post(() => this.incoming.checkArrival(id)).catch((err: unknown) => this.o.logger.debug({ err, instanceId: id }, 'arrival check failed; the tick looks again'));
    }
  }

  // --- helpers ---

  private get snap(): NcSnapshot {
    return this.o.snapshot();
  }

  private now(): number {
    return this.o.clock.now();
  }

  /** The source's answer: the plan as held, when it is (still) held. */
  private answer(migrationId: string): MigrateAnswer {
    const plan = this.snap.plans[migrationId];
    if (!plan) return { migrationId };
    return { migrationId, plan: planView(plan, (id) => this.jobs.of(migrationId, id)?.progress) };
  }

  private tell(kind: 'migration' | 'instance', migrationId?: string, instanceId?: string): void {
    tell(this.o, kind, migrationId, instanceId);
  }
}

/** The hypervisor refused to start a migration without its credential (it held none to join): nothing changed there. */
function refusedForWantOfCredential(e: unknown): boolean {
  return isFerryError(e) && e.code === 'HypervisorRefused' && e.fields.hypervisorCode === 'MigrationCredentialInvalid';
}

function describeError(e: unknown): string {
  return isFerryError(e) ? e.message : (e as Error)?.message ?? String(e);
}
