/**
 * The NC's runner: executes the pure decisions (admission.ts, termination.ts, reconcile.ts) against
 * the store and the hypervisor, one operation at a time; live migration has its own item executor
 * (migrationItemExecutor.ts) in the same mailbox. Ordering rule for every change: persist the intent, act
 * on the hypervisor, persist the outcome, then reply — so a crash at any point leaves a record that
 * start-up re-adoption can finish, and nothing acknowledged is ever lost.
 */
import type { Clock } from '../shared/clock.js';
import { isFerryError } from '../shared/errors/registry.js';
import { ListingVersions } from '../shared/listingVersions.js';
import type { Logger } from '../shared/log.js';
import type { NodeState } from '../shared/protocol/common.js';
import type { NcMigrateRequest } from '../shared/protocol/migrationProtocol.js';
import type { NcNode, NcRequest, NcResponse, TerminateReason } from '../shared/protocol/ncProtocol.js';
import { StoreErrors } from '../shared/store/errors.js';
import { decideRun, type RunRequest } from './admission.js';
import { NO_CC_NOTIFIER, type CcNodeEvent, type CcNotifier } from './ccNotifier.js';
import { DomainCache } from './domainCache.js';
import { decideStart } from './startDecision.js';
import { decidePause, setPaused, settlePauses } from './pauseDecision.js';
import { decideReboot, decideStop, setUserStopped, settleStops } from './stopDecision.js';
import { NcErrors } from './errors.js';
import type { DomainInfo, HypervisorDriver } from './hypervisor/driver.js';
import { HypervisorLink, type RetryPolicy } from './hypervisorLink.js';
import { instanceView, observedState } from './instanceView.js';
import { Mailbox } from '../shared/mailbox.js';
import { MigrationItemExecutor, type MigrateAnswer, type MigrationTiming } from './migrationItemExecutor.js';
import { DEFAULT_PLAN_RETENTION, pruneFinishedPlans, type PlanRetention } from './migrationPlans.js';
import type { InstanceRecord, NcSnapshot, NcStore } from './ncStore.js';
import type { VolumeAttachmentSpec } from '../shared/protocol/volumes.js';
import { DEFAULT_REBOOT_TIMEOUT_MS, RebootWatcher } from './rebootWatcher.js';
import { nodeView } from './nodeView.js';
import { reconcile, type ReconcileNote } from './reconcile.js';
import { decideQuarantine, quarantineForbids, type QuarantineRequest } from './quarantine.js';
import { firstLookVerdict } from './storeOrigin.js';
import { VolumeAttachments } from './volumeAttachments.js';
import { SharedFileVolumes, type VolumeConnector } from './volumeConnector.js';
import type { AttachRequest } from './volumeDecisions.js';
import {
  decideTerminate, DEFAULT_TOMBSTONES, markShuttingDown, markTerminated, noteEndedBy, pruneTombstones,
  type TerminateAnswer, type TombstonePolicy,
} from './termination.js';

export interface NodeControllerOptions {
  /** This host's address, as the CC knows it. */
  readonly host: string;
  /** The configured hypervisor kind, reported until the hypervisor describes itself. */
  readonly hypervisor: string;
  readonly store: NcStore;
  readonly driver: HypervisorDriver;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly tombstones?: TombstonePolicy;
  readonly retry?: RetryPolicy;
  /** Told whenever an instance, a migration or the node changes (the CC); nobody by default. */
  readonly notifier?: CcNotifier;
  /** How long finished migration plans are kept for DescribeMigrations. */
  readonly planRetention?: PlanRetention;
  readonly migrationTiming?: Partial<MigrationTiming>;
  /** The NC runs mutual TLS: migrations need their per-migration credentials (default false). */
  readonly requireMigrationCredentials?: boolean;
  /** Connects volumes to this host for a migration (default: shared files, volumeConnector.ts). */
  readonly volumeConnector?: VolumeConnector;
  /** How long a guest asked to reboot has before it is reset (rebootWatcher.ts; default DEFAULT_REBOOT_TIMEOUT_MS). */
  readonly rebootTimeoutMs?: number;
}

function adoptedIds(notes: readonly ReconcileNote[]): string[] {
  return notes.flatMap((n) => (n.kind === 'adopted-orphan' ? [n.id] : []));
}

