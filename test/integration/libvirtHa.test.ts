/**
 * Host HA end to end on real libvirt hosts (issue 15), on 127.0.65.0/24 with mutual TLS: the real
 * CLC (HA on), CC and two NCs, each NC on a libvirt "host" of scripts/libvirt-lab.sh. A host is one
 * process group behind its own ipmi_sim BMC (UDP 16651-16652; scripts/fencing-lab.sh): its libvirtd
 * (`libvirt-lab.sh run-host`, under tini), the QEMUs libvirt starts (their own sessions, but children
 * of that tini: the BMC's power-off takes them too), ferry-heartbeat and the NC. Guests are the lab's
 * Linux guest booted by the driver (--libvirt-guest-kernel) with its root disk on the shared
 * directory (--libvirt-disk-dir), which it writes about once a second. Ferry fences with the real
 * fence_ipmilan. Cases, in this order (each leaves both hosts AVAILABLE):
 *  (c) the CC loses a host's NC (NC and ferry-heartbeat hung: SIGSTOP) while its guests keep writing
 *      their disks: DEGRADED, never fenced, the guests run on; once the NC answers, drained live.
 *  (b) only the NC dies (kill -9): DEGRADED, never fenced, the guests' QEMUs untouched; once the NC
 *      is back (restarted as a supervisor would), the owed drain moves them live.
 *  (a) the host dies (its BMC powers it off): SUSPECT → CHECKING → FENCING → FENCED, and its guests
 *      boot on the other host on their own disks exactly once, after the fence; powered on again,
 *      the obsolete copies are destroyed, never started, and EnableService returns the host, where
 *      its guest with auto-repair 'off' (never restarted elsewhere) is powered on from its own disk.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnDaemon, stopPid } from '../../scripts/daemon.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, placeOn, until } from '../helpers/cloudApi.js';
import { installFencingLab, isAlive, LAB_HA_SETTINGS, type LabBmc } from '../helpers/fencingLab.js';
import { haRecordOf, haEventsOf } from '../helpers/haRecords.js';
import { buildGuest, labLayout, prepareLab, stopLab, virsh } from '../helpers/libvirtLab.js';
import { startLibvirtHaCloud } from '../helpers/libvirtHaLab.js';

const exec = promisify(execFile);
const SUBNET = 65;
const USER = 'ferry';
const PASSWORD = 'ha-pw-65';
const BMC_PORT = 16651;
const lab = labLayout('/tmp/ferry-lab-ha/cloud', { addrs: [`127.0.${SUBNET}.1`, `127.0.${SUBNET}.2`], port: 17609 });
const GUEST = { kernel: join(lab.dir, 'guest', 'vmlinuz'), initrd: join(lab.dir, 'guest', 'initrd.img') };
const SETTINGS = {
  ...LAB_HA_SETTINGS,
  healthCheckTimeoutMs: 4000,
  // Longer than the guests' disk-write period (about a second, more under load): a sample then
  // covers at least one write of a live guest.
  activityCheckInitialDelayMs: 3000, activityCheckIntervalMs: 3000, activityCheckTimeoutMs: 5000,
  fenceTimeoutMs: 15_000,
  // powerCheckIntervalMs stays the lab's hour: the BMC's power watch would take the powered-off host
  // of case (a) straight to FENCING (correct, and tested in hostHaPowerWatch.test.ts); kept out so
  // case (a) follows the checks, as the issue asks.
};

const cloud = new TestCloud(SUBNET, 2, (baseDir) => ({
  hypervisorArgs: (host) => ['--hypervisor', 'libvirt', '--libvirt-uri', `qemu+tcp://${host}:17609/system`,
    '--libvirt-guest-memory-cap', '128', '--libvirt-guest-kernel', GUEST.kernel, '--libvirt-guest-initrd', GUEST.initrd,
    '--libvirt-disk-dir', join(baseDir, 'storage', 'disks'),
    '--libvirt-tunnel-port', '17614', '--libvirt-tunnel-local', 'host', '--libvirt-tunnel-data-ports', '17800-17899'],
  libvirtRunDir: (host) => join(lab.dir, `host${host.endsWith('.1') ? 1 : 2}`, 'run'),
  heartbeatIntervalMs: 500,
  clcArgs: ['--ha-tick-ms', '200', '--auth', 'sigv4'],
  ccArgs: ['--poll-interval-ms', '1000', '--migration-uri-template', 'qemu+tcp://{host}:17609/system'],
}));
const [H1, H2] = cloud.nodeHosts as [string, string];
const uriOf = (host: string): string => `qemu+tcp://${host}:17609/system`;
const runDirOf = (host: string): string => join(lab.dir, `host${host === H1 ? 1 : 2}`, 'run');
const bmcs = new Map<string, LabBmc>();
/** NCs restarted by a test (as a supervisor would), outside their host's process group: stopped by PID. */
const restartedNcs: number[] = [];

