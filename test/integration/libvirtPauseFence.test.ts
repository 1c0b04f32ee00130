/**
 * Issue 18 on real libvirt hosts (parts 6 and 4), on 127.0.85.0/24 with mutual TLS: the real CLC (HA
 * on), CC and two NCs, each NC on a libvirt "host" of scripts/libvirt-lab.sh (libvirtd on the NC's
 * address at port 19509, tunnels on 19514, data ports 19520-19579). As in libvirtHa.test.ts a host is
 * one process group behind its own ipmi_sim BMC (UDP 19590-19591; scripts/fencing-lab.sh): its
 * libvirtd under tini (so the QEMUs it starts go with a power-off), ferry-heartbeat and the NC. Guests
 * are the lab's Linux guest, root disk on the shared directory: it writes `ferry-tick N` into the
 * disk's first block every fifth tick, and into block i of a volume whose first bytes are
 * `ferry-vol-pattern` the record `ferry-vol i` at every tick (scripts/libvirt-lab.sh, GUEST_INIT).
 *  - Pause: PauseInstances suspends the domain (virsh: paused by the user), its disk writes stop while
 *    another guest's go on, DescribeInstances shows it paused; unpaused it writes again; paused and
 *    live-migrated by MigrateInstances it arrives paused on the other host (virsh), stays frozen
 *    there, and UnpauseInstances makes it write again there.
 *  - Fencing with a volume: an HA-protected guest writes a volume attached by AttachVolume; its host
 *    is powered off by its BMC; HA fences it (fence_ipmilan) and the volume from it before the guest
 *    restarts on the other host; the new copy has the volume attached (virsh, DescribeVolumes) and
 *    writes it again (it writes only after reading the pattern back), every record written before
 *    the crash is intact; powered on and returned to service, the fenced host does not get the
 *    volume back: its obsolete copy is destroyed, never started, and no domain there holds the file.
 * virsh, the disk and volume files and the CLC's clc.json are the witnesses.
 */
import { execFile } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, describeMigration, placeOn, until } from '../helpers/cloudApi.js';
import { installFencingLab, isAlive, LAB_HA_SETTINGS, type LabBmc } from '../helpers/fencingLab.js';
import { haEventsOf, haRecordOf } from '../helpers/haRecords.js';
import { buildGuest, labLayout, prepareLab, stopLab, virsh } from '../helpers/libvirtLab.js';
import { startLibvirtHaCloud } from '../helpers/libvirtHaLab.js';

const exec = promisify(execFile);
const SUBNET = 85;
const LIBVIRT_PORT = 19509;
const BMC_PORT = 19590;
const USER = 'ferry';
const PASSWORD = 'pf-pw-85';
const lab = labLayout('/tmp/ferry-lab-pausefence', { addrs: [`127.0.${SUBNET}.1`, `127.0.${SUBNET}.2`], port: LIBVIRT_PORT });
const GUEST = { kernel: join(lab.dir, 'guest', 'vmlinuz'), initrd: join(lab.dir, 'guest', 'initrd.img') };
const SETTINGS = {
  ...LAB_HA_SETTINGS,
  healthCheckTimeoutMs: 4000,
  // Longer than the guests' disk-write period (about a second, more under load).
  activityCheckInitialDelayMs: 3000, activityCheckIntervalMs: 3000, activityCheckTimeoutMs: 5000,
  fenceTimeoutMs: 15_000,
  // powerCheckIntervalMs stays the lab's hour: the dead host is found by the checks, as in
  // libvirtHa.test.ts case (a).
};

const cloud = new TestCloud(SUBNET, 2, (baseDir) => ({
  hypervisorArgs: (host) => ['--hypervisor', 'libvirt', '--libvirt-uri', `qemu+tcp://${host}:${LIBVIRT_PORT}/system`,
    '--libvirt-guest-memory-cap', '128', '--libvirt-guest-kernel', GUEST.kernel, '--libvirt-guest-initrd', GUEST.initrd,
    '--libvirt-disk-dir', join(baseDir, 'storage', 'disks'),
    '--libvirt-tunnel-port', '19514', '--libvirt-tunnel-local', 'host', '--libvirt-tunnel-data-ports', '19520-19579'],
  libvirtRunDir: (host) => join(lab.dir, `host${host.endsWith('.1') ? 1 : 2}`, 'run'),
  heartbeatIntervalMs: 500,
  clcArgs: ['--ha-tick-ms', '200', '--auth', 'sigv4'],
  ccArgs: ['--poll-interval-ms', '1000', '--migration-uri-template', `qemu+tcp://{host}:${LIBVIRT_PORT}/system`],
}));
const [H1, H2] = cloud.nodeHosts as [string, string];
const uriOf = (host: string): string => `qemu+tcp://${host}:${LIBVIRT_PORT}/system`;
const runDirOf = (host: string): string => join(lab.dir, `host${host === H1 ? 1 : 2}`, 'run');
const bmcs = new Map<string, LabBmc>();

