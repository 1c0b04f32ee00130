/**
 * One simulated hypervisor host: what libvirtd and its QEMUs are on a real machine. Domains live
 * here, not in the NC. Every change goes through one serial queue (check, persist, apply, emit);
 * time comes from the injected Clock and files go through DiskIo, so thousands of hosts can run in
 * one process under a ManualClock with in-memory stores.
 */
import type { Clock } from '../../../shared/clock.js';
import type { Store } from '../../../shared/store/store.js';
import { silentLogger, type Logger } from '../../../shared/log.js';
import type { Resources } from '../../../shared/model/resources.js';
import type {
  DomainInfo, DomainSpec, HostInfo, HypervisorEvent, MigrationCredential, MigrationStats, MigrationTarget, VolumeAttachmentSpec,
} from '../driver.js';
import { HypervisorErrors } from '../errors.js';
import type { FerryError } from '../../../shared/errors/registry.js';
import {
  IDLE, admit, freeResources, isIncoming, isLive, isOutgoing, specDifference, toDomainInfo, volumeConflict, type DomainRecord,
} from './hostLedger.js';
import { ActivityWriter } from './activityWriter.js';
import type { DiskIo } from './diskIo.js';
import { EventHub } from '../eventHub.js';
import { Mailbox } from '../../../shared/mailbox.js';
import type { SimHvSnapshot } from './hostStore.js';
import {
  PLAINTEXT_PEER, type FinalSend, type IncomingAcceptor, type IncomingDone, type IncomingSession, type MigrationDialer, type StreamPeer,
  type SwitchoverOutcome,
} from './migrationChannel.js';
import { IncomingStream, type IncomingHost } from './incomingStream.js';
import type { MigrationTuning } from './migrationModel.js';
import { OutgoingRegistry, type OutgoingEntry } from './outgoingRegistry.js';
import { guardOf, UsedSerials, type MigrationGuard } from '../migrationGuard.js';
import { RecentIds } from './recentIds.js';
import { CountingMap } from './countingMap.js';
import { checkMigrationPeer } from '../../../shared/pki/migrationPeer.js';
import type { MigrationStatus } from './protocol.js';

export interface SimHostConfig {
  /** The host's address (127.x.y.z); names its directory on shared storage. */
  readonly host: string;
  readonly capacity: Resources;
  /** Shared storage root: disk files go to `<storageDir>/<host>/<id>.disk`. */
  readonly storageDir: string;
  readonly migration: MigrationTuning;
  readonly writeIntervalMs: number;
  /** Wall time per unit of model time for migrations. */
  readonly timeScale: number;
  /**
   * Every migration, in and out, must carry its per-migration credential (a daemon not started
   * with --insecure-plaintext). Joining a running migration needs none: it was checked when it began.
   */
  readonly requireMigrationCredentials?: boolean;
  /** Its guests ignore an ACPI reboot request (a guest without an ACPI daemon); reset() still reboots them. */
  readonly guestIgnoresAcpi?: boolean;
  /**
   * How fast each guest dirties its memory (MiB/s) while it migrates, when guests differ (the bench's
   * drain of mixed workloads); undefined for a guest, or no function: `migration.dirtyRateMiBps`.
   */
  readonly dirtyRateOf?: (spec: DomainSpec) => number | undefined;
  /**
   * The host's network link for migrations, Mbit/s, shared by its outgoing streams: a stream that
   * starts while k others run gets min(`migration.bandwidthMbps`, nicMbps / (k + 1)) for its whole job
   * (a simplification: it does not speed up when the others end). Undefined: every stream gets
   * `migration.bandwidthMbps` however many run.
   */
  readonly nicMbps?: number;
}

export interface SimHostDeps {
  readonly clock: Clock;
  readonly store: Store<SimHvSnapshot>;
  readonly disk: DiskIo;
  readonly dialer: MigrationDialer;
  readonly log?: Logger;
}

export class SimHost implements IncomingAcceptor, IncomingHost {
  private readonly records = new CountingMap<string, DomainRecord>();
  private readonly sessions = new Map<string, IncomingStream>();
  private readonly queue = new Mailbox();
  private readonly events: EventHub<HypervisorEvent>;
  private readonly outgoing = new OutgoingRegistry();
  private readonly log: Logger;
  private readonly activity: ActivityWriter;
  /** Credentials of TLS-prepared incoming domains, by domain id (memory only). */
  private readonly guards = new Map<string, MigrationGuard>();
  private readonly usedSerials = new UsedSerials();
  /** Incoming migrations that completed here (memory, bounded): how a broken switch-over is settled. */
  private readonly arrived = new RecentIds(256);
  private closed = false;

