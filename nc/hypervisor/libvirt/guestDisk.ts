/**
 * A guest's root disk on the cluster's shared disk directory (--libvirt-disk-dir): `<dir>/<id>.img`,
 * a sparse raw file of the VM type's size. Made at the guest's first start (exclusively: two hosts
 * racing make it once) and found again by a restart elsewhere, which must boot on the same data.
 * Never removed here: whether a disk is garbage is the storage layer's call (issue 18's volumes),
 * and a fenced host's obsolete copy must not take the disk of the copy that replaced it.
 */
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DomainSpec } from '../driver.js';
import { HypervisorErrors } from '../errors.js';

const GiB = 1024 ** 3;

export function diskPathOf(dir: string, id: string): string {
  return join(dir, `${id}.img`);
}

/** The guest's disk path, made (sparse, 0600) when it does not exist yet. */
export async function ensureDisk(dir: string, spec: DomainSpec): Promise<string> {
  const path = diskPathOf(dir, spec.id);
  try {
    const f = await open(path, 'wx', 0o600);
    try {
      await f.truncate(Math.max(1, spec.resources.diskGiB) * GiB);
    } catch (e) {
      // Not a disk of the right size: gone, so a retry makes it again rather than finding it.
      await rm(path, { force: true });
      throw e;
    } finally {
      await f.close();
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return path;
    throw HypervisorErrors.make('HypervisorInternalError', { detail: `cannot make the disk ${path} of domain ${spec.id}: ${(e as Error).message}` });
  }
  return path;
}