const q = (params: Record<string, string>): Promise<any> => adminCall(cloud, params);
const haState = (h: string): string => haRecordOf(cloud.baseDir, h)?.state ?? '?';
const transitions = (h: string): string[] => haEventsOf(cloud.baseDir, h).filter((e) => e.kind === 'transition').map((e) => e.to ?? '');
const messages = (h: string): string[] => haEventsOf(cloud.baseDir, h).map((e) => e.message);
const haSummary = (): string => cloud.nodeHosts.map((h) => `${h} ${haState(h)}: ${messages(h).slice(-4).join(' | ')}`).join('; ');
const waitHa = (what: string, ok: () => boolean, ms = 120_000): Promise<unknown> => until(`${what} (HA: ${haSummary()})`, async () => ok(), Boolean, ms);
const bothAvailable = (): Promise<unknown> => waitHa('both hosts AVAILABLE', () => cloud.nodeHosts.every((h) => haState(h) === 'AVAILABLE'), 180_000);
const ipmi = (host: string, ...cmd: string[]): Promise<unknown> =>
  exec('ipmitool', ['-I', 'lanplus', '-C', '3', '-H', host, '-p', String(BMC_PORT + cloud.nodeHosts.indexOf(host)), '-U', USER, '-P', PASSWORD, ...cmd], { timeout: 30_000 });

interface Inst { id: string; state: string; host: string; paused: boolean }

async function instances(): Promise<Inst[]> {
  const r = await q({ Action: 'DescribeInstances' });
  return arr<any>(r.reservationSet?.item).flatMap((rv) => arr<any>(rv.instancesSet?.item))
    .map((i) => ({ id: String(i.instanceId), state: String(i.instanceState?.name), host: String(i.nodeHost ?? ''), paused: i.paused === 'true' }));
}

const runningOn = (id: string, host: string) => (xs: Inst[]): boolean => xs.some((i) => i.id === id && i.host === host && i.state === 'running');

/** The lab guest's own tick counter, as it last wrote it into its root disk's first block (0 before its first write). */
function diskTick(id: string): number {
  const path = join(cloud.baseDir, 'storage', 'disks', `${id}.img`);
  if (!existsSync(path)) return 0;
  const buf = Buffer.alloc(64);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, buf.length, 0);
  } finally {
    closeSync(fd);
  }
  return Number(/^ferry-tick (\d+) /.exec(buf.toString('latin1'))?.[1] ?? 0);
}

/** The guest wrote its root disk within the last few seconds (through ferry-heartbeat's activity link on `host`). */
function writing(host: string, id: string): boolean {
  try {
    return Date.now() - statSync(join(cloud.baseDir, 'storage', host, `${id}.disk`)).mtimeMs < 4000;
  } catch {
    return false;
  }
}

/** A guest's QEMU, by libvirt's pid file in that host's private run directory. */
function qemuPid(host: string, id: string): number | undefined {
  const f = join(runDirOf(host), 'qemu', `${id}.pid`);
  return existsSync(f) ? Number(readFileSync(f, 'utf8').trim()) : undefined;
}

/**
 * Waits until `other` (a guest that runs on) has written its disk at least three more times (15
 * ticks): long enough for `frozen` to have written too were it running. Returns `frozen`'s counter.
 */
async function frozenWhileOtherWrites(frozen: string, other: string): Promise<number> {
  const at = diskTick(frozen);
  const otherAt = diskTick(other);
  await until(`${other} writes its disk on`, async () => diskTick(other), (t) => t >= otherAt + 15, 120_000);
  return diskTick(frozen) - at;
}

/** `virsh domblklist` as target → source. */
async function blockDevices(host: string, id: string): Promise<Record<string, string>> {
  const out = await virsh(uriOf(host), 'domblklist', id);
  return Object.fromEntries(out.split('\n').map((l) => l.trim().split(/\s+/)).filter((p) => p.length === 2).map(([t, s]) => [t as string, s as string]));
}

