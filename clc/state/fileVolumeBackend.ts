/**
 * The embedded volume backend (issue 18): one sparse file per volume,
 * `<storageDir>/volumes/<vol-id>.img`, on the storage directory every host of the cloud mounts
 * (the demo's and the tests' `<baseDir>/storage`). A raw file: the simulated hypervisor records it,
 * libvirt would give it to the guest as a raw disk. Failures leave as the admin registry's codes.
 */
import { constants } from 'node:fs';
import { mkdir, open, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ClcErrors } from '../core/errors.js';
import type { VolumeBackend } from '../core/volumeBackend.js';

const GiB = 1024 * 1024 * 1024;

export function volumeFilePath(storageDir: string, volumeId: string): string {
  return join(storageDir, 'volumes', `${volumeId}.img`);
}

function storageError(op: string, volumeId: string, e: unknown): Error {
  const err = e as NodeJS.ErrnoException;
  return ClcErrors.make('ServiceUnavailable', {
    delivered: 'no', detail: `the volume storage could not ${op} ${volumeId}: ${err.code ?? ''} ${err.message ?? String(e)}`.trim(),
  });
}

export function fileVolumeBackend(storageDir: string): VolumeBackend {
  return Object.freeze({
    kind: 'file',
    async create(volumeId: string, sizeGiB: number): Promise<string> {
      const path = volumeFilePath(storageDir, volumeId);
      try {
        await mkdir(join(storageDir, 'volumes'), { recursive: true, mode: 0o750 });
        const existing = await stat(path).catch(() => undefined);
        if (existing?.size === sizeGiB * GiB) return path;
        // Sparse: truncate sets the length without writing blocks. Mode 660: the hypervisors' group reads and writes it.
        const fh = await open(path, constants.O_CREAT | constants.O_WRONLY, 0o660);
        try {
          await fh.truncate(sizeGiB * GiB);
          await fh.sync();
        } finally {
          await fh.close();
        }
        return path;
      } catch (e) {
        throw storageError('create', volumeId, e);
      }
    },
    // A file on the shared directory has no per-host grant to revoke: the host's power fence (host HA
    // fences before it restarts anything) is what stopped its writers, QEMU's lock went with them.
    fenceHost(_volumeId: string, _locator: string, host: string): Promise<string> {
      return Promise.resolve(`file volume: no per-host access to revoke; the power fence of ${host} stopped its writers`);
    },
    async remove(volumeId: string): Promise<void> {
      try {
        await rm(volumeFilePath(storageDir, volumeId), { force: true });
      } catch (e) {
        throw storageError('remove', volumeId, e);
      }
    },
  });
}
