/**
 * HypervisorDriver straight over a SimHost in the same process: for unit tests of the NC and for
 * the whole-cloud simulator. It validates input like the daemon's edge does, so bad input gets the
 * same coded errors in both.
 */
import type {
  DomainInfo, DomainSpec, HostInfo, HypervisorDriver, HypervisorEvent, MigrationCredential, MigrationStats, MigrationTarget,
  VolumeAttachmentSpec,
} from '../driver.js';
import { HypervisorErrors } from '../errors.js';
import { describeIssues, IncomingSpecSchema, MigrateRequest, PrepareIncomingRequest, VolumeAttachmentSchema } from './protocol.js';
import type { SimHost } from './simHost.js';
import type { z } from 'zod';

export class InProcessDriver implements HypervisorDriver {
  constructor(private readonly host: SimHost) {}

  async connect(): Promise<HostInfo> {
    return this.host.info();
  }

  async list(): Promise<DomainInfo[]> {
    return this.host.list();
  }

  async info(id: string): Promise<DomainInfo | undefined> {
    return this.host.get(id);
  }

  async create(spec: DomainSpec): Promise<DomainInfo> {
    return this.host.create(check(IncomingSpecSchema, spec));
  }

  async define(spec: DomainSpec): Promise<DomainInfo> {
    return this.host.define(check(IncomingSpecSchema, spec));
  }

  async destroy(id: string): Promise<void> {
    await this.host.destroy(id);
  }

  async attachVolume(id: string, volume: VolumeAttachmentSpec): Promise<DomainInfo> {
    return this.host.attachVolume(id, check(VolumeAttachmentSchema, volume));
  }

  async detachVolume(id: string, volumeId: string): Promise<DomainInfo> {
    return this.host.detachVolume(id, volumeId);
  }

  async pause(id: string): Promise<DomainInfo> {
    return this.host.pause(id);
  }

  async resume(id: string): Promise<DomainInfo> {
    return this.host.resume(id);
  }

  async shutdown(id: string, opts: { readonly force: boolean }): Promise<DomainInfo> {
    return this.host.shutdown(id, { force: opts.force });
  }

  async reset(id: string): Promise<DomainInfo> {
    return this.host.reset(id);
  }

  async reboot(id: string): Promise<DomainInfo> {
    return this.host.reboot(id);
  }

  async prepareIncoming(spec: DomainSpec, migrationId: string, credential?: MigrationCredential): Promise<void> {
    const req = check(PrepareIncomingRequest, { spec, migrationId, ...(credential ? { credential } : {}) });
    await this.host.prepareIncoming(req.spec, req.migrationId, req.credential);
  }

  async abortIncoming(id: string, migrationId: string): Promise<void> {
    await this.host.abortIncoming(id, migrationId);
  }

  /** In process, destinationUri names a host registered on the InProcessNetwork (any scheme). */
  async migrateOut(id: string, target: MigrationTarget): Promise<MigrationStats> {
    check(MigrateRequest, { ...target, destinationUri: 'http://127.0.0.1/' });
    return this.host.migrateOut(id, target);
  }

  async abortMigration(id: string, migrationId: string): Promise<void> {
    await this.host.abortMigration(id, migrationId);
  }

  onEvent(listener: (e: HypervisorEvent) => void): () => void {
    return this.host.onEvent(listener);
  }

  /** The host outlives its drivers, as libvirtd outlives a connection. */
  async close(): Promise<void> {}
}

function check<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw HypervisorErrors.make('HypervisorBadRequest', { detail: describeIssues(parsed.error) });
  return parsed.data;
}