/** The lost store's list of re-adopted instances grows by `ids` (sorted, each once). */
function noteAdopted(d: NcSnapshot, ids: readonly string[]): void {
  if (d.lostStore && ids.length > 0) d.lostStore.adopted = [...new Set([...d.lostStore.adopted, ...ids])].sort();
}

export class NodeController {
  private readonly mailbox = new Mailbox();
  /** The report's versions (the node watch: a CC holding the current one is not sent it again). */
  private readonly reportVersions = new ListingVersions();
  private readonly link: HypervisorLink;
  private readonly tombstones: TombstonePolicy;
  private readonly planRetention: PlanRetention;
  private readonly notifier: CcNotifier;
  /** The last successful list(); kept while the hypervisor is unreachable (last-known states). */
  private readonly domains: DomainCache;
  private readonly migrations: MigrationItemExecutor;
  private readonly volumes: VolumeAttachments;
  private readonly reboots: RebootWatcher;
  /** Connects an instance's volumes to this host: a migration's prepare, and a start of a shut-off domain. */
  private readonly connector: VolumeConnector;

  constructor(private readonly o: NodeControllerOptions) {
    this.tombstones = o.tombstones ?? DEFAULT_TOMBSTONES;
    this.planRetention = o.planRetention ?? DEFAULT_PLAN_RETENTION;
    this.notifier = o.notifier ?? NO_CC_NOTIFIER;
    this.domains = new DomainCache(o.clock);
    this.connector = o.volumeConnector ?? new SharedFileVolumes(o.host);
    this.link = new HypervisorLink({
      driver: o.driver, clock: o.clock, logger: o.logger, host: o.host, retry: o.retry,
      onConnected: () => this.mailbox.run(() => this.readopt()),
    });
    this.connector = o.volumeConnector ?? new SharedFileVolumes(o.host);
    this.migrations = new MigrationItemExecutor({
      host: o.host, clock: o.clock, logger: o.logger, link: this.link, driver: o.driver, domains: this.domains,
      notifier: this.notifier, post: (task) => this.mailbox.run(task), persist: (m) => this.persist(m),
      snapshot: () => this.store, timing: o.migrationTiming, requireCredentials: o.requireMigrationCredentials ?? false,
      volumes: this.connector,
    });
    this.reboots = new RebootWatcher({
      clock: o.clock, logger: o.logger, driver: o.driver, timeoutMs: o.rebootTimeoutMs ?? DEFAULT_REBOOT_TIMEOUT_MS,
      post: (task) => this.mailbox.run(task),
      stillRunning: (id) => {
        const r = this.store.instances[id];
        return r?.phase === 'running' && r.userStopped !== true && r.migrationState === 'none' && observedState(this.domains.current, id) === 'running';
      },
      reset: async (id) => { this.domains.note(await this.link.call('reset', (d) => d.reset(id))); },
      rebooted: async (id, at, how) => {
        await this.persist((d) => { const r = d.instances[id]; if (r) r.lastReboot = { at, how }; });
        this.tell('instance', id);
      },
    });
    this.volumes = new VolumeAttachments({
      host: o.host, logger: o.logger, link: this.link, domains: this.domains, snapshot: () => this.store,
      persist: (m) => this.persist(m), changed: (id) => this.tell('instance', id),
    });
  }

  /** Connects, re-adopts and resumes migrations; when the hypervisor is down, starts anyway and keeps retrying. */
  async start(): Promise<void> {
    this.migrations.start();
    this.reboots.start();
    const up = await this.link.connect();
    if (!up) this.o.logger.warn('starting without a hypervisor; retrying in the background');
  }

  /** Stops reconnecting and waits for the operation in hand (its writes are durable on return). */
  async stop(): Promise<void> {
    this.migrations.stop();
    this.reboots.stop();
    this.link.stop();
    await this.mailbox.idle();
  }

  get healthy(): boolean {
    return this.link.healthy;
  }

  /** The report (ncDescribeResource), with the version that stands for its content (shared/listingVersions.ts). */
  describe(): Promise<NcNode> {
    return this.mailbox.run(async () => {
      const report = await this.describeNow();
      return { ...report, version: this.reportVersions.versionOf(report) };
    });
  }

  run(req: RunRequest): Promise<NcResponse<'ncRunInstance'>> {
    return this.mailbox.run(() => this.runNow(req));
  }

