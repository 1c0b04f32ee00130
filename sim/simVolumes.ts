/**
 * The simulated volume storage (issue 18): one object stands for the shared volume directory every
 * host mounts. The CLC sees it as its `VolumeBackend` (create, remove, the storage fence), each NC as
 * its `VolumeConnector` (a migration's destination connects the instance's volumes at prepare). It
 * keeps no data, only what the volume invariant (sim/volumeInvariants.ts) asks of storage: which
 * volumes exist, which were removed, and which hosts were fenced from which volume and not connected
 * to it again since.
 */
import type { VolumeBackend } from '../clc/core/volumeBackend.js';
import { NcErrors } from '../nc/errors.js';
import type { VolumeConnector } from '../nc/volumeConnector.js';
import type { VolumeAttachmentSpec } from '../shared/protocol/volumes.js';

export class SimVolumeStorage {
  /** Volume ids whose storage exists. */
  readonly existing = new Set<string>();
  /** Volume ids whose storage DeleteVolume removed (a running domain holding one lost its disk). */
  readonly removed = new Set<string>();
  /** `${volumeId} ${host}`: the storage fenced the host from the volume, and nothing connected it again since. */
  readonly fenced = new Set<string>();

  constructor(private readonly dir: string, private readonly trace: (line: string) => void) {}

  path(volumeId: string): string {
    return `${this.dir}/volumes/${volumeId}.img`;
  }

  /** The CLC's side: what clc/state/fileVolumeBackend.ts does on a real directory. */
  readonly backend: VolumeBackend = Object.freeze({
    kind: 'sim',
    create: (volumeId: string): Promise<string> => {
      this.existing.add(volumeId);
      this.removed.delete(volumeId);
      return Promise.resolve(this.path(volumeId));
    },
    remove: (volumeId: string): Promise<void> => {
      if (this.existing.delete(volumeId)) {
        this.removed.add(volumeId);
        this.trace(`storage removes ${volumeId}`);
      }
      return Promise.resolve();
    },
    fenceHost: (volumeId: string, _locator: string, host: string): Promise<string> => {
      this.fenced.add(`${volumeId} ${host}`);
      this.trace(`storage fences ${host} from ${volumeId}`);
      return Promise.resolve(`sim storage: ${host} fenced from ${volumeId}`);
    },
  });

  /** Whether the storage fenced `host` from `volumeId` and has not connected it again since. */
  isFenced(volumeId: string, host: string): boolean {
    return this.fenced.has(`${volumeId} ${host}`);
  }

  /** An attach the CC routed to `host` (ncAttachVolume delivered there) grants it the volume again. */
  granted(volumeId: string, host: string): void {
    this.fenced.delete(`${volumeId} ${host}`);
  }

  /** One host's NC side: a volume that no longer exists cannot be connected (VolumeUnavailable), as a missing file. */
  connector(host: string): VolumeConnector {
    return {
      connect: (instanceId: string, volumes: readonly VolumeAttachmentSpec[]): Promise<void> => {
        for (const v of volumes) {
          if (!this.existing.has(v.volumeId)) {
            return Promise.reject(NcErrors.make('VolumeUnavailable', { host, instanceId, volumeId: v.volumeId, detail: `${v.path}: ENOENT` }));
          }
        }
        for (const v of volumes) this.granted(v.volumeId, host);
        return Promise.resolve();
      },
      disconnect: (): Promise<void> => Promise.resolve(),
    };
  }
}