  private constructor(private readonly config: SimHostConfig, private readonly deps: SimHostDeps) {
    this.log = deps.log ?? silentLogger();
    this.events = new EventHub((e) => this.log.warn({ err: e }, 'event listener threw'));
    const running = (): string[] => [...this.records.values()].filter((r) => r.state === 'running').map((r) => r.spec.id);
    this.activity = new ActivityWriter(config, deps.clock, deps.disk, this.log, running);
  }

  /**
   * Loads the stored definitions. Finding any means the host was power-cycled: its QEMUs are gone,
   * so every stored domain comes back shutoff (not running, not writing) until started or destroyed.
   */
  static async open(config: SimHostConfig, deps: SimHostDeps): Promise<SimHost> {
    const host = new SimHost(config, deps);
    const stored = Object.values(deps.store.read().domains);
    if (stored.some((d) => isLive(d.state))) {
      await deps.store.update((d) => {
        for (const dom of Object.values(d.domains)) if (isLive(dom.state)) dom.state = 'shutoff';
      });
    }
    for (const d of Object.values(deps.store.read().domains)) {
      host.records.set(d.spec.id, { spec: d.spec, state: d.state, startedAt: d.startedAt, activity: IDLE, ...(d.volumes ? { volumes: d.volumes } : {}) });
      await host.activity.recover(d.spec.id);
    }
    return host;
  }

  get hostName(): string {
    return this.config.host;
  }

  /** Starts the activity writes (disk files and heartbeat) every writeIntervalMs. */
  start(): void {
    if (!this.closed) this.activity.start();
  }

  /** Stops writing, aborts outgoing migrations (their domains resume), drops incoming ones. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.outgoing.running().map((e) => this.abortEntry(e)));
    const down = HypervisorErrors.make('HypervisorUnavailable', { uri: this.config.host, detail: 'host shutting down' });
    for (const s of [...this.sessions.values()]) this.dropIncoming(s.id, down);
    await this.queue.idle();
    await this.activity.stop();
  }

  info(): HostInfo {
    return { host: this.config.host, capacity: { ...this.config.capacity }, hypervisor: 'sim' };
  }

  free(): Resources {
    return freeResources(this.config.capacity, this.records.values());
  }

  /** Grows with every change of a domain: list() is the same until it moves (the simulator reads thousands of hosts per step). */
  get changes(): number {
    return this.records.changes;
  }

  list(): DomainInfo[] {
    return [...this.records.values()].map((r) => toDomainInfo(r, this.pathOf(r.spec.id)));
  }

  get(id: string): DomainInfo | undefined {
    const r = this.records.get(id);
    return r && toDomainInfo(r, this.pathOf(id));
  }

  onEvent(listener: (e: HypervisorEvent) => void): () => void {
    return this.events.on(listener);
  }

  /**
   * Defines and starts; same spec again returns it; a shut-off domain with the same spec is started.
   * The spec's volumes are in the definition before it starts (issue 18), beside those it held.
   */
  create(withVolumes: DomainSpec): Promise<DomainInfo> {
    const { volumes: wanted = [], ...spec } = withVolumes;
    return this.queue.run(async () => {
      this.assertOpen();
      const existing = this.sameDomain(spec);
      if (existing) {
        // Suspended is defined and live too: its administrator resumes it, a create does not.
        if (existing.state === 'running' || existing.state === 'suspended') return this.infoOf(existing);
        if (existing.state === 'paused') throw this.conflict(existing, 'create');
      }
      const others = [...this.records.values()].filter((r) => r.spec.id !== spec.id);
      const admission = admit(this.config.capacity, others, spec);
      if (!admission.ok) throw this.err('InsufficientHostResources', { id: spec.id, need: admission.need, free: admission.free });
      const now = this.deps.clock.now();
      // A shut-off domain started again keeps its volumes: they are part of its definition.
      const volumes = this.withWanted(spec.id, existing?.volumes ?? [], wanted);
      await this.persist((d) => {
        d.domains[spec.id] = { spec, state: 'running', startedAt: now, ...(volumes.length > 0 ? { volumes: [...volumes] } : {}) };
      });
      const record: DomainRecord = { spec, state: 'running', startedAt: now, activity: IDLE, ...(volumes.length > 0 ? { volumes } : {}) };
      this.records.set(spec.id, record);
      await this.activity.write(spec.id, now);
      this.events.emit({ kind: 'started', id: spec.id });
      return this.infoOf(record);
    });
  }