/** Every file disk of every domain `host`'s libvirtd knows (running or not). */
async function filesHeldOn(host: string): Promise<string[]> {
  const names = (await virsh(uriOf(host), 'list', '--all', '--name')).split('\n').filter(Boolean);
  const out: string[] = [];
  for (const n of names) {
    out.push(...Object.values(await blockDevices(host, n)));
    out.push(...[...(await virsh(uriOf(host), 'dumpxml', '--inactive', n)).matchAll(/<source file=['"]([^'"]+)['"]/g)].map((m) => m[1] as string));
  }
  return out;
}

const MAGIC = 'ferry-vol-pattern';
const BLOCK = 512;
const VOLUME_SCAN_BLOCKS = 20_000;

/** The volume file as the host sees it, block by block: its pattern block and the guest's records (block → its 512 bytes). */
function volumeBlocks(path: string): { magic: string; records: Map<number, string> } {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(VOLUME_SCAN_BLOCKS * BLOCK);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const records = new Map<number, string>();
    for (let b = 1; (b + 1) * BLOCK <= n; b++) {
      const block = buf.toString('latin1', b * BLOCK, (b + 1) * BLOCK);
      if (block.startsWith('ferry-vol ')) records.set(b, block);
    }
    return { magic: buf.toString('latin1', 0, MAGIC.length), records };
  } finally {
    closeSync(fd);
  }
}

/** A record is the guest's `ferry-vol <tick> <uptime>` written into block `tick`. */
const wellFormed = (block: number, content: string): boolean => Number(/^ferry-vol (\d+) /.exec(content)?.[1]) === block;

/** The volume's record in the CLC's own store (clc.json), an independent witness of the admin API. */
function clcVolume(volumeId: string): any {
  return JSON.parse(readFileSync(join(cloud.baseDir, 'clc', 'clc.json'), 'utf8')).data.volumes[volumeId];
}

/** An instance's record in a node's own store (nc.json). */
function ncRecord(host: string, id: string): { volumes?: unknown[] } | undefined {
  return JSON.parse(readFileSync(join(cloud.baseDir, 'hosts', host, 'nc', 'nc.json'), 'utf8')).data.instances[id];
}

async function describeVolume(volumeId: string): Promise<any> {
  return arr<any>((await q({ Action: 'DescribeVolumes', 'VolumeId.1': volumeId })).volumeSet?.item)[0];
}

beforeAll(async () => {
  await installFencingLab();
  await prepareLab(lab);
  await buildGuest(lab);
  for (const [host, bmc] of await startLibvirtHaCloud(cloud, { lab, uriOf, bmcPort: BMC_PORT, user: USER, password: PASSWORD, settings: SETTINGS })) bmcs.set(host, bmc);
  await bothAvailable();
}, 900_000);

afterAll(async () => {
  await cloud.stopAll();
  for (const bmc of bmcs.values()) await bmc.stop(); // powers its host off: libvirtd, QEMUs, agents
  await stopLab(lab);
  await cloud.destroy();
}, 180_000);

