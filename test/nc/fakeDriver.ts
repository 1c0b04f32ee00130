/**
 * A hand-written HypervisorDriver for unit tests (STYLE habit 4): domains in memory, a switch to
 * take the hypervisor down, one-shot failure injection, and a log of every call made.
 */
import type {
  DomainInfo, DomainSpec, HostInfo, HypervisorDriver, HypervisorEvent, MigrationStats, MigrationTarget,
} from '../../nc/hypervisor/driver.js';
import { HypervisorErrors } from '../../nc/hypervisor/errors.js';
import type { FerryError } from '../../shared/errors/registry.js';
import { fits, sub, sum, type Resources } from '../../shared/model/resources.js';

type Method = 'connect' | 'list' | 'info' | 'create' | 'destroy';

export class FakeDriver implements HypervisorDriver {
  readonly domains = new Map<string, DomainInfo>();
  readonly calls: string[] = [];
  /** While true every call fails with HypervisorUnavailable, as a dead daemon would. */
  down = false;
  private readonly failures = new Map<Method, FerryError[]>();
  /** Runs inside create() after the domain is defined, before it answers (to simulate a crash there). */
  afterCreate: ((spec: DomainSpec) => Promise<void>) | undefined;
  /** Like libvirt, start whatever is asked even past capacity: the NC's own check is all there is. */
  overcommit = false;

  constructor(
    readonly host = '127.0.10.1',
    readonly capacity: Resources = { cores: 4, memoryMiB: 4096, diskGiB: 100 },
    private readonly now: () => number = () => 0,
  ) {}

  /** The next call to `method` fails with `err` (queued, one per call). */
  failNext(method: Method, err: FerryError = this.unavailable()): void {
    const list = this.failures.get(method) ?? [];
    list.push(err);
    this.failures.set(method, list);
  }

  unavailable(): FerryError {
    return HypervisorErrors.make('HypervisorUnavailable', { uri: `fake://${this.host}`, detail: 'connection refused' });
  }

  /** A host power cycle: every domain is still defined but shut off. */
  powerCycle(): void {
    for (const [id, d] of this.domains) this.domains.set(id, { ...d, state: 'shutoff' });
  }

  addDomain(id: string, resources: Resources, state: DomainInfo['state'] = 'running'): DomainInfo {
    const d: DomainInfo = { id, state, resources, imageId: 'emi-00000001', diskPath: `/fake/${id}.img`, startedAt: this.now() };
    this.domains.set(id, d);
    return d;
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
      const same = existing.imageId === spec.imageId && JSON.stringify(existing.resources) === JSON.stringify(spec.resources);
      if (!same) throw HypervisorErrors.make('DomainExists', { id: spec.id, host: this.host, detail: 'spec differs' });
      return existing;
    }
    const free = sub(this.capacity, sum([...this.domains.values()].map((d) => d.resources)));
    if (!this.overcommit && !fits(spec.resources, free)) {
      throw HypervisorErrors.make('InsufficientHostResources', { id: spec.id, host: this.host, need: '?', free: '?' });
    }
    const d = this.addDomain(spec.id, spec.resources);
    this.domains.set(spec.id, { ...d, imageId: spec.imageId });
    if (this.afterCreate) await this.afterCreate(spec);
    return this.domains.get(spec.id) as DomainInfo;
  }

  async destroy(id: string): Promise<void> {
    this.enter('destroy', id);
    this.domains.delete(id);
  }

  async prepareIncoming(): Promise<void> {
    throw new Error('not used by the NC yet');
  }

  async abortIncoming(): Promise<void> {
    throw new Error('not used by the NC yet');
  }

  async migrateOut(_id: string, _t: MigrationTarget): Promise<MigrationStats> {
    throw new Error('not used by the NC yet');
  }

  async abortMigration(): Promise<void> {
    throw new Error('not used by the NC yet');
  }

  onEvent(_listener: (e: HypervisorEvent) => void): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    this.calls.push('close');
  }
}
