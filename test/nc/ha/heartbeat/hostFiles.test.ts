/** The heartbeat's real probe: libvirt status files in a directory, checked against /proc. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { libvirtStatusProbe, processAlive } from '../../../../nc/ha/heartbeat/hostFiles.js';

const status = (name: string, pid: number, disk: string): string =>
  `<domstatus state='running' pid='${pid}'><domain type='qemu'><name>${name}</name><devices><disk type='file'><source file='${disk}'/></disk></devices></domain></domstatus>`;

/** A pid no process has: above the kernel's pid_max ceiling (2^22). */
const NO_SUCH_PID = 4_194_304 + 17;

describe('libvirtStatusProbe', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('lists the domains whose QEMU lives, and sees a status file change, appear and go', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-probe-'));
    const qemu = join(dir, 'qemu');
    await mkdir(qemu);
    await writeFile(join(qemu, 'i-1.xml'), status('i-1', process.pid, '/s/a.img'));
    await writeFile(join(qemu, 'i-2.xml'), status('i-2', NO_SUCH_PID, '/s/b.img'));
    await writeFile(join(qemu, 'i-1.pid'), String(process.pid)); // not a status file
    const probe = libvirtStatusProbe(dir);
    expect(await probe.runningDomains()).toEqual([{ name: 'i-1', pid: process.pid, disks: ['/s/a.img'] }]);
    await writeFile(join(qemu, 'i-1.xml'), status('i-1', process.pid, '/s/a-longer-name.img')); // e.g. a disk hot-plugged
    expect(await probe.runningDomains()).toEqual([{ name: 'i-1', pid: process.pid, disks: ['/s/a-longer-name.img'] }]);
    await rm(join(qemu, 'i-1.xml'));
    expect(await probe.runningDomains()).toEqual([]);
  });

  it('processAlive: this process lives, a pid above pid_max does not', async () => {
    expect(await processAlive(process.pid)).toBe(true);
    expect(await processAlive(NO_SUCH_PID)).toBe(false);
  });
});