  /** `held` plus the `wanted` volumes it lacks; VolumeConflict when one is another domain's or clashes here. */
  private withWanted(id: string, held: readonly VolumeAttachmentSpec[], wanted: readonly VolumeAttachmentSpec[]): VolumeAttachmentSpec[] {
    const out = held.map((v) => ({ ...v }));
    for (const v of wanted) {
      const clash = volumeConflict(this.records.values(), id, v);
      if (clash) throw this.err('VolumeConflict', { id, detail: clash });
      if (!out.some((x) => x.volumeId === v.volumeId)) out.push({ ...v });
    }
    return out;
  }

  /** The record of `spec`'s domain when there is one; DomainExists when the id holds another spec. */
  private sameDomain(spec: DomainSpec): DomainRecord | undefined {
    const existing = this.records.get(spec.id);
    const diff = existing && specDifference(existing.spec, spec);
    if (diff) throw this.err('DomainExists', { id: spec.id, detail: diff });
    return existing;
  }

  /**
   * Defines a domain shut off, not started (a stopped instance's cold move), with the spec's volumes
   * in its definition; the same spec again answers it as it is.
   */
  define(withVolumes: DomainSpec): Promise<DomainInfo> {
    const { volumes: wanted = [], ...spec } = withVolumes;
    return this.queue.run(async () => {
      this.assertOpen();
      const existing = this.sameDomain(spec);
      if (existing) {
        if (isIncoming(existing)) throw this.conflict(existing, 'define');
        return this.infoOf(existing);
      }
      const volumes = this.withWanted(spec.id, [], wanted);
      await this.persist((d) => {
        d.domains[spec.id] = { spec, state: 'shutoff', startedAt: 0, ...(volumes.length > 0 ? { volumes: volumes.map((v) => ({ ...v })) } : {}) };
      });
      const record: DomainRecord = { spec, state: 'shutoff', startedAt: 0, activity: IDLE, ...(volumes.length > 0 ? { volumes } : {}) };
      this.records.set(spec.id, record);
      this.log.info({ id: spec.id }, 'domain defined (not started)');
      return this.infoOf(record);
    });
  }

  /** Stops and undefines; an outgoing migration is aborted first. Unknown ids are not an error. */
  async destroy(id: string): Promise<void> {
    const before = this.records.get(id);
    if (before?.activity.kind === 'outgoing-precopy') {
      const entry = this.outgoing.get(before.activity.migrationId);
      if (entry) await this.abortEntry(entry);
    }
    return this.queue.run(async () => {
      this.assertOpen();
      const r = this.records.get(id);
      if (!r) return;
      if (isOutgoing(r)) throw this.conflict(r, 'destroy');
      if (isIncoming(r)) {
        this.dropIncoming(id, this.err('MigrationAborted', { id, migrationId: migrationIdOf(r) }));
        return;
      }
      await this.persist((d) => {
        delete d.domains[id];
      });
      await this.forget(id);
      if (isLive(r.state)) this.events.emit({ kind: 'stopped', id, reason: 'destroyed' });
    });
  }

  /**
   * Shuts a domain down and keeps its definition and disk (virDomainShutdown, then virDomainDestroy
   * without undefine when `force` or the guest ignores it). The simulated guest has no OS: it honours
   * the ACPI request at once, so `force` changes only what is logged. Persisted before it answers; a
   * shut-off or crashed domain answers as is. Refused while it migrates or when it is suspended by
   * its administrator (resume it first) or paused by a migration.
   */
  shutdown(id: string, opts: { readonly force: boolean }): Promise<DomainInfo> {
    return this.queue.run(async () => {
      this.assertOpen();
      const r = this.records.get(id);
      if (!r) throw this.err('DomainNotFound', { id });
      if (isIncoming(r) || isOutgoing(r)) throw this.conflict(r, 'shutdown');
      if (r.state === 'shutoff' || r.state === 'crashed') return this.infoOf(r);
      if (r.state !== 'running') throw this.conflict(r, 'shutdown');
      await this.persist((d) => {
        const stored = d.domains[id];
        if (stored) stored.state = 'shutoff';
      });
      const next: DomainRecord = { ...r, state: 'shutoff' };
      this.records.set(id, next);
      this.log.info({ id, force: opts.force }, opts.force ? 'domain powered off (forced)' : 'domain shut down (ACPI)');
      this.events.emit({ kind: 'stopped', id, reason: 'shutdown' });
      return this.infoOf(next);
    });
  }

