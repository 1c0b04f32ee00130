/**
 * Source side of libvirt live migrations: one virDomainMigrateToURI3 per migration, on a connection
 * of its own (the call blocks a koffi worker thread until the guest runs on the destination), with
 * its job statistics polled into migration-progress events, and abort through virDomainAbortJob.
 */
import type { Clock } from '../../../shared/clock.js';
import { sleepOn } from '../clockSleep.js';
import type { HypervisorEvent, MigrationStats, MigrationTarget } from '../driver.js';
import { isFerryError } from '../../../shared/errors/registry.js';
import { HypervisorErrors } from '../errors.js';
import { VIR_ERR, type FailureContext } from './errorMap.js';
import { VIR } from './ffi.js';
import { migratedAway } from './domainXml.js';
import { completedStatsOf, progressOf } from './jobStats.js';
import { LibvirtCallError, type JobStatsRecord, type LibvirtSession, type OpenLibvirt } from './libvirtApi.js';
import { migrationFlags, migrationParams, type StreamRoute } from './migrationParams.js';
import { parseVolumes } from './volumeDiskXml.js';

export interface OutgoingDeps {
  readonly uri: string;
  /** This host's address, for error messages. */
  readonly host: string;
  readonly clock: Clock;
  readonly progressIntervalMs: number;
  readonly bandwidthMiBs?: number;
  /** Guests' disks live on the cluster's shared disk directory (migrationFlags). */
  readonly sharedDisks?: boolean;
  /** The driver's shared connection (lookups, job statistics, abort). */
  readonly conn: () => Promise<LibvirtSession>;
  /** Opens the connection a migration has to itself. */
  readonly open: OpenLibvirt;
  readonly emit: (e: HypervisorEvent) => void;
  readonly fail: (e: unknown, c: Omit<FailureContext, 'uri' | 'host'>) => never;
  /** How this migration's stream travels (libvirtDriver.ts: plain, libvirt's TLS, or a tunnel); released when it ends. */
  readonly route: (id: string, target: MigrationTarget) => Promise<MigrationRouteHold>;
}

export interface MigrationRouteHold {
  /** undefined: straight to the destination's address. */
  readonly stream?: StreamRoute;
  /** libvirt's own TLS (VIR_MIGRATE_TLS). */
  readonly tls: boolean;
  release(): Promise<void>;
}

interface Outgoing {
  readonly migrationId: string;
  readonly id: string;
  done?: Promise<MigrationStats>;
  readonly stop: AbortController;
  settled: boolean;
  abortRequested: boolean;
}

/** How long abortMigration keeps trying while the job has not started in libvirtd yet. */
const ABORT_RETRY_MS = 100;
const ABORT_ATTEMPTS = 50;
/** How often a repeated migrateOut looks whether an earlier process's job is over. */
const JOIN_POLL_MS = 200;
const COMPLETED_STATS_ATTEMPTS = 10;
const COMPLETED_STATS_RETRY_MS = 100;

export class OutgoingMigrations {
  private readonly byId = new Map<string, Outgoing>();

  constructor(private readonly d: OutgoingDeps) {}

  /** Starts the migration, or joins the one already running for the same migrationId. */
  start(id: string, target: MigrationTarget): Promise<MigrationStats> {
    const running = this.byId.get(id);
    if (running && !running.settled) {
      if (running.migrationId === target.migrationId && running.done) return running.done;
      return Promise.reject(HypervisorErrors.make('DomainStateConflict', {
        id, host: this.d.host, state: `migrating (${running.migrationId})`, operation: `migrate for ${target.migrationId}`,
      }));
    }
    const entry: Outgoing = {
      migrationId: target.migrationId, id, stop: new AbortController(), settled: false, abortRequested: false,
    };
    const done = this.run(entry, target).finally(() => {
      entry.settled = true;
      entry.stop.abort();
    });
    entry.done = done;
    this.byId.set(id, entry);
    return done;
  }

  /** Whether a migration of `id` started by this driver is still running. */
  isActive(id: string): boolean {
    const e = this.byId.get(id);
    return e !== undefined && !e.settled;
  }

