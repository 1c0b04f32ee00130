/**
 * Volumes as real disks of real guests (issue 18): the libvirt driver against a lab libvirtd
 * (scripts/libvirt-lab.sh, on 127.0.75.0/24 only) and the lab's small Linux guest. A sparse file
 * attached to a running guest becomes its virtio disk vdb with the volume id as serial, an NC
 * restart (a new driver) re-adopts it from the domain's XML, and a detach is acknowledged by the
 * guest's kernel (ACPI eject) before the driver answers. virsh is the independent witness.
 * If the lab cannot start on this machine the suite fails with the script's output.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainSpec, VolumeAttachmentSpec } from '../../nc/hypervisor/driver.js';
import { LibvirtDriver, type LibvirtDriverOptions } from '../../nc/hypervisor/libvirt/libvirtDriver.js';
import { buildGuest, labLayout, startLab, stopLab, virsh } from '../helpers/libvirtLab.js';
import { codeOf } from '../helpers/codeOf.js';

const lab = labLayout('/tmp/ferry-lab-vol', { addrs: ['127.0.75.1', '127.0.75.2'], port: 17709 });
const [H1] = lab.hosts;
const volumesDir = join(lab.dir, 'storage', 'volumes');
const drivers: LibvirtDriver[] = [];
const ids: string[] = [];
let guest: { kernel: string; initrd: string };

function driver(extra: Partial<LibvirtDriverOptions> = {}): LibvirtDriver {
  const d = new LibvirtDriver({
    uri: H1.uri, host: '127.0.75.1', guestMemoryCapMiB: 128, guestVcpuCap: 1, directKernel: guest,
    diskDir: join(lab.dir, 'storage', 'disks'), serialLogDir: join(lab.dir, 'storage'), ...extra,
  });
  drivers.push(d);
  return d;
}

function spec(id: string): DomainSpec {
  ids.push(id);
  return { id, resources: { cores: 1, memoryMiB: 128, diskGiB: 1 }, imageId: 'emi-linux' };
}

/** A sparse raw volume file, as the file-backed storage makes it. */
function volume(volumeId: string, device: string): VolumeAttachmentSpec {
  const path = join(volumesDir, `${volumeId}.img`);
  writeFileSync(path, '');
  truncateSync(path, 64 * 1024 * 1024);
  return { volumeId, device, path };
}

/** The guest's serial log: its /init prints ticks once its kernel booted (and so handles ACPI hotplug). */
function booted(id: string): boolean {
  const log = join(lab.dir, 'storage', `${id}.serial`);
  return existsSync(log) && readFileSync(log, 'latin1').split('\n').filter((l) => l.startsWith('ferry-tick')).length > 3;
}

/** `virsh domblklist` as target → source. */
async function blockDevices(id: string, ...flags: string[]): Promise<Record<string, string>> {
  const out = await virsh(H1.uri, 'domblklist', id, ...flags);
  return Object.fromEntries(out.split('\n').map((l) => l.trim().split(/\s+/)).filter((p) => p.length === 2).map(([t, s]) => [t as string, s as string]));
}

beforeAll(async () => {
  await startLab(lab);
  guest = await buildGuest(lab);
  rmSync(join(lab.dir, 'storage'), { recursive: true, force: true });
  mkdirSync(volumesDir, { recursive: true });
  mkdirSync(join(lab.dir, 'storage', 'disks'), { recursive: true });
}, 600_000);

afterAll(async () => {
  const d = drivers[0] ?? driver();
  for (const id of ids) await d.destroy(id).catch(() => undefined);
  for (const x of drivers) await x.close();
  await stopLab(lab);
}, 120_000);

