/** A guest's disk on the shared disk directory: made once, sparse and private; found again by a restart elsewhere. */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { diskPathOf, ensureDisk } from '../../../../nc/hypervisor/libvirt/guestDisk.js';

const spec = { id: 'i-0000000d', imageId: 'emi-0a1b2c3d', resources: { cores: 1, memoryMiB: 256, diskGiB: 5 } };
let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ferry-disks-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

describe('ensureDisk', () => {
  it('makes a sparse raw file of the VM type\'s size, owner-only', async () => {
    const path = await ensureDisk(dir, spec);
    expect(path).toBe(diskPathOf(dir, spec.id));
    const s = await stat(path);
    expect(s.size).toBe(5 * 1024 ** 3);
    expect(s.blocks * 512).toBeLessThan(1024 * 1024);
    expect(s.mode & 0o777).toBe(0o600);
  });

  it('finds an existing disk and leaves its data alone (a restart elsewhere boots on it)', async () => {
    await writeFile(diskPathOf(dir, spec.id), 'the guest wrote this');
    await expect(ensureDisk(dir, spec)).resolves.toBe(diskPathOf(dir, spec.id));
    expect((await stat(diskPathOf(dir, spec.id))).size).toBe('the guest wrote this'.length);
  });

  it('two hosts racing make it once', async () => {
    const paths = await Promise.all([ensureDisk(dir, spec), ensureDisk(dir, spec)]);
    expect(new Set(paths).size).toBe(1);
  });

  it('a directory it cannot write is a coded error', async () => {
    await expect(ensureDisk(join(dir, 'missing'), spec)).rejects.toMatchObject({ code: 'HypervisorInternalError' });
  });
});