  /** Starts again an instance it holds whose domain is shut off or crashed (startDecision.ts). */
  startInstance(instanceId: string, userStart = false): Promise<NcResponse<'ncStartInstance'>> {
    return this.mailbox.run(() => this.startNow(instanceId, userStart));
  }

  /** Stop (issue 18, stopDecision.ts): the user's word persisted before the domain shuts down; answered once it is off. */
  stopInstance(req: NcRequest<'ncStopInstance'>): Promise<NcResponse<'ncStopInstance'>> {
    return this.mailbox.run(() => this.stopNow(req.instanceId, req.force));
  }

  /** Reboot in place (issue 18, stopDecision.ts): nothing persisted. */
  rebootInstance(instanceId: string): Promise<NcResponse<'ncRebootInstance'>> {
    return this.mailbox.run(() => this.rebootNow(instanceId));
  }

  terminate(instanceId: string, reason?: TerminateReason): Promise<TerminateAnswer> {
    return this.mailbox.run(() => this.terminateNow(instanceId, reason));
  }

  /** Pause or resume (issue 18, pauseDecision.ts): the record's word persisted before the reply. */
  pauseInstance(req: NcRequest<'ncPauseInstance'>): Promise<NcResponse<'ncPauseInstance'>> {
    return this.mailbox.run(() => this.pauseNow(req.instanceId, req.paused));
  }

  /** Volumes (issue 18): persisted in the instance's record before the reply (volumeAttachments.ts). */
  attachVolume(req: AttachRequest): Promise<NcResponse<'ncAttachVolume'>> {
    return this.mailbox.run(() => this.volumes.attach(req));
  }

  detachVolume(req: NcRequest<'ncDetachVolume'>): Promise<NcResponse<'ncDetachVolume'>> {
    return this.mailbox.run(() => this.volumes.detach(req));
  }

  modify(stateName: NodeState): Promise<NcResponse<'ncModifyNode'>> {
    return this.mailbox.run(() => this.modifyNow(stateName));
  }

  /** Quarantine or release (quarantine.ts): persisted before the reply. */
  quarantine(req: QuarantineRequest): Promise<NcResponse<'ncQuarantineNode'>> {
    return this.mailbox.run(() => this.quarantineNow(req));
  }

  /** Every live-migration step, source or destination (migrationItemExecutor.ts). */
  migrate(req: NcMigrateRequest): Promise<MigrateAnswer> {
    return this.mailbox.run(() => this.migrations.handle(req));
  }

  // --- inside the mailbox only ---

  private async describeNow(): Promise<NcNode> {
    if (this.link.healthy) {
      try {
        const domains = await this.link.call('list', (d) => d.list());
        this.domains.replace(domains);
        // Level-based: after a lost store, a domain that turns up later (a migration that ended here) is adopted too.
        if (this.store.lostStore !== undefined) await this.adoptOrphans(domains);
        // Level-based: arrivals, half-done cleanups and lost migration calls are picked up here too.
        await this.migrations.reconcile('poll');
      } catch (e) {
        // Unreachable or refusing: answer with last-known states rather than fail the poll.
        this.o.logger.warn({ err: e }, 'describe could not list domains; answering with last-known states');
      }
    }
    const now = this.o.clock.now();
    const expired = Object.values(this.store.instances).some((r) => r.phase === 'terminated' && now - r.since >= this.tombstones.ttlMs)
      || Object.values(this.store.plans).some((p) => p.finishedAt !== undefined && now - p.finishedAt >= this.planRetention.ttlMs);
    if (expired) await this.persist(() => undefined);
    return this.view();
  }

