/**
 * The NC's HypervisorDriver in the simulator: the real InProcessDriver over whichever SimHost is
 * powered on in the slot, reached after a small seeded latency and guarded by the NC's incarnation
 * (a dead NC's calls never return). A powered-off host answers HypervisorUnavailable, like a
 * libvirtd that does not answer; events follow the host across power cycles.
 */
import type {
  DomainInfo, DomainSpec, HostInfo, HypervisorDriver, HypervisorEvent, MigrationCredential, MigrationStats, MigrationTarget, VolumeAttachmentSpec,
} from '../nc/hypervisor/driver.js';
import { HypervisorErrors } from '../nc/hypervisor/errors.js';
import { InProcessDriver } from '../nc/hypervisor/sim/inProcessDriver.js';
import type { SimHost } from '../nc/hypervisor/sim/simHost.js';
import type { Clock } from '../shared/clock.js';
import type { Incarnation } from './incarnation.js';
import type { Prng } from './prng.js';

/** One physical host's hypervisor: present while powered on. */
export class HostSlot {
  private host: SimHost | undefined;
  private readonly listeners = new Set<(e: HypervisorEvent) => void>();
  private off: (() => void) | undefined;

  constructor(readonly name: string) {}

  get current(): SimHost | undefined {
    return this.host;
  }

  powerOn(host: SimHost): void {
    this.host = host;
    this.off = host.onEvent((e) => {
      for (const l of [...this.listeners]) l(e);
    });
  }

  powerOff(): void {
    this.off?.();
    this.off = undefined;
    this.host = undefined;
  }

  onEvent(listener: (e: HypervisorEvent) => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }
}

export class SimHostDriver implements HypervisorDriver {
  constructor(
    private readonly slot: HostSlot,
    private readonly life: Incarnation,
    private readonly clock: Clock,
    private readonly rng: Prng,
    /** Read per call: a slow-hypervisor fault raises it for a while. */
    private readonly maxLatencyMs: () => number,
  ) {}

  private async via<T>(fn: (d: InProcessDriver) => Promise<T>): Promise<T> {
    const ms = this.rng.int(0, this.maxLatencyMs());
    if (ms > 0) await new Promise<void>((resolve) => this.clock.setTimer(ms, resolve));
    const host = this.slot.current;
    if (!host) throw HypervisorErrors.make('HypervisorUnavailable', { uri: `sim://${this.slot.name}`, detail: 'host is powered off' });
    return this.life.guard(fn(new InProcessDriver(host)));
  }

  connect(): Promise<HostInfo> { return this.via((d) => d.connect()); }
  list(): Promise<DomainInfo[]> { return this.via((d) => d.list()); }
  info(id: string): Promise<DomainInfo | undefined> { return this.via((d) => d.info(id)); }
  create(spec: DomainSpec): Promise<DomainInfo> { return this.via((d) => d.create(spec)); }
  destroy(id: string): Promise<void> { return this.via((d) => d.destroy(id)); }
  attachVolume(id: string, volume: VolumeAttachmentSpec): Promise<DomainInfo> { return this.via((d) => d.attachVolume(id, volume)); }
  detachVolume(id: string, volumeId: string): Promise<DomainInfo> { return this.via((d) => d.detachVolume(id, volumeId)); }
  pause(id: string): Promise<DomainInfo> { return this.via((d) => d.pause(id)); }
  resume(id: string): Promise<DomainInfo> { return this.via((d) => d.resume(id)); }
  define(spec: DomainSpec): Promise<DomainInfo> { return this.via((d) => d.define(spec)); }
  shutdown(id: string, opts: { readonly force: boolean }): Promise<DomainInfo> { return this.via((d) => d.shutdown(id, opts)); }
  reboot(id: string): Promise<DomainInfo> { return this.via((d) => d.reboot(id)); }
  reset(id: string): Promise<DomainInfo> { return this.via((d) => d.reset(id)); }
  prepareIncoming(spec: DomainSpec, migrationId: string, credential?: MigrationCredential): Promise<void> {
    return this.via((d) => d.prepareIncoming(spec, migrationId, credential));
  }
  abortIncoming(id: string, migrationId: string): Promise<void> { return this.via((d) => d.abortIncoming(id, migrationId)); }
  migrateOut(id: string, target: MigrationTarget): Promise<MigrationStats> { return this.via((d) => d.migrateOut(id, target)); }
  abortMigration(id: string, migrationId: string): Promise<void> { return this.via((d) => d.abortMigration(id, migrationId)); }

  onEvent(listener: (e: HypervisorEvent) => void): () => void {
    return this.slot.onEvent((e) => {
      if (this.life.isAlive) listener(e);
    });
  }

  async close(): Promise<void> {}
}
