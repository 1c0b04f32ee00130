/**
 * A hand-written HypervisorDriver for unit tests (STYLE habit 4): domains in memory, a switch to
 * take the hypervisor down, one-shot failure injection, and a log of every call made.
 *
 * Live migration follows the simulated hypervisor's rules (docs/simulated-hypervisor.md), driven
 * step by step by the test instead of by time: migrateOut starts OR joins by migration id and the
 * outcome stays collectable after it settled; the source domain stops only when the destination
 * has the VM running; a failure or abort resumes it here and drops the destination's copy; abort is
 * refused once the switchover began; a prepared incoming domain is paused and holds resources; a
 * power cycle loses the migration registry and prepared incoming domains, and stopped ones come
 * back shut off. Destinations are other FakeDrivers registered under `fake://HOST`.
 */
import type {
  DomainInfo, DomainSpec, HostInfo, HypervisorDriver, HypervisorEvent, MigrationCredential, MigrationStats, MigrationTarget,
  VolumeAttachmentSpec,
} from '../../nc/hypervisor/driver.js';
import { HypervisorErrors } from '../../nc/hypervisor/errors.js';
import type { FerryError } from '../../shared/errors/registry.js';
import { fits, sub, sum, type Resources } from '../../shared/model/resources.js';

type Method = 'connect' | 'list' | 'info' | 'create' | 'destroy' | 'prepareIncoming' | 'abortIncoming' | 'migrateOut' | 'abortMigration'
  | 'attachVolume' | 'detachVolume' | 'pause' | 'resume' | 'shutdown' | 'reboot' | 'reset' | 'define';

interface Waiter {
  resolve(stats: MigrationStats): void;
  reject(e: FerryError): void;
}

export interface FakeMigration {
  readonly id: string;
  readonly migrationId: string;
  readonly destinationUri: string;
  state: 'precopy' | 'switchover' | 'completed' | 'failed';
  stats?: MigrationStats;
  error?: FerryError;
  transferred: number;
  iteration: number;
  readonly waiters: Waiter[];
}

const MIB = 1024 * 1024;

export class FakeDriver implements HypervisorDriver {
  readonly domains = new Map<string, DomainInfo>();
  readonly calls: string[] = [];
  /** The credential each prepareIncoming / migrateOut call carried (undefined: none), in call order. */
  readonly credentials: { readonly method: 'prepareIncoming' | 'migrateOut'; readonly id: string; readonly credential: MigrationCredential | undefined }[] = [];
  /** Prepared (or receiving) incoming domains: instance id → migration id. */
  readonly incoming = new Map<string, string>();
  /** Outgoing migrations by migration id, running and settled (the daemon's registry). */
  readonly outgoing = new Map<string, FakeMigration>();
  /** Other hosts, by the destinationUri that names them. */
  readonly peers = new Map<string, FakeDriver>();
  /** While true every call fails with HypervisorUnavailable, as a dead daemon would. */
  down = false;
  private readonly failures = new Map<Method, FerryError[]>();
  private readonly listeners = new Set<(e: HypervisorEvent) => void>();
  /** Runs inside create() after the domain is defined, before it answers (to simulate a crash there). */
  afterCreate: ((spec: DomainSpec) => Promise<void>) | undefined;
  /** Its guests ignore reboot() (no ACPI daemon): only reset() reboots them. */
  guestIgnoresAcpi = false;
  /** Like libvirt, start whatever is asked even past capacity: the NC's own check is all there is. */
  overcommit = false;
  /** While true events are lost (a dropped event stream): the NC must not depend on them. */
  muted = false;
  /**
   * As simhv towards an https:// destination: a migration it does not already run is not started
   * without its credential (MigrationCredentialInvalid, nothing changes); joining one it runs needs none.
   */
  credentialsRequired = false;

  constructor(
    readonly host = '127.0.10.1',
    readonly capacity: Resources = { cores: 4, memoryMiB: 4096, diskGiB: 100 },
    private readonly now: () => number = () => 0,
  ) {}

  get uri(): string {
    return `fake://${this.host}`;
  }

  /** Makes `other` reachable as a migration destination (both ways). */
  link(other: FakeDriver): void {
    this.peers.set(other.uri, other);
    other.peers.set(this.uri, this);
  }

  /** The next call to `method` fails with `err` (queued, one per call). */
  failNext(method: Method, err: FerryError = this.unavailable()): void {
    const list = this.failures.get(method) ?? [];
    list.push(err);
    this.failures.set(method, list);
  }