  private async runNow(req: RunRequest): Promise<NcResponse<'ncRunInstance'>> {
    const now = this.o.clock.now();
    const decision = decideRun({
      host: this.o.host, snapshot: this.store, request: req, capacity: this.link.capacity,
      healthy: this.link.healthy, observation: this.domains.current, now,
    });
    if (decision.kind === 'refuse') {
      throw decision.message !== undefined ? NcErrors.withMessage(decision.code, decision.message, decision.fields) : NcErrors.make(decision.code, decision.fields);
    }
    const id = req.instanceId;
    if (decision.kind === 'existing') return { instance: instanceView(decision.record, observedState(this.domains.current, id)) };

    const { record } = decision;
    if (decision.fresh) await this.persist((d) => { d.instances[id] = record; });
    let domain: DomainInfo;
    try {
      const { cores, memoryMiB, diskGiB } = record.vmType;
      const spec = { id, resources: { cores, memoryMiB, diskGiB }, imageId: record.imageId, ...volumeSpecsOf(record) };
      // A cold move (a user-stopped instance re-homed by a drain) is only defined here, not started.
      domain = record.userStopped === true ? await this.link.call('define', (d) => d.define(spec)) : await this.link.call('create', (d) => d.create(spec));
    } catch (e) {
      // A coded refusal means nothing was created: the request leaves no trace. Otherwise (no
      // answer, or a bug) the create may have happened: keep the pending record for a retry or
      // the re-adoption after reconnect to settle (domain present → running, absent → dropped).
      if (isFerryError(e) && e.code !== 'HypervisorUnavailable') await this.persist((d) => { delete d.instances[id]; });
      throw e;
    }
    this.domains.note(domain);
    const running = await this.persist((d) => {
      const rec = this.mustHave(d, id);
      rec.phase = 'running';
      rec.since = this.o.clock.now();
      // The domain holds them in its definition now.
      for (const v of rec.volumes ?? []) if (v.status === 'attaching' && (domain.volumes ?? []).some((x) => x.volumeId === v.volumeId)) v.status = 'attached';
      return { ...rec };
    });
    this.o.logger.info({ instanceId: id, vmType: running.vmType.name }, running.userStopped === true ? 'stopped instance moved here (defined, not started)' : 'instance running');
    this.tell('instance', id);
    return { instance: instanceView(running, domain.state) };
  }

  private async startNow(id: string, userStart: boolean): Promise<NcResponse<'ncStartInstance'>> {
    const decision = decideStart({
      host: this.o.host, snapshot: this.store, instanceId: id, capacity: this.link.capacity,
      healthy: this.link.healthy, observation: this.domains.current, userStart,
    });
    if (decision.kind === 'refuse') {
      throw decision.message !== undefined ? NcErrors.withMessage(decision.code, decision.message, decision.fields) : NcErrors.make(decision.code, decision.fields);
    }
    const { record } = decision;
    if (decision.kind === 'running') return { instance: instanceView(record, observedState(this.domains.current, id)) };
    // The record stays `running` (its phase never changed: only the domain stopped), so there is no
    // intent to persist first: a crash after the start leaves a running domain its record already
    // describes, before it a shut-off one that a repeat starts.
    // A user's start (issue 18) is persisted first: a crash after it leaves a shut-off domain of a
    // record that no longer says stopped, which a repeat (or host HA) starts, never a hidden stop.
    // Its volumes are reachable here before the guest runs (issue 18): a host the storage fenced from
    // them (host HA, before a restart elsewhere that did not happen) gets them back only this way. A
    // volume that cannot be reached refuses the start before anything changed (sim seed 135).
    await this.connector.connect(id, (record.volumes ?? []).map(({ volumeId, device, path }) => ({ volumeId, device, path })));
    if (decision.clearStopped) await this.persist((d) => setUserStopped(this.mustHave(d, id), false));
    const { cores, memoryMiB, diskGiB } = record.vmType;
    let domain = await this.link.call('start', (d) => d.create({ id, resources: { cores, memoryMiB, diskGiB }, imageId: record.imageId, ...volumeSpecsOf(record) }));
    // An administrator's pause outlives a power cycle: started again, the guest is frozen at once.
    if (record.paused === true) domain = await this.link.call('pause', (d) => d.pause(id));
    this.domains.note(domain);
    this.o.logger.warn({ instanceId: id, hypervisorState: domain.state, userStart }, 'instance powered on again from its own disk');
    this.tell('instance', id);
    return { instance: instanceView(this.mustHave(this.store, id), domain.state) };
  }

