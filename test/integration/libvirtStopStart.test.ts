/**
 * Stop, start and cold moves of a real guest (issue 18 part 5): the libvirt driver against a lab
 * libvirtd (scripts/libvirt-lab.sh, in /tmp/ferry-lab-ss on 127.0.80.101-102 only) and the lab's small
 * Linux guest, whose /init prints `ferry-tick N` on its serial port from 1 at every boot. A forced stop
 * powers it off at once, a graceful one (the guest has no ACPI daemon) at the driver's deadline; both
 * keep the domain defined and its root disk; create boots it again from them; define alone leaves a
 * domain shut off; a reboot it ignores is followed by the NC's reset (virDomainReset) after the bound. virsh is the independent witness. If the lab cannot start the suite fails.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainSpec } from '../../nc/hypervisor/driver.js';
import { LibvirtDriver } from '../../nc/hypervisor/libvirt/libvirtDriver.js';
import { RebootWatcher } from '../../nc/rebootWatcher.js';
import { systemClock } from '../../shared/clock.js';
import { silentLogger } from '../../shared/log.js';
import { buildGuest, labLayout, startLab, stopLab, virsh } from '../helpers/libvirtLab.js';

const lab = labLayout('/tmp/ferry-lab-ss', { addrs: ['127.0.80.101', '127.0.80.102'], port: 18009 });
const [H1] = lab.hosts;
const storage = join(lab.dir, 'storage');
const ids: string[] = [];
let guest: { kernel: string; initrd: string };
let d: LibvirtDriver;

function spec(id: string): DomainSpec {
  ids.push(id);
  return { id, resources: { cores: 1, memoryMiB: 128, diskGiB: 1 }, imageId: 'emi-linux' };
}

/** How many times the guest's /init started counting (a boot each), and its last tick. */
function boots(id: string): { boots: number; ticks: number } {
  const log = join(storage, `${id}.serial`);
  if (!existsSync(log)) return { boots: 0, ticks: 0 };
  const ticks = readFileSync(log, 'latin1').split('\n').filter((l) => l.startsWith('ferry-tick'));
  return { boots: ticks.filter((l) => l.startsWith('ferry-tick 1 ')).length, ticks: ticks.length };
}

beforeAll(async () => {
  await startLab(lab);
  guest = await buildGuest(lab);
  rmSync(storage, { recursive: true, force: true });
  mkdirSync(join(storage, 'disks'), { recursive: true });
  d = new LibvirtDriver({
    uri: H1.uri, host: '127.0.80.101', guestMemoryCapMiB: 128, guestVcpuCap: 1, directKernel: guest,
    diskDir: join(storage, 'disks'), serialLogDir: storage, shutdownTimeoutMs: 3_000,
  });
}, 600_000);

afterAll(async () => {
  for (const id of ids) await d.destroy(id).catch(() => undefined);
  await d.close();
  await stopLab(lab);
}, 120_000);

describe('libvirt driver: stop and start a real guest', () => {
  it('a forced stop powers it off at once and keeps it defined; create boots it again on its disk; a graceful stop ends at the deadline', async () => {
    const s = spec('i-5a000001');
    await d.create(s);
    await expect.poll(() => boots(s.id).ticks, { timeout: 120_000, interval: 250 }).toBeGreaterThan(3);
    const disk = join(storage, 'disks', `${s.id}.img`);
    expect(statSync(disk).size).toBeGreaterThan(0);

    expect((await d.shutdown(s.id, { force: true })).state).toBe('shutoff');
    expect(await virsh(H1.uri, 'domstate', s.id)).toBe('shut off');
    expect(await virsh(H1.uri, 'list', '--all', '--name')).toContain(s.id);
    expect(existsSync(disk)).toBe(true);

    expect((await d.create(s)).state).toBe('running');
    await expect.poll(() => boots(s.id).boots, { timeout: 120_000, interval: 250 }).toBe(2);

    // The lab guest runs no ACPI daemon: it ignores the request, and the deadline powers it off.
    await expect.poll(() => boots(s.id).ticks, { timeout: 120_000, interval: 250 }).toBeGreaterThan(10);
    const t0 = performance.now();
    expect((await d.shutdown(s.id, { force: false })).state).toBe('shutoff');
    const gracefulMs = performance.now() - t0;
    console.log(`graceful stop of a guest without ACPI handling: ${gracefulMs.toFixed(0)} ms (deadline 3000 ms)`);
    expect(await virsh(H1.uri, 'domstate', s.id)).toBe('shut off');
    expect((await d.shutdown(s.id, { force: false })).state).toBe('shutoff');
  }, 400_000);

  it('reboot of the guest, which ignores ACPI: the NC\'s fallback resets it after its bound (virDomainReset); libvirt reports the reboot', async () => {
    const s = spec('i-5a000003');
    await d.create(s);
    await expect.poll(() => boots(s.id).ticks, { timeout: 120_000, interval: 250 }).toBeGreaterThan(3);
    const events: string[] = [];
    const off = d.onEvent((e) => { if (e.kind === 'rebooted') events.push(e.id); });
    const outcomes: string[] = [];
    const watcher = new RebootWatcher({
      clock: systemClock, logger: silentLogger(), driver: d, timeoutMs: 3_000, post: (task) => task(),
      stillRunning: () => true, reset: async (id) => { await d.reset(id); }, rebooted: (id, _at, how) => { outcomes.push(`${id} ${how}`); return Promise.resolve(); },
    });
    watcher.start();
    try {
      watcher.watch(s.id);
      expect((await d.reboot(s.id)).state).toBe('running');
      // The guest has no ACPI daemon: only the reset after the bound reboots it, and libvirt says so.
      await expect.poll(() => outcomes, { timeout: 60_000, interval: 100 }).toEqual([`${s.id} reset`]);
      await expect.poll(() => boots(s.id).boots, { timeout: 120_000, interval: 250 }).toBe(2);
      await expect.poll(() => events, { timeout: 30_000, interval: 100 }).toContain(s.id);
      expect(await virsh(H1.uri, 'domstate', s.id)).toBe('running');
    } finally {
      watcher.stop();
      off();
    }
  }, 300_000);

  it('define (a cold move) leaves the domain defined and shut off, with its disk; create then boots it', async () => {
    const s = spec('i-5a000002');
    expect((await d.define(s)).state).toBe('shutoff');
    expect(await virsh(H1.uri, 'domstate', s.id)).toBe('shut off');
    expect(existsSync(join(storage, 'disks', `${s.id}.img`))).toBe(true);
    expect(boots(s.id).ticks).toBe(0);
    expect((await d.create(s)).state).toBe('running');
    await expect.poll(() => boots(s.id).ticks, { timeout: 120_000, interval: 250 }).toBeGreaterThan(0);
  }, 300_000);
});