  unavailable(): FerryError {
    return HypervisorErrors.make('HypervisorUnavailable', { uri: `fake://${this.host}`, detail: 'connection refused' });
  }

  /**
   * A host power cycle (the daemon restarts): prepared incoming domains and the migration registry
   * are lost, in-flight migrations break (their callers lose the connection), and every stored
   * domain comes back shut off.
   */
  powerCycle(): void {
    for (const id of this.incoming.keys()) this.domains.delete(id);
    this.incoming.clear();
    for (const m of this.outgoing.values()) {
      if (m.state === 'precopy' || m.state === 'switchover') this.peer(m)?.dropIncoming(m.id, m.migrationId);
      this.settle(m, undefined, this.unavailable(), false);
    }
    this.outgoing.clear();
    for (const [id, d] of this.domains) this.domains.set(id, { ...d, state: 'shutoff' });
  }

  /** The connections of pending migrateOut calls break; the migrations themselves carry on here. */
  dropConnections(): void {
    for (const m of this.outgoing.values()) {
      for (const w of m.waiters.splice(0)) w.reject(this.unavailable());
    }
  }

  addDomain(id: string, resources: Resources, state: DomainInfo['state'] = 'running'): DomainInfo {
    const d: DomainInfo = { id, state, resources, imageId: 'emi-00000001', diskPath: `/fake/${id}.img`, startedAt: this.now() };
    this.domains.set(id, d);
    return d;
  }

  emit(e: HypervisorEvent): void {
    if (this.muted) return;
    for (const l of this.listeners) l(e);
  }

  private enter(method: Method, detail = ''): void {
    this.calls.push(detail ? `${method} ${detail}` : method);
    if (this.down) throw this.unavailable();
    const queued = this.failures.get(method);
    const err = queued?.shift();
    if (err) throw err;
  }

  async connect(): Promise<HostInfo> {
    this.enter('connect');
    return { host: this.host, capacity: this.capacity, hypervisor: 'sim' };
  }

  async list(): Promise<DomainInfo[]> {
    this.enter('list');
    return [...this.domains.values()];
  }

  async info(id: string): Promise<DomainInfo | undefined> {
    this.enter('info', id);
    return this.domains.get(id);
  }

  async create(spec: DomainSpec): Promise<DomainInfo> {
    this.enter('create', spec.id);
    const existing = this.domains.get(spec.id);
    if (existing) {
      if (this.incoming.has(spec.id)) throw this.conflict(spec.id, 'paused (incoming)', 'create');
      const same = existing.imageId === spec.imageId && JSON.stringify(existing.resources) === JSON.stringify(spec.resources);
      if (!same) throw HypervisorErrors.make('DomainExists', { id: spec.id, host: this.host, detail: 'spec differs' });
      if (existing.state === 'running' || existing.state === 'paused') return existing;
      // As both real drivers do: a shut-off (or crashed) domain of the same spec is started from its own
      // disk, with the spec's volumes it lacks added to its definition first.
      const volumes = [...(existing.volumes ?? []), ...(spec.volumes ?? []).filter((v) => !(existing.volumes ?? []).some((x) => x.volumeId === v.volumeId))];
      const started: DomainInfo = { ...existing, state: 'running', startedAt: this.now(), ...(volumes.length > 0 ? { volumes } : {}) };
      this.domains.set(spec.id, started);
      return started;
    }
    if (!this.overcommit && !this.fitsHere(spec.resources)) {
      throw HypervisorErrors.make('InsufficientHostResources', { id: spec.id, host: this.host, need: '?', free: '?' });
    }
    const d = this.addDomain(spec.id, spec.resources);
    this.domains.set(spec.id, { ...d, imageId: spec.imageId, ...(spec.volumes && spec.volumes.length > 0 ? { volumes: spec.volumes.map((v) => ({ ...v })) } : {}) });
    if (this.afterCreate) await this.afterCreate(spec);
    return this.domains.get(spec.id) as DomainInfo;
  }

  async destroy(id: string): Promise<void> {
    this.enter('destroy', id);
    const m = this.outgoingOf(id);
    if (m?.state === 'switchover') throw this.conflict(id, 'paused (switchover)', 'destroy');
    if (m) this.failMigration(m.migrationId, 'MigrationAborted');
    this.incoming.delete(id);
    this.domains.delete(id);
  }