  private async stopNow(id: string, force: boolean): Promise<NcResponse<'ncStopInstance'>> {
    const decision = decideStop({ host: this.o.host, snapshot: this.store, instanceId: id, healthy: this.link.healthy, observation: this.domains.current });
    if (decision.kind === 'refuse') {
      throw decision.message !== undefined ? NcErrors.withMessage(decision.code, decision.message, decision.fields) : NcErrors.make(decision.code, decision.fields);
    }
    const { previousState } = decision;
    if (decision.kind === 'answer') return { instance: instanceView(decision.record, observedState(this.domains.current, id)), previousState };
    if (decision.persist) await this.persist((d) => setUserStopped(this.mustHave(d, id), true));
    if (decision.act) {
      try {
        this.domains.note(await this.link.call('shutdown', (d) => d.shutdown(id, { force })));
      } catch (e) {
        // A coded refusal changed nothing there: neither does the request here. No answer: the
        // record keeps the user's word, and the next start or reconnect shuts it down (settleStops).
        if (decision.persist && isFerryError(e) && e.code !== 'HypervisorUnavailable') await this.persist((d) => setUserStopped(this.mustHave(d, id), false));
        throw e;
      }
    }
    const rec = this.mustHave(this.store, id);
    this.o.logger.info({ instanceId: id, force, previousState }, 'instance stopped by its user');
    this.tell('instance', id);
    return { instance: instanceView(rec, observedState(this.domains.current, id)), previousState };
  }

  private async rebootNow(id: string): Promise<NcResponse<'ncRebootInstance'>> {
    const decision = decideReboot({ host: this.o.host, snapshot: this.store, instanceId: id, healthy: this.link.healthy, observation: this.domains.current });
    if (decision.kind === 'refuse') {
      throw decision.message !== undefined ? NcErrors.withMessage(decision.code, decision.message, decision.fields) : NcErrors.make(decision.code, decision.fields);
    }
    // Asked, not done: a guest that ignores the request is reset once the bound passes (rebootFallback.ts).
    // Watched before it is asked: the hypervisor may report the guest's reboot before its answer arrives.
    this.reboots.watch(id);
    let domain: DomainInfo;
    try {
      domain = await this.link.call('reboot', (d) => d.reboot(id));
    } catch (e) {
      this.reboots.cancel(id);
      throw e;
    }
    this.domains.note(domain);
    this.o.logger.info({ instanceId: id }, 'instance asked to reboot by its user (ACPI)');
    return { instance: instanceView(decision.record, domain.state) };
  }

  private async terminateNow(instanceId: string, reason?: TerminateReason): Promise<TerminateAnswer> {
    const decision = decideTerminate(this.store, instanceId, this.domains.current, reason);
    if (decision.kind === 'notFound') {
      // Fence the id first: a run of it still on its way must not start a copy after this answer.
      await this.persist((d) => { d.fenced = { ...d.fenced, [instanceId]: this.o.clock.now() }; });
      throw NcErrors.make('InstanceNotFound', { host: this.o.host, instanceId });
    }
    if (decision.kind === 'migrating') {
      throw NcErrors.make('InstanceMigrating', { host: this.o.host, instanceId, migrationState: decision.migrationState });
    }
    if (decision.kind === 'notStopped') {
      throw NcErrors.make('InstanceStateConflict', { host: this.o.host, instanceId, action: 'forgotten by a move', detail: `it is ${decision.state}, not stopped` });
    }
    if (decision.kind === 'answer') {
      const rec = this.store.instances[instanceId];
      if (rec && reason === 'user' && rec.endedBy !== 'user') {
        await this.persist((d) => { noteEndedBy(this.mustHave(d, instanceId), reason); });
        this.tell('instance', instanceId);
      }
      return decision.answer;
    }
    const { previousState } = decision;
    await this.persist((d) => {
      const rec = this.mustHave(d, instanceId);
      markShuttingDown(rec, previousState, this.o.clock.now());
      noteEndedBy(rec, reason);
    });
    // If this fails the record stays shutting-down: a repeat, or re-adoption after reconnect, finishes it.
    await this.link.call('destroy', (d) => d.destroy(instanceId));
    this.domains.forget(instanceId);
    await this.releaseVolumes(instanceId);
    await this.persist((d) => markTerminated(this.mustHave(d, instanceId), this.o.clock.now()));
    this.o.logger.info({ instanceId, previousState }, 'instance terminated');
    this.tell('instance', instanceId);
    return { instanceId, previousState, currentState: 'terminated' };
  }