  /**
   * Asks a running domain's guest to reboot (virDomainReboot, ACPI): same host, same definition and
   * disk; its disk counter goes on (the guest's writes continue after the reboot), and `rebooted` is
   * emitted. A host started with --guest-ignores-acpi has guests that ignore the request: nothing
   * happens (the NC's fallback resets them). Refused unless it runs.
   */
  reboot(id: string): Promise<DomainInfo> {
    return this.restartGuest(id, 'reboot');
  }

  /** Resets a running domain (virDomainReset): the guest restarts at once, unasked; `rebooted` is emitted. */
  reset(id: string): Promise<DomainInfo> {
    return this.restartGuest(id, 'reset');
  }

  private restartGuest(id: string, operation: 'reboot' | 'reset'): Promise<DomainInfo> {
    return this.queue.run(async () => {
      this.assertOpen();
      const r = this.records.get(id);
      if (!r) throw this.err('DomainNotFound', { id });
      if (isIncoming(r) || isOutgoing(r) || r.state !== 'running') throw this.conflict(r, operation);
      if (operation === 'reboot' && this.config.guestIgnoresAcpi === true) {
        this.log.info({ id }, 'ACPI reboot request ignored by the guest');
        return this.infoOf(r);
      }
      // The guest writes its disk again as it boots: shown at once, not only at the next round.
      await this.activity.write(id);
      this.log.info({ id }, operation === 'reset' ? 'domain reset (hard reboot)' : 'domain rebooted');
      this.events.emit({ kind: 'rebooted', id });
      return this.infoOf(r);
    });
  }

  /**
   * Freezes a running domain (virDomainSuspend): it stops its activity writes and dirties no page
   * until resumed. Persisted before it answers; a suspended one answers as is. Refused while it
   * migrates or when it does not run.
   */
  pause(id: string): Promise<DomainInfo> {
    return this.setRunState(id, 'running', 'suspended', 'pause');
  }

  /** Lets a suspended domain run again (virDomainResume); a running one answers as is. */
  resume(id: string): Promise<DomainInfo> {
    return this.setRunState(id, 'suspended', 'running', 'resume');
  }

  private setRunState(id: string, from: 'running' | 'suspended', to: 'running' | 'suspended', operation: string): Promise<DomainInfo> {
    return this.queue.run(async () => {
      this.assertOpen();
      const r = this.records.get(id);
      if (!r) throw this.err('DomainNotFound', { id });
      if (isIncoming(r) || isOutgoing(r)) throw this.conflict(r, operation);
      if (r.state === to) return this.infoOf(r);
      if (r.state !== from) throw this.conflict(r, operation);
      await this.persist((d) => {
        const stored = d.domains[id];
        if (stored) stored.state = to;
      });
      const next: DomainRecord = { ...r, state: to };
      this.records.set(id, next);
      // Resumed: its disk shows it at once, not only at the next round.
      if (to === 'running') await this.activity.write(id);
      this.log.info({ id, state: to }, operation === 'pause' ? 'domain suspended' : 'domain resumed');
      return this.infoOf(next);
    });
  }

  /**
   * Connects a volume to a defined domain that is not migrating (running or shut off: the definition
   * keeps it, as libvirt's CONFIG does). Persisted before it answers; a repeat answers the domain.
   */
  attachVolume(id: string, volume: VolumeAttachmentSpec): Promise<DomainInfo> {
    return this.queue.run(async () => {
      this.assertOpen();
      const r = this.records.get(id);
      if (!r) throw this.err('DomainNotFound', { id });
      if (isIncoming(r) || isOutgoing(r)) throw this.conflict(r, `attach volume ${volume.volumeId}`);
      const clash = volumeConflict(this.records.values(), id, volume);
      if (clash) throw this.err('VolumeConflict', { id, detail: clash });
      if ((r.volumes ?? []).some((v) => v.volumeId === volume.volumeId)) return this.infoOf(r);
      return this.setVolumes(r, [...(r.volumes ?? []), { ...volume }]);
    });
  }