  /** The sim's rules: a device or a volume used otherwise is VolumeConflict; a repeat answers the domain. */
  async attachVolume(id: string, volume: VolumeAttachmentSpec): Promise<DomainInfo> {
    this.enter('attachVolume', `${id} ${volume.volumeId} ${volume.device}`);
    const d = this.domains.get(id);
    if (!d) throw HypervisorErrors.make('DomainNotFound', { id, host: this.host });
    for (const other of this.domains.values()) {
      for (const v of other.volumes ?? []) {
        const clash = other.id !== id ? v.volumeId === volume.volumeId : (v.volumeId === volume.volumeId) !== (v.device === volume.device);
        if (clash) throw HypervisorErrors.make('VolumeConflict', { id, host: this.host, detail: `${v.volumeId} on ${other.id} as ${v.device}` });
      }
    }
    if ((d.volumes ?? []).some((v) => v.volumeId === volume.volumeId)) return d;
    const next = { ...d, volumes: [...(d.volumes ?? []), { ...volume }] };
    this.domains.set(id, next);
    return next;
  }

  async detachVolume(id: string, volumeId: string): Promise<DomainInfo> {
    this.enter('detachVolume', `${id} ${volumeId}`);
    const d = this.domains.get(id);
    if (!d) throw HypervisorErrors.make('DomainNotFound', { id, host: this.host });
    const next = { ...d, volumes: (d.volumes ?? []).filter((v) => v.volumeId !== volumeId) };
    this.domains.set(id, next);
    return next;
  }

  /** The sim's rules: running ⇄ suspended, a repeat answers the domain, anything else DomainStateConflict. */
  async pause(id: string): Promise<DomainInfo> {
    this.enter('pause', id);
    return this.setRunState(id, 'running', 'suspended', 'pause');
  }

  async resume(id: string): Promise<DomainInfo> {
    this.enter('resume', id);
    return this.setRunState(id, 'suspended', 'running', 'resume');
  }

  /** Defined, shut off, holding nothing (a cold move's destination); the same spec again answers it. */
  async define(spec: DomainSpec): Promise<DomainInfo> {
    this.enter('define', spec.id);
    const existing = this.domains.get(spec.id);
    if (existing) return existing;
    const d: DomainInfo = {
      id: spec.id, state: 'shutoff', resources: { ...spec.resources }, imageId: spec.imageId, diskPath: `/fake/${spec.id}.img`, startedAt: 0,
      ...(spec.volumes && spec.volumes.length > 0 ? { volumes: spec.volumes.map((v) => ({ ...v })) } : {}),
    };
    this.domains.set(spec.id, d);
    return d;
  }

  /** The sim's rules: running → shutoff (the definition kept), a shut-off or crashed one answers as is. */
  async shutdown(id: string, opts: { readonly force: boolean }): Promise<DomainInfo> {
    this.enter('shutdown', `${id}${opts.force ? ' force' : ''}`);
    const d = this.domains.get(id);
    if (!d) throw HypervisorErrors.make('DomainNotFound', { id, host: this.host });
    if (d.state === 'shutoff' || d.state === 'crashed') return d;
    if (this.outgoingOf(id) || this.incoming.has(id) || d.state !== 'running') throw this.conflict(id, d.state, 'shutdown');
    const next = { ...d, state: 'shutoff' as const };
    this.domains.set(id, next);
    return next;
  }

  async reboot(id: string): Promise<DomainInfo> {
    this.enter('reboot', id);
    const d = this.domains.get(id);
    if (!d) throw HypervisorErrors.make('DomainNotFound', { id, host: this.host });
    if (this.outgoingOf(id) || this.incoming.has(id) || d.state !== 'running') throw this.conflict(id, d.state, 'reboot');
    // A guest with an ACPI daemon reboots when asked; one without ignores the request.
    if (!this.guestIgnoresAcpi) this.emit({ kind: 'rebooted', id });
    return d;
  }

  /** The guest restarts at once, unasked; the hypervisor reports the reboot. */
  async reset(id: string): Promise<DomainInfo> {
    this.enter('reset', id);
    const d = this.domains.get(id);
    if (!d) throw HypervisorErrors.make('DomainNotFound', { id, host: this.host });
    if (this.outgoingOf(id) || this.incoming.has(id) || d.state !== 'running') throw this.conflict(id, d.state, 'reset');
    this.emit({ kind: 'rebooted', id });
    return d;
  }