  /**
   * The destroyed domain's volumes: this host's access goes (VolumeConnector.disconnect; nothing for
   * shared files), and markTerminated drops them from the record. A failure leaves the record
   * shutting-down: a repeat, or the next re-adoption, finishes it.
   */
  private async releaseVolumes(instanceId: string): Promise<void> {
    const held = (this.store.instances[instanceId]?.volumes ?? []).map(({ volumeId, device, path }) => ({ volumeId, device, path }));
    if (held.length === 0) return;
    await this.connector.disconnect(instanceId, held);
    this.o.logger.info({ instanceId, volumes: held.map((v) => v.volumeId) }, 'volumes of a destroyed domain disconnected from this host');
  }

  private async pauseNow(id: string, paused: boolean): Promise<NcResponse<'ncPauseInstance'>> {
    const decision = decidePause({
      host: this.o.host, snapshot: this.store, instanceId: id, paused, healthy: this.link.healthy, observation: this.domains.current,
    });
    if (decision.kind === 'refuse') {
      throw decision.message !== undefined ? NcErrors.withMessage(decision.code, decision.message, decision.fields) : NcErrors.make(decision.code, decision.fields);
    }
    const previouslyPaused = decision.record.paused === true;
    if (decision.kind === 'answer') return { instance: instanceView(decision.record, observedState(this.domains.current, id)), previouslyPaused };
    if (decision.persist) await this.persist((d) => setPaused(this.mustHave(d, id), paused));
    if (decision.act) {
      try {
        const domain = await this.link.call(paused ? 'pause' : 'resume', (d) => (paused ? d.pause(id) : d.resume(id)));
        this.domains.note(domain);
      } catch (e) {
        // A coded refusal changed nothing there: neither does the request here. No answer: the
        // record keeps the new word, and the next start or reconnect settles the domain (settlePauses).
        if (decision.persist && isFerryError(e) && e.code !== 'HypervisorUnavailable') await this.persist((d) => setPaused(this.mustHave(d, id), previouslyPaused));
        throw e;
      }
    }
    const rec = this.mustHave(this.store, id);
    this.o.logger.warn({ instanceId: id, paused }, paused ? 'instance paused by an administrator' : 'instance resumed by an administrator');
    this.tell('instance', id);
    return { instance: instanceView(rec, observedState(this.domains.current, id)), previouslyPaused };
  }

  private async modifyNow(stateName: NodeState): Promise<NcResponse<'ncModifyNode'>> {
    const previousState = this.store.nodeState;
    const forbidden = quarantineForbids(this.o.host, this.store, stateName);
    if (forbidden) throw NcErrors.make(forbidden.code, forbidden.fields);
    // Only an administrator's enable ends the time out of service that a lost store began.
    const endsLostStore = stateName === 'enabled' && this.store.lostStore !== undefined;
    if (previousState !== stateName || endsLostStore) {
      await this.persist((d) => {
        d.nodeState = stateName;
        if (endsLostStore) delete d.lostStore;
      });
      this.o.logger.info({ from: previousState, to: stateName }, 'node state');
      if (endsLostStore) this.o.logger.warn('enabled by an administrator after its store was lost: back in service');
      this.tell('node');
    }
    return { previousState, node: await this.describeNow() };
  }

  private async quarantineNow(req: QuarantineRequest): Promise<NcResponse<'ncQuarantineNode'>> {
    const previousState = this.store.nodeState;
    const previousQuarantine = this.store.quarantine;
    const decision = decideQuarantine(this.o.host, this.store, req, this.o.clock.now());
    if (decision.kind === 'refuse') throw NcErrors.make(decision.code, decision.fields);
    await this.persist((d) => {
      d.nodeState = decision.nodeState;
      if (decision.quarantine) d.quarantine = { ...decision.quarantine };
      else delete d.quarantine;
    });
    if (decision.quarantine) this.o.logger.warn({ reason: decision.quarantine.reason, from: previousState }, 'quarantined by an administrator: disabled, takes no instance, moves none of its own unless named');
    else this.o.logger.warn({ since: previousQuarantine?.since }, 'quarantine lifted by an administrator: stays disabled until enabled');
    this.tell('node');
    return { previousState, ...(previousQuarantine ? { previousQuarantine: { ...previousQuarantine } } : {}), node: await this.describeNow() };
  }