  /** Disconnects a volume from a domain that is not migrating; one it does not hold is not an error. */
  detachVolume(id: string, volumeId: string): Promise<DomainInfo> {
    return this.queue.run(async () => {
      this.assertOpen();
      const r = this.records.get(id);
      if (!r) throw this.err('DomainNotFound', { id });
      if (!(r.volumes ?? []).some((v) => v.volumeId === volumeId)) return this.infoOf(r);
      if (isIncoming(r) || isOutgoing(r)) throw this.conflict(r, `detach volume ${volumeId}`);
      return this.setVolumes(r, (r.volumes ?? []).filter((v) => v.volumeId !== volumeId));
    });
  }

  /** Persists a domain's new volume list, then holds it in memory (inside the queue). */
  private async setVolumes(r: DomainRecord, volumes: readonly VolumeAttachmentSpec[]): Promise<DomainInfo> {
    const id = r.spec.id;
    await this.persist((d) => {
      const stored = d.domains[id];
      if (stored) stored.volumes = volumes.map((v) => ({ ...v }));
    });
    const next: DomainRecord = { ...r, volumes };
    this.records.set(id, next);
    return this.infoOf(next);
  }

  /**
   * Destination: hold resources for `spec`, paused, until the stream for `migrationId` arrives. With a
   * credential the stream must come over TLS from that migration's source; a repeat with a new
   * credential replaces it, a repeat without one keeps it (never a downgrade to plaintext).
   */
  prepareIncoming(spec: DomainSpec, migrationId: string, credential?: MigrationCredential): Promise<DomainInfo> {
    return this.queue.run(() => {
      this.assertOpen();
      if (!credential) this.assertCredentialOptional(spec.id, migrationId);
      const guard = credential ? guardOf(credential, 'destination', spec.id, migrationId) : undefined;
      const r = this.records.get(spec.id);
      if (r && !isIncoming(r)) throw this.conflict(r, 'prepare an incoming migration');
      if (r) {
        const diff = migrationIdOf(r) !== migrationId
          ? `already prepared for migration ${migrationIdOf(r)}`
          : specDifference(r.spec, spec);
        if (diff) throw this.err('IncomingMismatch', { id: spec.id, migrationId, detail: diff });
        if (guard) this.guards.set(spec.id, guard);
        return this.infoOf(r);
      }
      const admission = admit(this.config.capacity, this.records.values(), spec);
      if (!admission.ok) throw this.err('InsufficientHostResources', { id: spec.id, need: admission.need, free: admission.free });
      // Its volumes come with it, attached (same files on shared storage): none may be held here already.
      const { volumes = [], ...bare } = spec;
      for (const v of volumes) {
        const clash = volumeConflict(this.records.values(), spec.id, v);
        if (clash) throw this.err('VolumeConflict', { id: spec.id, detail: clash });
      }
      const record: DomainRecord = {
        spec: bare, state: 'paused', startedAt: 0, activity: { kind: 'incoming-prepared', migrationId },
        ...(volumes.length > 0 ? { volumes: volumes.map((v) => ({ ...v })) } : {}),
      };
      this.records.set(spec.id, record);
      if (guard) this.guards.set(spec.id, guard);
      return this.infoOf(record);
    });
  }

  /** Destination: forget a prepared or half-received domain of this migration. Idempotent. */
  abortIncoming(id: string, migrationId: string): Promise<void> {
    return this.queue.run(() => {
      const r = this.records.get(id);
      if (r && isIncoming(r) && migrationIdOf(r) === migrationId) {
        this.dropIncoming(id, this.err('MigrationAborted', { id, migrationId }));
      }
    });
  }

  /** The credential an incoming domain was prepared with, while it is still incoming (TLS server name lookup). */
  incomingCredential(id: string): MigrationCredential | undefined {
    const r = this.records.get(id);
    return r && isIncoming(r) ? this.guards.get(id)?.credential : undefined;
  }