  private setRunState(id: string, from: DomainInfo['state'], to: DomainInfo['state'], operation: string): DomainInfo {
    const d = this.domains.get(id);
    if (!d) throw HypervisorErrors.make('DomainNotFound', { id, host: this.host });
    if (this.outgoingOf(id) || this.incoming.has(id)) throw this.conflict(id, d.state, operation);
    if (d.state === to) return d;
    if (d.state !== from) throw this.conflict(id, d.state, operation);
    const next = { ...d, state: to };
    this.domains.set(id, next);
    return next;
  }

  async prepareIncoming(spec: DomainSpec, migrationId: string, credential?: MigrationCredential): Promise<void> {
    this.enter('prepareIncoming', `${spec.id} ${migrationId}`);
    this.credentials.push({ method: 'prepareIncoming', id: spec.id, credential });
    const existing = this.domains.get(spec.id);
    const prepared = this.incoming.get(spec.id);
    if (existing && prepared === undefined) throw this.conflict(spec.id, existing.state, 'prepare an incoming migration');
    if (existing) {
      if (prepared !== migrationId) {
        throw HypervisorErrors.make('IncomingMismatch', { host: this.host, id: spec.id, migrationId, detail: `already prepared for migration ${prepared}` });
      }
      return;
    }
    if (!this.fitsHere(spec.resources)) throw HypervisorErrors.make('InsufficientHostResources', { id: spec.id, host: this.host, need: '?', free: '?' });
    this.domains.set(spec.id, { id: spec.id, state: 'paused', resources: { ...spec.resources }, imageId: spec.imageId, diskPath: `/fake/${spec.id}.img`, startedAt: 0 });
    this.incoming.set(spec.id, migrationId);
  }

  async abortIncoming(id: string, migrationId: string): Promise<void> {
    this.enter('abortIncoming', `${id} ${migrationId}`);
    if (this.incoming.get(id) !== migrationId) return;
    this.dropIncoming(id, migrationId);
    // A receiving stream breaks: the source's migration fails and resumes the guest there.
    for (const peer of this.peers.values()) {
      const m = peer.outgoing.get(migrationId);
      if (m && (m.state === 'precopy' || m.state === 'switchover')) peer.failMigration(migrationId, 'MigrationAborted');
    }
  }

  async migrateOut(id: string, target: MigrationTarget): Promise<MigrationStats> {
    this.enter('migrateOut', `${id} ${target.migrationId}`);
    this.credentials.push({ method: 'migrateOut', id, credential: target.credential });
    let m = this.outgoing.get(target.migrationId);
    if (m && m.id !== id) throw HypervisorErrors.make('HypervisorBadRequest', { detail: `migration id ${target.migrationId} belongs to domain ${m.id}` });
    if (!m) {
      const d = this.domains.get(id);
      if (!d) throw HypervisorErrors.make('DomainNotFound', { id, host: this.host });
      if (d.state !== 'running' || this.outgoingOf(id) || this.incoming.has(id)) throw this.conflict(id, d.state, 'migrate');
      if (this.credentialsRequired && !target.credential) {
        throw HypervisorErrors.make('MigrationCredentialInvalid', { migrationId: target.migrationId, id, detail: 'an https:// destination needs this migration\'s credential' });
      }
      m = { id, migrationId: target.migrationId, destinationUri: target.destinationUri, state: 'precopy', transferred: 0, iteration: 0, waiters: [] };
      this.outgoing.set(target.migrationId, m);
    }
    if (m.state === 'completed' && m.stats) return m.stats;
    if (m.state === 'failed' && m.error) throw m.error;
    const entry = m;
    return new Promise((resolve, reject) => entry.waiters.push({ resolve, reject }));
  }

  async abortMigration(id: string, migrationId: string): Promise<void> {
    this.enter('abortMigration', `${id} ${migrationId}`);
    const m = this.outgoing.get(migrationId);
    if (!m || m.id !== id) return;
    if (m.state === 'switchover') throw this.conflict(id, 'paused (outgoing-switchover)', 'abort the migration');
    if (m.state === 'precopy') this.failMigration(migrationId, 'MigrationAborted');
  }