  /**
   * Re-adoption (start-up and every reconnect): records and domains brought into line, then
   * migrations resumed or settled from what is persisted and what the hypervisor holds now.
   */
  private async readopt(): Promise<void> {
    const domains = await this.link.call('list', (d) => d.list());
    const now = this.o.clock.now();
    this.domains.replace(domains);
    if (this.store.firstStartUnchecked === true) await this.judgeFirstStart(domains, now);
    const lost = this.store.lostStore;
    const result = reconcile(this.store.instances, domains, now, { incomingIds: new Set(Object.keys(this.store.incoming)), adoptOrphans: lost !== undefined });
    for (const note of result.notes) this.logNote(note);
    const adopted = adoptedIds(result.notes);
    if (result.changed) {
      await this.persist((d) => {
        d.instances = structuredClone(result.instances);
        noteAdopted(d, adopted);
      });
    }
    if (lost !== undefined) {
      this.o.logger.warn({ lostStore: this.store.lostStore, adopted }, 'out of service since its store (nc.json) was lost: stays disabled until an administrator enables it');
      if (adopted.length > 0) this.tell('node');
    }
    for (const effect of result.effects) {
      try {
        await this.link.call('destroy', (d) => d.destroy(effect.id));
      } catch (e) {
        // Lost the hypervisor: stop here, the next reconnect starts over. A refusal: try next time.
        if (!this.link.healthy) throw e;
        this.o.logger.error({ err: e, instanceId: effect.id }, 're-adoption could not destroy a domain');
        continue;
      }
      this.domains.forget(effect.id);
      await this.releaseVolumes(effect.id);
      await this.persist((d) => {
        const rec = d.instances[effect.id];
        if (rec) markTerminated(rec, this.o.clock.now());
      });
      this.o.logger.info({ instanceId: effect.id }, 're-adoption finished a termination');
    }
    await this.volumes.settle(domains);
    await this.settlePauses(domains);
    await this.settleStops(domains);
    await this.migrations.reconcile('start');
  }

  /** Record and domain agree on an administrator's pause, freezing winning (pauseDecision.ts settlePauses). */
  private async settlePauses(domains: readonly DomainInfo[]): Promise<void> {
    const s = settlePauses(this.store.instances, domains);
    if (s.markPaused.length > 0) {
      await this.persist((d) => { for (const id of s.markPaused) { const rec = d.instances[id]; if (rec) setPaused(rec, true); } });
      this.o.logger.warn({ instances: s.markPaused }, 'suspended domains recorded as paused (a resume never finished, or the store was lost)');
    }
    for (const id of s.suspend) {
      try {
        this.domains.note(await this.link.call('pause', (d) => d.pause(id)));
        this.o.logger.warn({ instanceId: id }, 'a paused instance\'s domain was running: suspended it again');
      } catch (e) {
        if (!this.link.healthy) throw e;
        this.o.logger.error({ err: e, instanceId: id }, 'could not suspend the domain of a paused instance');
      }
    }
    if (s.markPaused.length + s.suspend.length > 0) this.tell('node');
  }

  /** A user-stopped instance whose domain runs (a crash before its shutdown) is powered off again (stopDecision.ts). */
  private async settleStops(domains: readonly DomainInfo[]): Promise<void> {
    const ids = settleStops(this.store.instances, domains);
    for (const id of ids) {
      try {
        this.domains.note(await this.link.call('shutdown', (d) => d.shutdown(id, { force: true })));
        this.o.logger.warn({ instanceId: id }, 'a stopped instance\'s domain was running: powered it off again');
      } catch (e) {
        if (!this.link.healthy) throw e;
        this.o.logger.error({ err: e, instanceId: id }, 'could not power off the domain of a stopped instance');
      }
    }
    if (ids.length > 0) this.tell('node');
  }

    /** After a lost store: records for the domains that have none (reconcile.ts adoptOrphans), nothing else. */
  private async adoptOrphans(domains: readonly DomainInfo[]): Promise<void> {
    const result = reconcile(this.store.instances, domains, this.o.clock.now(), { incomingIds: new Set(Object.keys(this.store.incoming)), adoptOrphans: true });
    const adopted = adoptedIds(result.notes);
    if (adopted.length === 0) return;
    await this.persist((d) => {
      for (const id of adopted) {
        const rec = result.instances[id];
        if (rec) d.instances[id] = structuredClone(rec);
      }
      noteAdopted(d, adopted);
    });
    for (const note of result.notes) if (note.kind === 'adopted-orphan') this.logNote(note);
    this.tell('node');
  }