const q = (params: Record<string, string>): Promise<any> => adminCall(cloud, params);
const haState = (h: string): string => haRecordOf(cloud.baseDir, h)?.state ?? '?';
const transitions = (h: string): string[] => haEventsOf(cloud.baseDir, h).filter((e) => e.kind === 'transition').map((e) => e.to ?? '');
const messages = (h: string): string[] => haEventsOf(cloud.baseDir, h).map((e) => e.message);
const haSummary = (): string => cloud.nodeHosts.map((h) => `${h} ${haState(h)}: ${messages(h).slice(-4).join(' | ')}`).join('; ');
const waitHa = (what: string, ok: () => boolean, ms = 90_000): Promise<unknown> => until(`${what} (HA: ${haSummary()})`, async () => ok(), Boolean, ms);

/** Instances as DescribeInstances shows them. */
async function instances(): Promise<{ id: string; state: string; host: string }[]> {
  const r = await q({ Action: 'DescribeInstances' });
  return arr<any>(r.reservationSet?.item).flatMap((rv) => arr<any>(rv.instancesSet?.item))
    .map((i) => ({ id: String(i.instanceId), state: String(i.instanceState?.name), host: String(i.nodeHost ?? '') }));
}

/** A guest's QEMU, by libvirt's pid file in that host's private run directory. */
function qemuPid(host: string, id: string): number | undefined {
  const f = join(runDirOf(host), 'qemu', `${id}.pid`);
  return existsSync(f) ? Number(readFileSync(f, 'utf8').trim()) : undefined;
}

/** The guest wrote its disk within the last few seconds (through the host's activity link). */
function writing(host: string, id: string): boolean {
  try {
    return Date.now() - statSync(join(cloud.baseDir, 'storage', host, `${id}.disk`)).mtimeMs < 4000;
  } catch {
    return false;
  }
}

const pidIn = (host: string, name: string): number => Number(readFileSync(join(bmcs.get(host)?.dir ?? '', `${name}.pid`), 'utf8'));

async function bothAvailable(): Promise<void> {
  await waitHa('both hosts AVAILABLE', () => cloud.nodeHosts.every((h) => haState(h) === 'AVAILABLE'), 120_000);
}

/** Returns a host HA took out of service (drained, in maintenance) to service. */
async function giveBack(host: string): Promise<void> {
  await waitHa(`${host} INELIGIBLE (drained, in maintenance)`, () => haState(host) === 'INELIGIBLE');
  await q({ Action: 'EnableService', Type: 'NODE', Host: host });
  await bothAvailable();
}

/** Places `count` guests on `host` and waits until they run and write their disks there. */
async function guestsOn(host: string, count: number): Promise<string[]> {
  await bothAvailable();
  const ids = await placeOn(cloud, host, count);
  await until(`guests running on ${host}`, () => instances(), (xs) => ids.every((id) => xs.some((i) => i.id === id && i.host === host && i.state === 'running')), 90_000);
  await until(`guests writing on ${host}`, async () => ids.every((id) => writing(host, id)), Boolean, 90_000);
  await bothAvailable();
  return ids;
}

async function reasonOn(host: string, id: string): Promise<string> {
  return virsh(uriOf(host), 'domstate', '--reason', id);
}

/**
 * A DEGRADED host's owed drain, once its NC answers: its guests move to `to` by live migration
 * (never restarted), it was never fenced since transition `seen`, and it is then returned to service.
 */
async function drainedLive(host: string, to: string, ids: readonly string[], seen: number): Promise<void> {
  await waitHa(`the owed drain of ${host} done`, () => haRecordOf(cloud.baseDir, host)?.owed === null && haState(host) !== 'DEGRADED');
  for (const id of ids) {
    await until(`${id} on ${to}`, () => instances(), (xs) => xs.some((i) => i.id === id && i.host === to && i.state === 'running'), 60_000);
    expect(await reasonOn(to, id)).toBe('running (migrated)');
  }
  expect(transitions(host).slice(seen)).not.toContain('FENCING');
  await giveBack(host);
}