  /**
   * Starts receiving. `peer` is how the stream came: a TLS-prepared domain accepts only a TLS stream
   * whose client certificate passes checkMigrationPeer; every refusal comes before any change.
   */
  acceptIncoming(id: string, migrationId: string, peer: StreamPeer = PLAINTEXT_PEER): Promise<IncomingSession> {
    return this.queue.run(() => {
      this.assertOpen();
      const r = this.records.get(id);
      if (!r || !isIncoming(r)) throw this.err('IncomingNotPrepared', { id, migrationId });
      if (migrationIdOf(r) !== migrationId) {
        throw this.err('IncomingMismatch', { id, migrationId, detail: `prepared for migration ${migrationIdOf(r)}` });
      }
      this.checkPeer(id, migrationId, peer);
      if (r.activity.kind === 'incoming-receiving') throw this.conflict(r, 'accept a second stream');
      this.records.set(id, { ...r, activity: { kind: 'incoming-receiving', migrationId } });
      const stream = new IncomingStream(this, r.spec, migrationId);
      this.sessions.set(id, stream);
      return stream;
    });
  }

  private checkPeer(id: string, migrationId: string, peer: StreamPeer): void {
    const guard = this.guards.get(id);
    const refuse = (reason: string, detail: string): FerryError => this.err('MigrationCredentialRejected', { id, migrationId, reason, detail });
    if (!guard) {
      if (peer.kind === 'tls') throw refuse('handshake', 'this incoming migration was prepared without a credential');
      return;
    }
    if (peer.kind !== 'tls') throw refuse('no-certificate', 'a plaintext stream for a migration prepared for TLS');
    const now = this.deps.clock.now();
    const check = checkMigrationPeer({ own: guard.own, ca: guard.ca, peer: peer.cert, now, used: (serial) => this.usedSerials.has(serial) });
    if (!check.ok) {
      this.log.warn({ id, migrationId, reason: check.reason, detail: check.detail }, 'refused an incoming migration stream');
      throw refuse(check.reason, check.detail);
    }
    // A credential carries one stream: used once, it is spent (a replay is refused).
    this.usedSerials.add(check.peer.serial, check.peer.notAfter, now);
  }

  /** IncomingHost: the last round arrived; the domain runs here from now on. */
  completeIncoming(stream: IncomingStream, final: FinalSend): Promise<IncomingDone> {
    return this.queue.run(async () => {
      const { id, migrationId } = stream;
      const r = this.records.get(id);
      if (!r || this.sessions.get(id) !== stream || r.activity.kind !== 'incoming-receiving') {
        throw this.err('IncomingNotPrepared', { id, migrationId });
      }
      const now = this.deps.clock.now();
      // A guest its administrator suspended arrives suspended (libvirt adds VIR_MIGRATE_PAUSED for a paused source).
      const state = final.suspended === true ? 'suspended' : 'running';
      try {
        await this.persist((d) => {
          d.domains[id] = { spec: r.spec, state, startedAt: now, ...(r.volumes ? { volumes: r.volumes.map((v) => ({ ...v })) } : {}) };
        });
      } catch (e) {
        this.dropIncoming(id, e as FerryError);
        throw e;
      }
      this.sessions.delete(id);
      this.guards.delete(id);
      this.records.set(id, { spec: r.spec, state, startedAt: now, activity: IDLE, ...(r.volumes ? { volumes: r.volumes } : {}) });
      this.arrived.add(migrationId);
      this.activity.setCounter(id, final.diskCounter);
      if (state === 'running') await this.activity.write(id, now);
      this.events.emit({ kind: 'migration-incoming-done', migrationId, id });
      this.events.emit({ kind: 'started', id });
      return { receivedBytes: stream.received };
    });
  }

  /**
   * A source lost its stream during switch-over and asks how it ended. In the queue, so it is atomic
   * with the stream's completion: once answered 'abandoned', the migration can no longer complete.
   */
  settleIncoming(id: string, migrationId: string): Promise<SwitchoverOutcome> {
    return this.queue.run(() => {
      this.assertOpen();
      const r = this.records.get(id);
      // A running, non-incoming domain of that id is the guest itself (it arrived before a restart of this host's memory).
      if (this.arrived.has(migrationId) || (r && !isIncoming(r) && (r.state === 'running' || r.state === 'suspended'))) return 'completed';
      if (r && isIncoming(r) && migrationIdOf(r) === migrationId) this.dropIncoming(id, this.err('MigrationAborted', { id, migrationId }));
      return 'abandoned';
    });
  }