  /** Aborts the running migration of `id` if it is `migrationId`; the guest keeps running here. */
  async abort(id: string, migrationId: string): Promise<void> {
    const entry = this.byId.get(id);
    if (!entry || entry.settled || entry.migrationId !== migrationId) return;
    entry.abortRequested = true;
    const conn = await this.d.conn();
    // The job may not have started in libvirtd yet (TLS files, lookup): retry until it has or is over.
    for (let attempt = 0; attempt < ABORT_ATTEMPTS && !entry.settled; attempt++) {
      try {
        await conn.withDomain(id, (dom) => conn.abortJob(dom));
        return;
      } catch (e) {
        if (!(e instanceof LibvirtCallError && e.code === VIR_ERR.OPERATION_INVALID)) {
          this.d.fail(e, { operation: 'abort migration', id, migrationId });
        }
      }
      await sleepOn(this.d.clock, ABORT_RETRY_MS);
    }
  }

  private async run(entry: Outgoing, target: MigrationTarget): Promise<MigrationStats> {
    const { id, migrationId } = entry;
    const ctx = { operation: 'migrate', id, migrationId };
    let own: LibvirtSession | undefined;
    let route: MigrationRouteHold | undefined;
    const started = this.d.clock.now();
    try {
      const earlier = await this.joinEarlier(entry);
      if (earlier) return earlier;
      if (entry.abortRequested) throw HypervisorErrors.make('MigrationAborted', { migrationId, id });
      // The stream's route (a tunnel's two TLS handshakes) and the migration's own connection at once: neither needs the other.
      const [routed, opened] = await Promise.allSettled([this.d.route(id, target), this.d.open(this.d.uri)]);
      if (routed.status === 'fulfilled') route = routed.value;
      if (opened.status === 'fulfilled') own = opened.value;
      if (routed.status === 'rejected') throw routed.reason;
      if (opened.status === 'rejected') this.d.fail(opened.reason, { operation: 'connect for migration' });
      const r = route as MigrationRouteHold;
      const c = own as LibvirtSession;
      const found = await c.withDomain(id, async (dom): Promise<'migrating' | 'left'> => {
        const s = await c.stateAndReason(dom);
        // An earlier process's job ended between joinEarlier's look and this one: the guest left.
        if (migratedAway(s)) return 'left';
        // A guest its administrator suspended migrates too: libvirt adds VIR_MIGRATE_PAUSED, so it arrives paused.
        const suspended = s.state === VIR.DOMAIN_STATE.PAUSED && s.reason === VIR.PAUSED_REASON.USER;
        if (s.state !== VIR.DOMAIN_STATE.RUNNING && !suspended) {
          throw HypervisorErrors.make('DomainStateConflict', { id, host: this.d.host, state: 'not running', operation: 'migrate' });
        }
        if (target.maxDowntimeMs !== undefined) await c.setMaxDowntime(dom, target.maxDowntimeMs).catch(() => undefined);
        this.pollProgress(entry).catch(() => undefined);
        if (entry.abortRequested) throw HypervisorErrors.make('MigrationAborted', { migrationId, id });
        // Volumes (issue 18) are on the storage every host mounts, as declared disks are (migrationFlags).
        const shared = this.d.sharedDisks === true || parseVolumes(await c.xmlDesc(dom)).length > 0;
        await c.migrateToUri3(dom, target.destinationUri, migrationParams(target.destinationUri, this.d.bandwidthMiBs, r.stream), migrationFlags(r.tls, shared));
        return 'migrating';
      });
      if (!found) throw HypervisorErrors.make('DomainNotFound', { id, host: this.d.host });
      if (found === 'left') return await this.joinLate(entry, undefined);
    } catch (e) {
      if (isFerryError(e)) throw e;
      if (entry.abortRequested && e instanceof LibvirtCallError) throw HypervisorErrors.make('MigrationAborted', { migrationId, id });
      // "Domain is not running": an earlier process's job may have just carried the guest away.
      if (e instanceof LibvirtCallError && e.code === VIR_ERR.OPERATION_INVALID) return await this.joinLate(entry, e);
      return this.d.fail(e, ctx);
    } finally {
      await own?.close().catch(() => undefined);
      await route?.release().catch(() => undefined);
    }
    const stats = completedStatsOf(await this.finish(id), { migrationId, id }, this.d.clock.now() - started);
    this.d.emit({ kind: 'stopped', id, reason: 'migrated' });
    return stats;
  }