  onEvent(listener: (e: HypervisorEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.calls.push('close');
  }

  // --- driving migrations from a test ---

  /** One pre-copy round of `bytes`; emits a progress event as the daemon does. */
  progress(migrationId: string, bytes = 64 * MIB): void {
    const m = this.mustMigration(migrationId);
    const total = (this.domains.get(m.id)?.resources.memoryMiB ?? 0) * MIB;
    m.transferred += bytes;
    m.iteration += 1;
    this.emit({
      kind: 'migration-progress',
      progress: { migrationId, id: m.id, bytesTotal: total, bytesTransferred: m.transferred, bytesRemaining: Math.max(0, total - m.transferred), iteration: m.iteration },
    });
  }

  /** The guest is paused for the stop-and-copy round: abort is refused from here on. */
  switchover(migrationId: string): void {
    const m = this.mustMigration(migrationId);
    m.state = 'switchover';
    const d = this.domains.get(m.id);
    if (d) this.domains.set(m.id, { ...d, state: 'paused' });
  }

  /**
   * The last round arrives: the destination (which must have prepared this migration) starts the
   * VM, then the source forgets it and answers every caller with the stats.
   */
  complete(migrationId: string, stats: Partial<MigrationStats> = {}): void {
    const m = this.mustMigration(migrationId);
    const dest = this.peer(m);
    if (!dest || dest.incoming.get(m.id) !== migrationId) {
      this.failMigration(migrationId, 'IncomingNotPrepared');
      return;
    }
    dest.arrive(m.id, migrationId);
    this.domains.delete(m.id);
    this.emit({ kind: 'stopped', id: m.id, reason: 'migrated' });
    const full: MigrationStats = {
      migrationId, id: m.id, elapsedMs: 1200, downtimeMs: 40, bytesTransferred: m.transferred, iterations: Math.max(1, m.iteration), ...stats,
    };
    this.settle(m, full, undefined, true);
  }

  /** The migration fails (or is aborted): the guest runs here again and the destination drops its copy. */
  failMigration(migrationId: string, code: 'MigrationFailed' | 'MigrationAborted' | 'IncomingNotPrepared' = 'MigrationFailed', detail = 'did not converge'): void {
    const m = this.mustMigration(migrationId);
    if (m.state === 'completed' || m.state === 'failed') return;
    this.peer(m)?.dropIncoming(m.id, migrationId);
    const d = this.domains.get(m.id);
    if (d) this.domains.set(m.id, { ...d, state: 'running' });
    const error = HypervisorErrors.make(code, { migrationId, id: m.id, detail, host: this.host });
    this.settle(m, undefined, error, false);
  }

  // --- helpers ---

  /** Destination: the VM starts here (stored, running) and the arrival is announced. */
  private arrive(id: string, migrationId: string): void {
    this.incoming.delete(id);
    const d = this.domains.get(id);
    if (d) this.domains.set(id, { ...d, state: 'running', startedAt: this.now() });
    this.emit({ kind: 'migration-incoming-done', migrationId, id });
    this.emit({ kind: 'started', id });
  }

  private dropIncoming(id: string, migrationId: string): void {
    if (this.incoming.get(id) !== migrationId) return;
    this.incoming.delete(id);
    this.domains.delete(id);
  }

  private settle(m: FakeMigration, stats: MigrationStats | undefined, error: FerryError | undefined, completed: boolean): void {
    m.state = completed ? 'completed' : 'failed';
    m.stats = stats;
    m.error = error;
    for (const w of m.waiters.splice(0)) {
      if (stats) w.resolve(stats);
      else w.reject(error ?? this.unavailable());
    }
  }

  private peer(m: FakeMigration): FakeDriver | undefined {
    return this.peers.get(m.destinationUri);
  }

  private outgoingOf(id: string): FakeMigration | undefined {
    return [...this.outgoing.values()].find((m) => m.id === id && (m.state === 'precopy' || m.state === 'switchover'));
  }

  private mustMigration(migrationId: string): FakeMigration {
    const m = this.outgoing.get(migrationId);
    if (!m) throw new Error(`fake: no migration ${migrationId} on ${this.host}`);
    return m;
  }

  private fitsHere(need: Resources): boolean {
    const held = [...this.domains.values()].filter((d) => d.state === 'running' || d.state === 'paused').map((d) => d.resources);
    return fits(need, sub(this.capacity, sum(held)));
  }

  private conflict(id: string, state: string, operation: string): FerryError {
    return HypervisorErrors.make('DomainStateConflict', { id, host: this.host, state, operation });
  }
}