describe('issue 18 on real libvirt hosts: pause, and fencing with a volume', () => {
  /** The guest paused and moved (P), and one on the first host that runs on throughout (C). */
  let P = '';
  let C = '';

  it('pause: the domain is suspended and stops writing its disk while another guest writes on; unpaused it writes again', async () => {
    await bothAvailable();
    [P, C] = await placeOn(cloud, H1, 2) as [string, string];
    await until('both guests running on the first host', () => instances(), (xs) => runningOn(P, H1)(xs) && runningOn(C, H1)(xs), 180_000);
    await until('both guests writing their disks', async () => writing(H1, P) && writing(H1, C), Boolean, 180_000);

    const r = await q({ Action: 'PauseInstances', 'InstanceId.1': P });
    expect(arr<any>(r.instancesSet?.item)[0]).toMatchObject({ instanceId: P, paused: 'true', nodeHost: H1 });
    expect(await virsh(uriOf(H1), 'domstate', '--reason', P)).toBe('paused (user)');
    expect((await instances()).find((i) => i.id === P)).toMatchObject({ state: 'running', paused: true, host: H1 });
    expect(await frozenWhileOtherWrites(P, C)).toBe(0);
    expect(await virsh(uriOf(H1), 'domstate', P)).toBe('paused');

    const frozen = diskTick(P);
    await q({ Action: 'UnpauseInstances', 'InstanceId.1': P });
    expect(await virsh(uriOf(H1), 'domstate', '--reason', P)).toBe('running (unpaused)');
    await until(`${P} writes its disk again`, async () => diskTick(P), (t) => t > frozen, 120_000);
    expect((await instances()).find((i) => i.id === P)?.paused).toBe(false);
  }, 600_000);

  it('a paused guest migrated live arrives paused on the other host, stays frozen there, and resumes there', async () => {
    await q({ Action: 'PauseInstances', 'InstanceId.1': P });
    expect(await virsh(uriOf(H1), 'domstate', '--reason', P)).toBe('paused (user)');
    const t0 = Date.now();
    const m = await q({ Action: 'MigrateInstances', InstanceId: P, 'DestinationHost.1': H2, AllowHosts: 'true' });
    const done = await until('the migration to end', () => describeMigration(cloud, String(m.migrationId)), (x) => x?.state !== 'active', 300_000);
    const item = arr<any>(done.itemSet?.item)[0];
    expect(item, JSON.stringify(done)).toMatchObject({ instanceId: P, state: 'completed', destination: H2 });
    console.log(`paused guest (128 MiB, TCG) migrated through the tunnel: ${Date.now() - t0} ms from MigrateInstances to completed; item ${JSON.stringify(item)}`);

    // Moved, not restarted: the destination's domain came by migration and is paused by its user.
    expect(await virsh(uriOf(H2), 'domstate', '--reason', P)).toBe('paused (user)');
    expect(await virsh(uriOf(H1), 'list', '--all', '--name')).not.toContain(P);
    await until(`${P} shown paused on ${H2}`, () => instances(), (xs) => xs.some((i) => i.id === P && i.host === H2 && i.state === 'running' && i.paused), 120_000);
    expect(await frozenWhileOtherWrites(P, C)).toBe(0);

    const frozen = diskTick(P);
    const u = await q({ Action: 'UnpauseInstances', 'InstanceId.1': P });
    expect(arr<any>(u.instancesSet?.item)[0]).toMatchObject({ instanceId: P, paused: 'false', nodeHost: H2 });
    expect(await virsh(uriOf(H2), 'domstate', '--reason', P)).toBe('running (unpaused)');
    await until(`${P} writes its disk again on ${H2}`, async () => diskTick(P) > frozen && writing(H2, P), Boolean, 120_000);
    expect((await instances()).filter((i) => i.id === P)).toMatchObject([{ host: H2, state: 'running', paused: false }]);
  }, 600_000);

  it('fencing with a volume: fenced from the storage before the restart elsewhere, attached to the new copy with its data intact, never given back to the fenced host', async () => {
    await bothAvailable();
    // C, HA-protected (restarted elsewhere when its host is fenced), gets a volume the lab guest writes: the pattern asks it to.
    await q({ Action: 'ConfigureHAForInstance', InstanceId: C, AutoRepair: 'failover' });
    const volumeId = String((await q({ Action: 'CreateVolume', Size: '1', AvailabilityZone: 'cluster01' })).volumeId);
    const path = join(cloud.baseDir, 'storage', 'volumes', `${volumeId}.img`);
    const fd = openSync(path, 'r+');
    try {
      writeFileSync(fd, MAGIC);
    } finally {
      closeSync(fd);
    }
    await q({ Action: 'AttachVolume', VolumeId: volumeId, InstanceId: C, Device: '/dev/vdb' });
    expect((await blockDevices(H1, C))['vdb']).toBe(path);
    await until(`${C} writes records into its volume`, async () => volumeBlocks(path).records.size, (n) => n >= 20, 180_000);

    // Out of band, as a crash would: the BMC powers the host off (libvirtd, QEMUs, agents).
    const qemu = qemuPid(H1, C);
    const seen = transitions(H1).length;
    const before = volumeBlocks(path);
    await ipmi(H1, 'chassis', 'power', 'off');
    const offAt = Date.now();
    expect(await isAlive(qemu ?? -1)).toBe(false);
    // Nothing the guest wrote (each record flushed) was lost with its host.
    const atCrash = volumeBlocks(path);
    expect(atCrash.magic).toBe(MAGIC);
    for (const [b, content] of before.records) expect(atCrash.records.get(b)).toBe(content);

    await waitHa(`${H1} FENCED`, () => haState(H1) === 'FENCED', 180_000);
    expect(transitions(H1).slice(seen)).toEqual(expect.arrayContaining(['SUSPECT', 'CHECKING', 'FENCING', 'FENCED']));
    const fencedAt = haEventsOf(cloud.baseDir, H1).filter((e) => e.kind === 'transition' && e.to === 'FENCED').at(-1)?.at ?? Infinity;

    await until(`${C} restarted on ${H2}`, () => instances(), runningOn(C, H2), 180_000);
    expect(await virsh(uriOf(H2), 'domstate', '--reason', C)).toBe('running (booted)');
    const startedAt = Number(/started-at=["'](\d+)["']/.exec(await virsh(uriOf(H2), 'dumpxml', C))?.[1]);
    // The storage fence came after the power fence and before the new copy booted.
    const fence = await until(`${volumeId} fenced from ${H1} in the CLC's store`, async () => clcVolume(volumeId)?.attachment?.fencedFrom, (f) => f !== undefined, 60_000);
    expect(fence.host).toBe(H1);
    expect(fence.at).toBeGreaterThanOrEqual(fencedAt);
    expect(fence.at).toBeLessThanOrEqual(startedAt);

    // Attached to the new copy, in libvirt and for the CLC.
    await until(`${volumeId} attached to ${C} on ${H2}`, () => blockDevices(H2, C), (d) => d['vdb'] === path, 180_000);
    const attachedAt = Date.now();
    expect(await virsh(uriOf(H2), 'dumpxml', '--inactive', C)).toContain(`<serial>${volumeId}</serial>`);
    await until(`${volumeId} attached to ${C} for the CLC`, () => describeVolume(volumeId),
      (v) => v?.status === 'in-use' && v.attachmentSet?.item?.instanceId === C && v.attachmentSet.item.status === 'attached', 120_000);

    // The new copy writes the volume again: it read the pattern back through its disk first. Every
    // record from before the crash is intact, except those the new copy wrote over with its own.
    const rewritten = (now = volumeBlocks(path).records): number[] =>
      [...now].filter(([b, content]) => atCrash.records.get(b) !== content).map(([b]) => b);
    await until(`${C} writes its volume on ${H2}`, async () => rewritten().length, (n) => n >= 5, 180_000);
    console.log(`fencing with a volume: power-off → FENCED ${fencedAt - offAt} ms, → storage fence ${fence.at - offAt} ms, → new copy defined `
      + `${startedAt - offAt} ms, → volume seen in its domain ${attachedAt - offAt} ms, → new copy wrote 5 records ${Date.now() - offAt} ms; `
      + `${atCrash.records.size} records from before the crash`);
    const after = volumeBlocks(path);
    expect(after.magic).toBe(MAGIC);
    for (const [b, content] of atCrash.records) {
      const now = after.records.get(b);
      if (now !== content) expect(wellFormed(b, now ?? ''), `block ${b}: ${JSON.stringify(now)}`).toBe(true);
    }
    for (const b of rewritten(after.records)) expect(wellFormed(b, after.records.get(b) ?? ''), `block ${b}`).toBe(true);

    // Powered on again: its libvirtd still holds the old definition. It is destroyed, never started,
    // and the host stays FENCED until an operator returns it.
    await ipmi(H1, 'chassis', 'power', 'on');
    await until('obsolete copies destroyed', async () => cloud.log('clc').includes('obsolete copies on a fenced host that came back destroyed'), Boolean, 180_000);
    expect(haState(H1)).toBe('FENCED');
    expect(await virsh(uriOf(H1), 'list', '--all', '--name')).not.toContain(C);
    expect(await filesHeldOn(H1)).not.toContain(path);
    expect(ncRecord(H1, C)?.volumes ?? []).toEqual([]);

    await q({ Action: 'EnableService', Type: 'NODE', Host: H1 });
    await bothAvailable();
    // Returned to service, it did not get the volume back: the CLC, its libvirtd and the new copy say so.
    expect(await filesHeldOn(H1)).not.toContain(path);
    expect(ncRecord(H1, C)?.volumes ?? []).toEqual([]);
    expect(ncRecord(H2, C)?.volumes).toEqual([expect.objectContaining({ volumeId, device: '/dev/vdb', path, status: 'attached' })]);
    expect(await describeVolume(volumeId)).toMatchObject({ status: 'in-use', attachmentSet: { item: { instanceId: C, device: '/dev/vdb', status: 'attached' } } });
    expect((await instances()).filter((i) => i.id === C)).toMatchObject([{ host: H2, state: 'running' }]);
    const written = rewritten().length;
    await until(`${C} writes on into its volume on ${H2}`, async () => rewritten().length, (n) => n >= written + 5, 120_000);
    expect((await blockDevices(H2, C))['vdb']).toBe(path);
    const running = [...(await virsh(uriOf(H1), 'list', '--name')).split('\n'), ...(await virsh(uriOf(H2), 'list', '--name')).split('\n')];
    expect(running.filter((n) => n === C)).toHaveLength(1);
  }, 900_000);
});