describe('libvirt driver: volumes as disks of a real guest', () => {
  it('attaches a volume to a running guest as vdb, re-adopts it after an NC restart, and detaches it when the guest releases it', async () => {
    const d = driver();
    const s = spec('i-vol00001');
    await d.create(s);
    await expect.poll(() => booted(s.id), { timeout: 120_000, interval: 250 }).toBe(true);
    const v = volume('vol-0000a001', '/dev/vdb');

    const t0 = performance.now();
    const attached = await d.attachVolume(s.id, v);
    const attachMs = performance.now() - t0;
    expect(attached.volumes).toEqual([v]);
    expect(attached.state).toBe('running');
    expect((await blockDevices(s.id))['vdb']).toBe(v.path); // live
    expect((await blockDevices(s.id, '--inactive'))['vdb']).toBe(v.path); // and in the definition
    const live = await virsh(H1.uri, 'dumpxml', s.id);
    expect(live).toContain(`<serial>${v.volumeId}</serial>`);
    expect(live).toMatch(/<driver name='qemu' type='raw' cache='none'\/>/);
    expect(statSync(v.path).size).toBe(64 * 1024 * 1024);

    // A repeat answers as is; another volume on its device, or this one on another, is refused.
    expect((await d.attachVolume(s.id, v)).volumes).toEqual([v]);
    const other = volume('vol-0000a002', '/dev/sdb');
    expect(await codeOf(d.attachVolume(s.id, other))).toBe('VolumeConflict');
    expect(await codeOf(d.attachVolume(s.id, { ...v, device: '/dev/vdc' }))).toBe('VolumeConflict');
    expect(Object.keys(await blockDevices(s.id)).sort()).toEqual(['vda', 'vdb']);

    // An NC restart: a new driver instance reads the attachment back from libvirt.
    const restarted = driver();
    expect((await restarted.list()).find((x) => x.id === s.id)?.volumes).toEqual([v]);
    expect((await restarted.info(s.id))?.volumes).toEqual([v]);

    const t1 = performance.now();
    const detached = await restarted.detachVolume(s.id, v.volumeId);
    console.log(`volume on a running Linux guest (TCG): attach ${attachMs.toFixed(0)} ms, detach until the guest released it ${(performance.now() - t1).toFixed(0)} ms`);
    expect(detached.volumes).toEqual([]);
    expect(await blockDevices(s.id)).not.toHaveProperty('vdb');
    expect(await blockDevices(s.id, '--inactive')).not.toHaveProperty('vdb');
    expect(await virsh(H1.uri, 'dumpxml', s.id)).not.toContain(v.volumeId);
    expect((await d.info(s.id))?.volumes).toEqual([]);
    // Detaching what is not attached is not an error.
    expect((await d.detachVolume(s.id, v.volumeId)).volumes).toEqual([]);

    // The device is free again for another volume, under an EC2-style name.
    const again = await d.attachVolume(s.id, other);
    expect(again.volumes).toEqual([other]);
    expect((await blockDevices(s.id))['vdb']).toBe(other.path);
    expect(await virsh(H1.uri, 'dumpxml', s.id)).toContain("<alias name='ua-dev-sdb'/>");
  });

  it('attaches to and detaches from a shut-off guest\'s definition; the guest boots with the volume', async () => {
    const d = driver();
    const s = spec('i-vol00002');
    await d.create(s);
    await virsh(H1.uri, 'destroy', s.id);
    await expect.poll(async () => (await d.info(s.id))?.state, { timeout: 30_000 }).toBe('shutoff');
    const v = volume('vol-0000b001', '/dev/xvdc');

    const attached = await d.attachVolume(s.id, v);
    expect(attached).toMatchObject({ state: 'shutoff', volumes: [v] });
    expect((await blockDevices(s.id, '--inactive'))['vdc']).toBe(v.path);
    expect(await codeOf(driver().attachVolume('i-vol00001', v))).toBe('VolumeConflict'); // held by this guest

    // Started again (as the NC does with create), it runs with the volume as its disk.
    const started = await d.create(s);
    expect(started).toMatchObject({ state: 'running', volumes: [v] });
    expect((await blockDevices(s.id))['vdc']).toBe(v.path);

    await virsh(H1.uri, 'destroy', s.id);
    await expect.poll(async () => (await d.info(s.id))?.state, { timeout: 30_000 }).toBe('shutoff');
    expect((await d.detachVolume(s.id, v.volumeId)).volumes).toEqual([]);
    expect(await blockDevices(s.id, '--inactive')).not.toHaveProperty('vdc');
  });

  it('answers DomainNotFound for an unknown domain', async () => {
    const d = driver();
    expect(await codeOf(d.attachVolume('i-vol0000f', volume('vol-0000c001', '/dev/vdb')))).toBe('DomainNotFound');
    expect(await codeOf(d.detachVolume('i-vol0000f', 'vol-0000c001'))).toBe('DomainNotFound');
  });
});