beforeAll(async () => {
  await installFencingLab();
  await prepareLab(lab);
  await buildGuest(lab);
  for (const [host, bmc] of await startLibvirtHaCloud(cloud, { lab, uriOf, bmcPort: BMC_PORT, user: USER, password: PASSWORD, settings: SETTINGS })) bmcs.set(host, bmc);
  await bothAvailable();
}, 900_000);

afterAll(async () => {
  for (const pid of restartedNcs) await stopPid(pid);
  await cloud.stopAll();
  for (const bmc of bmcs.values()) await bmc.stop(); // powers its host off: libvirtd, QEMUs, agents
  await stopLab(lab);
  await cloud.destroy();
}, 120_000);

describe('host HA on real libvirt hosts (ipmi_sim BMCs, fence_ipmilan, real tiers)', () => {
  it('(c) the CC loses the NC while its guests keep writing their disks: DEGRADED, never fenced; drained live once the NC answers', async () => {
    const ids = await guestsOn(H1, 1);
    const qemu = ids.map((id) => qemuPid(H1, id));
    const seen = transitions(H1).length;
    const said = messages(H1).length;
    // The host's agents hang (NC and ferry-heartbeat); libvirtd and the guests run on.
    const hung = [pidIn(H1, 'nc'), pidIn(H1, 'heartbeat')];
    for (const pid of hung) process.kill(pid, 'SIGSTOP');
    try {
      await waitHa(`${H1} DEGRADED`, () => haState(H1) === 'DEGRADED');
      expect(transitions(H1).slice(seen)).not.toContain('FENCING');
      // What kept it from a fence: the guests' own disk writes (its heartbeat was hung too).
      expect(messages(H1).slice(said).some((m) => ids.some((id) => m.includes(`${id}.disk`)))).toBe(true);
      for (const [k, id] of ids.entries()) {
        expect(await isAlive(qemu[k] ?? -1)).toBe(true);
        expect(writing(H1, id)).toBe(true);
      }
    } finally {
      for (const pid of hung) process.kill(pid, 'SIGCONT');
    }
    // The NC answers again: the host that lost control while its guests ran is drained, live.
    await drainedLive(H1, H2, ids, seen);
  }, 600_000);

  it('(b) only the NC dies: DEGRADED, never fenced, its guests\' QEMUs untouched; once the NC is back they move live', async () => {
    const ids = (await instances()).filter((i) => i.host === H2 && i.state === 'running').map((i) => i.id);
    expect(ids.length).toBeGreaterThan(0);
    const qemu = ids.map((id) => qemuPid(H2, id));
    const seen = transitions(H2).length;
    process.kill(pidIn(H2, 'nc'), 'SIGKILL');
    await waitHa(`${H2} DEGRADED`, () => haState(H2) === 'DEGRADED');
    expect(transitions(H2).slice(seen)).not.toContain('FENCING');
    for (const [k, id] of ids.entries()) {
      expect(await isAlive(qemu[k] ?? -1)).toBe(true);
      expect(await reasonOn(H2, id)).toMatch(/^running/);
    }
    // A supervisor restarts the NC (outside the BMC's group: stopped by PID after the file).
    const spec = cloud.spec(`nc-${H2}`);
    const nc = await spawnDaemon(spec, { root: ROOT, logFile: join(cloud.baseDir, 'logs', `nc-restarted-${H2}.log`) });
    restartedNcs.push(nc.pid);
    await drainedLive(H2, H1, ids, seen);
  }, 600_000);

  it('(a) the host dies: fenced through its BMC, its guests boot on the other host on their own disks exactly once, after the fence; its auto-repair-off guest runs again on it once returned', async () => {
    const ids = (await instances()).filter((i) => i.host === H1 && i.state === 'running').map((i) => i.id);
    expect(ids.length).toBeGreaterThan(0);
    // One more guest on H1 whose auto-repair policy keeps it there: never restarted elsewhere.
    const [kept] = await guestsOn(H1, 1) as [string];
    await q({ Action: 'ConfigureHAForInstance', InstanceId: kept, AutoRepair: 'off' });
    const qemu = [...ids, kept].map((id) => qemuPid(H1, id));
    const seen = transitions(H1).length;
    // Out of band, as a crash would: the BMC powers the whole host off (libvirtd, QEMUs, agents).
    await exec('ipmitool', ['-I', 'lanplus', '-C', '3', '-H', H1, '-p', String(BMC_PORT), '-U', USER, '-P', PASSWORD, 'chassis', 'power', 'off'], { timeout: 30_000 });
    for (const pid of qemu) expect(await isAlive(pid ?? -1)).toBe(false);
    await waitHa(`${H1} FENCED`, () => haState(H1) === 'FENCED', 120_000);
    const path = transitions(H1).slice(seen);
    expect(path.indexOf('SUSPECT')).toBeGreaterThanOrEqual(0);
    expect(path.indexOf('SUSPECT')).toBeLessThan(path.indexOf('CHECKING'));
    expect(path.indexOf('CHECKING')).toBeLessThan(path.indexOf('FENCING'));
    expect(path.indexOf('FENCING')).toBeLessThan(path.indexOf('FENCED'));
    const fencedAt = haEventsOf(cloud.baseDir, H1).filter((e) => e.kind === 'transition' && e.to === 'FENCED').at(-1)?.at ?? Infinity;
    for (const id of ids) {
      await until(`${id} restarted on ${H2}`, () => instances(), (xs) => xs.some((i) => i.id === id && i.host === H2 && i.state === 'running'), 90_000);
      // Booted anew (not migrated), after the fence, on its own disk on the shared directory.
      expect(await reasonOn(H2, id)).toBe('running (booted)');
      const startedAt = Number(/started-at=["'](\d+)["']/.exec(await virsh(uriOf(H2), 'dumpxml', id))?.[1]);
      expect(startedAt).toBeGreaterThanOrEqual(fencedAt);
      expect(await virsh(uriOf(H2), 'domblklist', id)).toContain(join(cloud.baseDir, 'storage', 'disks', `${id}.img`));
      await until(`${id} writes its disk on ${H2}`, async () => writing(H2, id), Boolean, 90_000);
    }
    // Powered on again: its libvirtd still holds the old definitions. They are destroyed, never
    // started, before an operator may return the host; it stays FENCED meanwhile.
    await exec('ipmitool', ['-I', 'lanplus', '-C', '3', '-H', H1, '-p', String(BMC_PORT), '-U', USER, '-P', PASSWORD, 'chassis', 'power', 'on'], { timeout: 30_000 });
    await until('obsolete copies destroyed', async () => cloud.log('clc').includes('obsolete copies on a fenced host that came back destroyed'), Boolean, 120_000);
    expect(haState(H1)).toBe('FENCED');
    const left = await virsh(uriOf(H1), 'list', '--all', '--name');
    for (const id of ids) expect(left).not.toContain(id);
    for (const id of ids) expect(await reasonOn(H2, id)).toBe('running (booted)');
    // The kept guest is still defined on H1, shut off by the power cycle; nothing starts behind a fence.
    expect(left).toContain(kept);
    expect(await reasonOn(H1, kept)).toMatch(/^shut off/);
    expect(await virsh(uriOf(H2), 'list', '--all', '--name')).not.toContain(kept);
    const said = messages(H1).length;
    await q({ Action: 'EnableService', Type: 'NODE', Host: H1 });
    // Returned to service: its own guest is powered on there, from its own disk, and its QEMU writes it.
    await waitHa(`power-on of ${kept} on ${H1} done`, () => messages(H1).slice(said).some((m) => m.startsWith(`power-on of its own instances of ${H1}, attempt`) && m.includes(`: done (1 powered on (${kept}))`)), 120_000);
    await until(`${kept} running on ${H1}`, () => virsh(uriOf(H1), 'list', '--name'), (names) => names.split('\n').includes(kept), 60_000);
    expect(await reasonOn(H1, kept)).toBe('running (booted)');
    expect(await virsh(uriOf(H1), 'domblklist', kept)).toContain(join(cloud.baseDir, 'storage', 'disks', `${kept}.img`));
    const newQemu = qemuPid(H1, kept) ?? -1;
    expect(await isAlive(newQemu)).toBe(true);
    await until(`${kept} writes its disk on ${H1}`, async () => writing(H1, kept), Boolean, 90_000);
    await until(`${kept} running on ${H1} for the CLC`, () => instances(), (xs) => xs.filter((i) => i.id === kept).length === 1 && xs.some((i) => i.id === kept && i.host === H1 && i.state === 'running'), 60_000);
    await bothAvailable();
    // Exactly once: each guest runs on one host only, the kept one on H1 and never defined on H2.
    const running = [...(await virsh(uriOf(H1), 'list', '--name')).split('\n'), ...(await virsh(uriOf(H2), 'list', '--name')).split('\n')];
    for (const id of [...ids, kept]) expect(running.filter((n) => n === id)).toHaveLength(1);
    expect((await virsh(uriOf(H1), 'list', '--name')).split('\n')).toContain(kept);
    expect(await virsh(uriOf(H2), 'list', '--all', '--name')).not.toContain(kept);
  }, 600_000);
});