  /**
   * A migration an earlier NC process started goes on inside libvirtd when that process dies
   * (peer-to-peer: libvirtd drives it). A repeat of migrateOut joins it: it waits for the job to
   * end, and if the domain left, returns that job's statistics instead of migrating again.
   */
  private async joinEarlier(entry: Outgoing): Promise<MigrationStats | undefined> {
    const c = await this.d.conn();
    for (;;) {
      const seen = await c.withDomain(entry.id, async (dom) => {
        const state = await c.stateAndReason(dom);
        // libvirt refuses job statistics of an inactive domain ("domain is not running").
        const active = state.state !== VIR.DOMAIN_STATE.SHUTOFF && state.state !== VIR.DOMAIN_STATE.CRASHED;
        return { state, jobType: active ? await this.jobTypeOf(c, dom) : VIR.JOB_TYPE.NONE };
      });
      if (!seen) return undefined;
      if (seen.jobType === 'changed') { // it went inactive between the two reads: look again
        await sleepOn(this.d.clock, JOIN_POLL_MS);
        continue;
      }
      if (migratedAway(seen.state)) {
        const stats = completedStatsOf(await this.finish(entry.id), { migrationId: entry.migrationId, id: entry.id }, 0);
        this.d.emit({ kind: 'stopped', id: entry.id, reason: 'migrated' });
        return stats;
      }
      if (seen.jobType !== VIR.JOB_TYPE.BOUNDED && seen.jobType !== VIR.JOB_TYPE.UNBOUNDED) return undefined;
      await sleepOn(this.d.clock, JOIN_POLL_MS);
    }
  }

  /** The domain's job type, or 'changed' when it stopped running between the state read and this one. */
  private async jobTypeOf(c: LibvirtSession, dom: Parameters<LibvirtSession['jobStats']>[0]): Promise<number | 'changed'> {
    try {
      return (await c.jobStats(dom, 0)).type;
    } catch (e) {
      if (e instanceof LibvirtCallError && e.code === VIR_ERR.OPERATION_INVALID) return 'changed';
      throw e;
    }
  }

  /**
   * This process's own attempt found the guest gone or not running: when an earlier process's job
   * carried it to the destination, that job's statistics are the answer; otherwise the failure stands.
   */
  private async joinLate(entry: Outgoing, cause: LibvirtCallError | undefined): Promise<MigrationStats> {
    const joined = await this.joinEarlier(entry);
    if (joined) return joined;
    if (cause) return this.d.fail(cause, { operation: 'migrate', id: entry.id, migrationId: entry.migrationId });
    throw HypervisorErrors.make('DomainStateConflict', { id: entry.id, host: this.d.host, state: 'not running', operation: 'migrate' });
  }

  /**
   * The source keeps the shut-off domain (no UNDEFINE_SOURCE) so its completed statistics can be
   * read; then it goes. libvirt may report the domain migrated a moment before it has saved the
   * completed job, so an empty record is read again, a bounded number of times.
   */
  private async finish(id: string): Promise<JobStatsRecord | undefined> {
    const c = await this.d.conn();
    return c.withDomain(id, async (dom) => {
      let rec: JobStatsRecord | undefined;
      for (let attempt = 0; attempt < COMPLETED_STATS_ATTEMPTS; attempt++) {
        // KEEP_COMPLETED: reading must not consume them (another reader may come, e.g. a restarted NC).
        rec = await c.jobStats(dom, VIR.JOB_STATS.COMPLETED | VIR.JOB_STATS.KEEP_COMPLETED).catch(() => undefined);
        if (rec && rec.type !== VIR.JOB_TYPE.NONE) break;
        await sleepOn(this.d.clock, COMPLETED_STATS_RETRY_MS);
      }
      await c.undefine(dom).catch(() => undefined);
      return rec;
    }).catch(() => undefined);
  }

  private async pollProgress(entry: Outgoing): Promise<void> {
    const c = await this.d.conn();
    while (!entry.stop.signal.aborted) {
      await sleepOn(this.d.clock, this.d.progressIntervalMs, entry.stop.signal);
      const rec = await c.withDomain(entry.id, (dom) => c.jobStats(dom, 0)).catch(() => undefined);
      const progress = rec && progressOf(rec, { migrationId: entry.migrationId, id: entry.id });
      if (progress && !entry.stop.signal.aborted) this.d.emit({ kind: 'migration-progress', progress });
    }
  }
}