  /** IncomingHost: the stream broke; a failed migration leaves nothing here. */
  failIncoming(stream: IncomingStream, reason: string): void {
    this.queue.run(() => {
      if (this.sessions.get(stream.id) !== stream) return;
      this.log.info({ id: stream.id, migrationId: stream.migrationId, reason }, 'incoming migration failed');
      this.sessions.delete(stream.id);
      this.records.delete(stream.id);
      this.guards.delete(stream.id);
    }).catch((e) => this.log.error({ err: e }, 'failIncoming'));
  }

  /**
   * Source: checks and starts a migration, returning at once; `entry.done` settles with the outcome.
   * The same migrationId again joins the existing migration (so a caller may retry the request).
   */
  beginMigration(id: string, target: MigrationTarget): Promise<OutgoingEntry> {
    return this.queue.run(() => {
      this.assertOpen();
      const known = this.outgoing.get(target.migrationId);
      if (known) {
        if (known.id === id) return known;
        throw this.err('HypervisorBadRequest', { detail: `migration id ${target.migrationId} belongs to domain ${known.id}` });
      }
      const r = this.records.get(id);
      if (!r) throw this.err('DomainNotFound', { id });
      if ((r.state !== 'running' && r.state !== 'suspended') || r.activity.kind !== 'idle') throw this.conflict(r, 'migrate');
      const suspended = r.state === 'suspended';
      const { migrationId } = target;
      // A bad or missing credential is refused before the domain changes (the dialer checks it again).
      if (target.credential) guardOf(target.credential, 'source', id, migrationId);
      else this.assertCredentialOptional(id, migrationId);
      if (!target.credential && target.destinationUri.startsWith('https:')) {
        throw this.err('MigrationCredentialInvalid', { id, migrationId, detail: 'an https:// destination needs this migration\'s credential' });
      }
      this.records.set(id, { ...r, activity: { kind: 'outgoing-precopy', migrationId, ...(suspended ? { suspended } : {}) } });
      // A suspended guest writes no memory: one round copies it all.
      const dirtyRateMiBps = suspended ? 0 : this.config.dirtyRateOf?.(r.spec) ?? this.config.migration.dirtyRateMiBps;
      const { nicMbps } = this.config;
      const shared = nicMbps === undefined ? Infinity : nicMbps / (this.outgoing.running().length + 1);
      const tuning = { ...this.config.migration, dirtyRateMiBps, bandwidthMbps: Math.min(this.config.migration.bandwidthMbps, shared) };
      return this.outgoing.start({
        clock: this.deps.clock, dialer: this.deps.dialer, timeScale: this.config.timeScale,
        sourceHost: this.config.host, spec: r.spec, target, tuning,
        onProgress: (progress) => this.events.emit({ kind: 'migration-progress', progress }),
        hooks: {
          enterSwitchover: () => this.enterSwitchover(id, migrationId),
          resume: () => this.resumeAfterMigration(id, migrationId),
          complete: () => this.completeOutgoing(id, migrationId),
        },
      });
    });
  }

  async migrateOut(id: string, target: MigrationTarget): Promise<MigrationStats> {
    return (await this.beginMigration(id, target)).done;
  }

  migrationStatus(id: string, migrationId: string): MigrationStatus {
    const e = this.outgoing.get(migrationId);
    return e && e.id === id ? e.status : { state: 'unknown' };
  }

  /** Resolves when a running migration settles; undefined when it is not running here. */
  whenMigrationSettles(id: string, migrationId: string): Promise<void> | undefined {
    const e = this.outgoing.get(migrationId);
    if (!e || e.id !== id || e.status.state !== 'running') return undefined;
    return e.done.then(() => undefined, () => undefined);
  }

  /** Source: abort; resolves once the domain runs here again. Too late once switchover began. */
  async abortMigration(id: string, migrationId: string): Promise<void> {
    const e = this.outgoing.get(migrationId);
    if (!e || e.id !== id || e.status.state !== 'running') return;
    const r = this.records.get(id);
    if (r?.activity.kind === 'outgoing-switchover') throw this.conflict(r, 'abort the migration');
    await this.abortEntry(e);
  }

  /** One round of activity writes now (the timer does this every writeIntervalMs). */
  tick(): Promise<void> {
    return this.activity.tick();
  }

