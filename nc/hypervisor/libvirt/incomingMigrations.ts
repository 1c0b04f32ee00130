/**
 * Destination side of libvirt live migrations. The destination's libvirtd creates the incoming
 * domain itself when the source's libvirtd asks (peer-to-peer), so preparing means: check room,
 * remember the expectation, hold the migration's credential (the tunnel listener's, or libvirt's
 * TLS files), and watch for the domain to run here.
 */
import type { Clock } from '../../../shared/clock.js';
import { fits, sub, sum, type Resources } from '../../../shared/model/resources.js';
import { sleepOn } from '../clockSleep.js';
import type { DomainInfo, DomainSpec, DomainState, HostInfo, HypervisorEvent, MigrationCredential } from '../driver.js';
import { HypervisorErrors } from '../errors.js';

/** Where a prepared incoming migration's credential is held until it arrives or is cleaned. */
export interface IncomingCredentials {
  hold(id: string, migrationId: string, credential: MigrationCredential): Promise<void>;
  /** Cleaning: the credential goes (a tunnel also closes and revokes it). Idempotent. */
  release(id: string, migrationId: string): Promise<void>;
}

export interface IncomingDeps {
  readonly host: string;
  readonly clock: Clock;
  readonly credentials: IncomingCredentials | undefined;
  /** How long a prepared migration waits for its domain before its TLS files go. */
  readonly timeoutMs: number;
  readonly info: (id: string) => Promise<DomainInfo | undefined>;
  readonly list: () => Promise<DomainInfo[]>;
  readonly connect: () => Promise<HostInfo>;
  readonly destroy: (id: string) => Promise<void>;
  readonly emit: (e: HypervisorEvent) => void;
}

interface Expected {
  readonly spec: DomainSpec;
  readonly migrationId: string;
  readonly stop: AbortController;
  arrived: boolean;
}

/** How often a prepared destination looks whether its domain runs here yet. */
const ARRIVAL_POLL_MS = 200;

export class IncomingMigrations {
  private readonly expected = new Map<string, Expected>();
  /** Instance → the migration that brought it here, so a repeated prepare is a no-op. */
  private readonly arrived = new Map<string, string>();

  constructor(private readonly d: IncomingDeps) {}

  async prepare(spec: DomainSpec, migrationId: string, credential?: MigrationCredential): Promise<void> {
    const here = await this.d.info(spec.id);
    if (here && arrivedState(here.state)) {
      // Arrived already (this is a repeat): nothing to prepare.
      if (this.expected.get(spec.id)?.migrationId === migrationId || this.arrived.get(spec.id) === migrationId) return;
      throw HypervisorErrors.make('DomainExists', { id: spec.id, host: this.d.host, detail: 'a domain of that name runs here' });
    }
    const host = await this.d.connect();
    const used = sum((await this.d.list()).filter((x) => x.id !== spec.id && x.state !== 'shutoff').map((x) => x.resources));
    const free = sub(host.capacity, used);
    if (!fits(spec.resources, free)) {
      throw HypervisorErrors.make('InsufficientHostResources', { host: this.d.host, id: spec.id, need: fmt(spec.resources), free: fmt(free) });
    }
    if (credential) {
      if (!this.d.credentials) throw HypervisorErrors.make('HypervisorBadRequest', { detail: 'a TLS migration needs the migration tunnel or the libvirt migration TLS directory configured' });
      await this.d.credentials.hold(spec.id, migrationId, credential);
    }
    const previous = this.expected.get(spec.id);
    if (previous?.migrationId === migrationId) return;
    previous?.stop.abort();
    const entry: Expected = { spec, migrationId, stop: new AbortController(), arrived: false };
    this.expected.set(spec.id, entry);
    this.watchArrival(entry).catch(() => undefined);
  }

  async abort(id: string, migrationId: string): Promise<void> {
    const entry = this.expected.get(id);
    if (entry?.migrationId === migrationId) {
      entry.stop.abort();
      this.expected.delete(id);
    }
    await this.d.credentials?.release(id, migrationId);
    // A half-received domain is paused here; one that already runs is the instance now and stays.
    const here = await this.d.info(id);
    if (here?.state === 'paused' && entry) await this.d.destroy(id);
  }

  /** The domain left or was destroyed: a later prepare for it is a new migration. */
  forget(id: string): void {
    this.arrived.delete(id);
  }

  close(): void {
    for (const e of this.expected.values()) e.stop.abort();
    this.expected.clear();
  }

  /** A hint (libvirt resumed the incoming domain) that `id` arrived: look now, not at the next poll. */
  async checkNow(id: string): Promise<void> {
    const entry = this.expected.get(id);
    if (entry) await this.lookForArrival(entry);
  }

  /** Once the domain runs (or arrived suspended) here, say so (once) and end the watch, which drops its credential. */
  private async lookForArrival(entry: Expected): Promise<boolean> {
    const id = entry.spec.id;
    const found = await this.d.info(id).catch(() => undefined);
    if (!found || !arrivedState(found.state) || entry.arrived) return entry.arrived;
    entry.arrived = true;
    this.arrived.set(id, entry.migrationId);
    this.d.emit({ kind: 'migration-incoming-done', migrationId: entry.migrationId, id });
    entry.stop.abort();
    return true;
  }

  private async watchArrival(entry: Expected): Promise<void> {
    const id = entry.spec.id;
    const deadline = this.d.clock.now() + this.d.timeoutMs;
    try {
      while (this.d.clock.now() < deadline) {
        await sleepOn(this.d.clock, ARRIVAL_POLL_MS, entry.stop.signal);
        if (await this.lookForArrival(entry)) return;
      }
    } finally {
      if (this.expected.get(id) === entry) this.expected.delete(id);
      await this.d.credentials?.release(id, entry.migrationId).catch(() => undefined);
    }
  }
}

/**
 * An incoming domain is here for good once it runs, or once it is suspended: a guest its
 * administrator paused migrates with VIR_MIGRATE_PAUSED and stays paused (reason user) on arrival
 * (measured on the lab: `paused (user)`), where a migration still copying is paused (reason migration).
 */
function arrivedState(state: DomainState): boolean {
  return state === 'running' || state === 'suspended';
}

function fmt(r: Resources): string {
  return `${r.cores} cores, ${r.memoryMiB} MiB, ${r.diskGiB} GiB`;
}