  /**
   * The first look at the hypervisor of a store created without an identity file: domains there mean
   * the whole state directory was lost (storeOrigin.ts), so the node leaves service before it takes
   * anything new; none confirm a first start. Either way the question is settled for good.
   */
  private async judgeFirstStart(domains: readonly DomainInfo[], now: number): Promise<void> {
    const lost = firstLookVerdict(domains, now);
    await this.persist((d) => {
      delete d.firstStartUnchecked;
      if (lost) {
        d.nodeState = 'disabled';
        d.lostStore = lost;
      }
    });
    if (lost) {
      this.o.logger.warn({ evidence: lost.evidence }, 'nc.json was lost (this is not a first start): disabled until an administrator enables it; re-adopting the domains');
      this.tell('node');
    } else {
      this.o.logger.info('first start: the hypervisor holds no domain');
    }
  }

  // --- helpers ---

  private get store(): NcSnapshot {
    return this.o.store.read();
  }

  private view(): NcNode {
    return nodeView({
      host: this.o.host, snapshot: this.store, healthy: this.link.healthy,
      hypervisor: this.link.kind ?? this.o.hypervisor, capacity: this.link.capacity, observation: this.domains.current,
      plans: this.migrations.planViews(), incoming: this.migrations.incomingViews(),
    });
  }

  /** Every write also drops expired tombstones and finished plans; store failures leave as StateWriteFailed. */
  private async persist<R>(mutate: (draft: NcSnapshot) => R): Promise<R> {
    try {
      return await this.o.store.update((d) => {
        const r = mutate(d);
        const now = this.o.clock.now();
        const dropped = pruneTombstones(d.instances, now, this.tombstones);
        if (dropped.length > 0) this.o.logger.debug({ dropped }, 'tombstones expired');
        for (const [id, at] of Object.entries(d.fenced ?? {})) if (now - at >= this.tombstones.ttlMs) delete d.fenced?.[id];
        const plans = pruneFinishedPlans(d.plans, now, this.planRetention);
        if (plans.length > 0) this.o.logger.debug({ plans }, 'finished migration plans expired');
        return r;
      });
    } catch (e) {
      if (isFerryError(e) && StoreErrors.has(e.code)) throw NcErrors.make('StateWriteFailed', { host: this.o.host, detail: e.message });
      throw e;
    }
  }

  private mustHave(d: NcSnapshot, id: string): InstanceRecord {
    const rec = d.instances[id];
    // A programming-invariant assert (uncoded on purpose): unreachable while only the mailbox writes the store.
    if (!rec) throw new Error(`instance record ${id} vanished inside the mailbox`);
    return rec;
  }

  private tell(kind: CcNodeEvent['kind'], instanceId?: string): void {
    this.notifier.notify(instanceId ? { host: this.o.host, kind, instanceId } : { host: this.o.host, kind });
  }

  private logNote(note: ReconcileNote): void {
    const log = this.o.logger;
    switch (note.kind) {
      case 'adopted': log.info({ instanceId: note.id }, 're-adopted a pending instance whose domain exists'); break;
      case 'dropped-unacknowledged': log.info({ instanceId: note.id }, 'dropped a pending instance that has no domain (never acknowledged)'); break;
      case 'termination-completed': log.info({ instanceId: note.id }, 'completed a half-done termination'); break;
      case 'terminated-domain-present': log.warn({ instanceId: note.id }, 'a terminated instance has a domain again; destroying it'); break;
      case 'orphan-domain': log.warn({ domain: note.id, state: note.state }, 'domain without an instance record (store lost?); keeping it and counting its resources'); break;
      case 'adopted-orphan': log.warn({ instanceId: note.id, state: note.state }, 're-adopted a domain after the store was lost: its record is recreated (reservation, owner and VM type name unknown here)'); break;
    }
  }
}

/** The volumes a record holds (attached, or coming with a run), as a domain's definition takes them. */
function volumeSpecsOf(rec: InstanceRecord): { volumes?: VolumeAttachmentSpec[] } {
  const held = (rec.volumes ?? []).filter((v) => v.status === 'attached' || v.status === 'attaching');
  return held.length > 0 ? { volumes: held.map((v) => ({ volumeId: v.volumeId, device: v.device, path: v.path })) } : {};
}