  // --- outgoing hooks (each runs in the queue) ---

  private enterSwitchover(id: string, migrationId: string): Promise<{ diskCounter: number; suspended?: boolean }> {
    return this.queue.run(() => {
      const r = this.records.get(id);
      if (r?.activity.kind !== 'outgoing-precopy' || r.activity.migrationId !== migrationId) {
        throw this.err('MigrationAborted', { id, migrationId });
      }
      const suspended = r.activity.suspended === true;
      this.records.set(id, { ...r, state: 'paused', activity: { kind: 'outgoing-switchover', migrationId, ...(suspended ? { suspended } : {}) } });
      return { diskCounter: this.activity.counter(id), ...(suspended ? { suspended } : {}) };
    });
  }

  /** The migration did not complete: the domain goes back to how it was before it (running, or suspended). */
  private resumeAfterMigration(id: string, migrationId: string): Promise<void> {
    return this.queue.run(() => {
      const r = this.records.get(id);
      if (r && isOutgoing(r) && migrationIdOf(r) === migrationId) {
        const suspended = (r.activity.kind === 'outgoing-precopy' || r.activity.kind === 'outgoing-switchover') && r.activity.suspended === true;
        this.records.set(id, { ...r, state: suspended ? 'suspended' : 'running', activity: IDLE });
      }
    }).catch((e) => this.log.error({ err: e }, 'resume after migration'));
  }

  private completeOutgoing(id: string, migrationId: string): Promise<void> {
    return this.queue.run(async () => {
      const r = this.records.get(id);
      if (!r || migrationIdOf(r) !== migrationId) return;
      // The domain runs on the destination now: forget it here even if the store write fails (a
      // stale definition comes back shutoff after a restart, which is harmless).
      await this.persist((d) => {
        delete d.domains[id];
      }).catch((e) => this.log.error({ err: e, id }, 'could not remove migrated domain from the store'));
      await this.forget(id);
      this.events.emit({ kind: 'stopped', id, reason: 'migrated' });
    }).catch((e) => this.log.error({ err: e }, 'complete outgoing'));
  }

  // --- helpers ---

  private async abortEntry(entry: OutgoingEntry): Promise<void> {
    entry.controller.abort();
    await entry.done.catch(() => undefined);
  }

  private dropIncoming(id: string, error: FerryError): void {
    this.records.delete(id);
    this.guards.delete(id);
    const s = this.sessions.get(id);
    this.sessions.delete(id);
    s?.dropped(error);
  }

  /** Removes a domain from memory and its disk file from storage. */
  private async forget(id: string): Promise<void> {
    this.records.delete(id);
    await this.activity.forget(id);
  }

  private async persist(mutate: (d: SimHvSnapshot) => void): Promise<void> {
    try {
      await this.deps.store.update(mutate);
    } catch (e) {
      throw this.err('HypervisorUnavailable', { uri: this.config.host, detail: `state store: ${(e as Error).message}` });
    }
  }

  private pathOf(id: string): string {
    return this.activity.pathOf(id);
  }

  private infoOf(r: DomainRecord): DomainInfo {
    return toDomainInfo(r, this.pathOf(r.spec.id));
  }

  private assertCredentialOptional(id: string, migrationId: string): void {
    if (this.config.requireMigrationCredentials !== true) return;
    throw this.err('MigrationCredentialInvalid', {
      id, migrationId, detail: 'this hypervisor takes migrations only with their per-migration credential (it was not started with --insecure-plaintext)',
    });
  }

  private assertOpen(): void {
    if (this.closed) throw this.err('HypervisorUnavailable', { uri: this.config.host, detail: 'host is shutting down' });
  }

  private conflict(r: DomainRecord, operation: string): FerryError {
    const state = r.activity.kind === 'idle' ? r.state : `${r.state} (${r.activity.kind} ${migrationIdOf(r)})`;
    return this.err('DomainStateConflict', { id: r.spec.id, state, operation });
  }

  private err(code: Parameters<typeof HypervisorErrors.make>[0], fields: Record<string, string | number | undefined>): FerryError {
    return HypervisorErrors.make(code, { host: this.config.host, ...fields });
  }
}

function migrationIdOf(r: DomainRecord): string | undefined {
  return r.activity.kind === 'idle' ? undefined : r.activity.migrationId;
}
