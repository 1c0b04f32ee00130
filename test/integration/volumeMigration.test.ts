/**
 * Live migration with attached volumes (issue 18 part 3) through clouds of real processes on
 * 127.0.81.0/24, one after the other (they share the subnet's addresses and ports):
 *  - the simulated hypervisor: a moved instance (alone, or in a drain) arrives with its volumes
 *    attached — the destination's domain holds the same file, its NC's record holds the attachment
 *    and answers the next DetachVolume — and a migration cancelled while it copies leaves them
 *    attached on the source and nothing on the destination;
 *  - libvirt (the lab of scripts/libvirt-lab.sh, its daemons on the NC addresses at port 17919,
 *    tunnels on 17916, data ports 17960-17999): CLC → CC → NC → libvirt, a guest with a volume
 *    attached by AttachVolume migrates through the NCs' handshake and tunnel and runs on the
 *    other host with the volume as the same disk.
 * Witnesses: the simhv daemons or virsh, the NCs' stores, DescribeVolumes and DescribeMigrations.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, describeMigration, hypervisorDomains, placeOn, runningCopies, until } from '../helpers/cloudApi.js';
import { labLayout, runCloudOnLab, virsh } from '../helpers/libvirtLab.js';
import { SimDriver } from '../../nc/hypervisor/sim/simDriver.js';

// 256 MiB guests: ~3 s of model time per move; time-scale 2 → ~6 s, long enough to cancel one mid-way.
const cloud = new TestCloud(81, 3, {
  simArgs: ['--time-scale', '2', '--cores', '4', '--memory-mib', '2048', '--disk-gib', '100'],
  ccArgs: ['--poll-interval-ms', '1000'],
});
const [n1, n2, n3] = cloud.nodeHosts as [string, string, string];
const ZONE = 'cluster01';
let current: TestCloud = cloud;
const q = (params: Record<string, string>): Promise<any> => adminCall(current, params);

async function domainVolumes(host: string, instanceId: string): Promise<unknown[] | undefined> {
  const driver = new SimDriver({ socketPath: cloud.simSocket(host) });
  try {
    const d = await driver.info(instanceId);
    return d ? [...(d.volumes ?? [])] : undefined;
  } finally {
    await driver.close();
  }
}

function ncRecordVolumes(host: string, instanceId: string): unknown {
  return JSON.parse(readFileSync(join(current.baseDir, 'hosts', host, 'nc', 'nc.json'), 'utf8')).data.instances[instanceId]?.volumes;
}

async function attachNew(instanceId: string, device: string): Promise<{ volumeId: string; path: string }> {
  const volumeId = (await q({ Action: 'CreateVolume', Size: '1', AvailabilityZone: ZONE })).volumeId as string;
  await q({ Action: 'AttachVolume', VolumeId: volumeId, InstanceId: instanceId, Device: device });
  return { volumeId, path: join(current.baseDir, 'storage', 'volumes', `${volumeId}.img`) };
}

async function attachmentOf(volumeId: string): Promise<any> {
  const v = arr<any>((await q({ Action: 'DescribeVolumes', 'VolumeId.1': volumeId })).volumeSet?.item)[0];
  return { volumeStatus: v.status, ...v.attachmentSet?.item };
}

async function waitFinal(migrationId: string, timeoutMs = 120_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = await describeMigration(current, migrationId);
    if (m && m.state !== 'active') return m;
    if (Date.now() > deadline) throw new Error(`migration ${migrationId} still active: ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

describe('live migration of instances with attached volumes (simulated hypervisor)', () => {
  beforeAll(async () => { current = cloud; await cloud.start(); }, 120_000);
  afterAll(async () => { await cloud.destroy(); }, 120_000);

  it('a moved instance arrives with its volumes attached: same files, recorded by the new NC, detachable there', async () => {
    const [id] = await placeOn(cloud, n1, 1) as [string];
    const a = await attachNew(id, '/dev/vdb');
    const b = await attachNew(id, '/dev/sdc');
    const before = await domainVolumes(n1, id);
    expect(before).toHaveLength(2);

    const r = await q({ Action: 'MigrateInstances', InstanceId: id, 'DestinationHost.1': n2, AllowHosts: 'true' });
    expect((await waitFinal(r.migrationId)).state).toBe('completed');

    expect((await runningCopies(cloud)).get(id)).toEqual([n2]);
    expect(await domainVolumes(n2, id)).toEqual(before); // the same volumes on the same files: nothing copied
    expect(await domainVolumes(n1, id)).toBeUndefined();
    expect(ncRecordVolumes(n2, id)).toEqual([
      expect.objectContaining({ volumeId: a.volumeId, device: '/dev/vdb', path: a.path, status: 'attached' }),
      expect.objectContaining({ volumeId: b.volumeId, device: '/dev/sdc', path: b.path, status: 'attached' }),
    ]);
    expect(ncRecordVolumes(n1, id)).toBeUndefined();
    expect(await attachmentOf(a.volumeId)).toMatchObject({ volumeStatus: 'in-use', instanceId: id, device: '/dev/vdb', status: 'attached' });

    // The destination's NC holds the attachment now: DetachVolume goes there and its domain lets go.
    await q({ Action: 'DetachVolume', VolumeId: a.volumeId });
    expect(await domainVolumes(n2, id)).toEqual([expect.objectContaining({ volumeId: b.volumeId })]);
    expect(await attachmentOf(a.volumeId)).toEqual({ volumeStatus: 'available' });
  }, 180_000);

  it('a drain moves every instance with its volume', async () => {
    const ids = await placeOn(cloud, n3, 2);
    const vols = await Promise.all(ids.map((id, k) => attachNew(id, `/dev/vd${'cd'[k] ?? 'e'}`)));
    const r = await q({ Action: 'MigrateInstances', SourceHost: n3, 'DestinationHost.1': n1, 'DestinationHost.2': n2, AllowHosts: 'true' });
    expect((await waitFinal(r.migrationId)).state).toBe('completed');
    const copies = await runningCopies(cloud);
    for (const [k, id] of ids.entries()) {
      const at = copies.get(id) ?? [];
      expect(at).toHaveLength(1);
      expect(at[0]).not.toBe(n3);
      const v = vols[k]!;
      expect(await domainVolumes(at[0]!, id)).toEqual([{ volumeId: v.volumeId, device: `/dev/vd${'cd'[k] ?? 'e'}`, path: v.path }]);
      expect(ncRecordVolumes(at[0]!, id)).toEqual([expect.objectContaining({ volumeId: v.volumeId, status: 'attached' })]);
      expect(await attachmentOf(v.volumeId)).toMatchObject({ volumeStatus: 'in-use', instanceId: id, status: 'attached' });
    }
    expect((await hypervisorDomains(cloud, n3)).map((d) => d.id)).toEqual([]);
  }, 180_000);

  it('a migration cancelled while it copies leaves the volume attached on the source and nothing on the destination', async () => {
    const [id] = await placeOn(cloud, n1, 1) as [string];
    const v = await attachNew(id, '/dev/vdb');
    const r = await q({ Action: 'MigrateInstances', InstanceId: id, 'DestinationHost.1': n3, AllowHosts: 'true' });
    // Cancel once the destination was prepared with the volume and the source is sending.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const m = await describeMigration(cloud, r.migrationId);
      if (arr<any>(m?.itemSet?.item).some((i) => i.state === 'migrating')) break;
      if (Date.now() > deadline || m?.state !== 'active') throw new Error(`never migrating: ${JSON.stringify(m)}`);
      await new Promise((res) => setTimeout(res, 50));
    }
    await q({ Action: 'CancelMigration', MigrationId: r.migrationId });
    const done = await waitFinal(r.migrationId);
    expect(arr<any>(done.itemSet.item)[0].state).toBe('cancelled');

    expect((await runningCopies(cloud)).get(id)).toEqual([n1]);
    expect(await domainVolumes(n1, id)).toEqual([{ volumeId: v.volumeId, device: '/dev/vdb', path: v.path }]);
    expect(ncRecordVolumes(n1, id)).toEqual([expect.objectContaining({ volumeId: v.volumeId, status: 'attached' })]);
    // The CC rolls the destination back after the source ended the item: wait for its Incoming to go.
    const dstStore = (): any => JSON.parse(readFileSync(join(cloud.baseDir, 'hosts', n3, 'nc', 'nc.json'), 'utf8')).data;
    await until('the destination rolled back', async () => dstStore().incoming[id], (rec) => rec === undefined, 60_000);
    expect(dstStore().instances[id]).toBeUndefined();
    expect(await domainVolumes(n3, id)).toBeUndefined();
    expect(await attachmentOf(v.volumeId)).toMatchObject({ volumeStatus: 'in-use', instanceId: id, status: 'attached' });
    // Still the source's: a detach goes there.
    await q({ Action: 'DetachVolume', VolumeId: v.volumeId });
    expect(await domainVolumes(n1, id)).toEqual([]);
  }, 180_000);
});

const LAB_PORT = 17919;
const lab = labLayout('/tmp/ferry-lab-volmig/cloud', { addrs: ['127.0.81.1', '127.0.81.2'], port: LAB_PORT });
const lvCloud = new TestCloud(81, 2, {
  hypervisorArgs: (host) => ['--hypervisor', 'libvirt', '--libvirt-uri', `qemu+tcp://${host}:${LAB_PORT}/system`,
    '--libvirt-guest-memory-cap', '64', '--libvirt-tunnel-port', '17916', '--libvirt-tunnel-local', 'host',
    '--libvirt-tunnel-data-ports', '17960-17999'],
  ccArgs: ['--poll-interval-ms', '1000', '--migration-uri-template', `qemu+tcp://{host}:${LAB_PORT}/system`],
});

/** `virsh domblklist` as target → source. */
async function blockDevices(uri: string, id: string): Promise<Record<string, string>> {
  const out = await virsh(uri, 'domblklist', id);
  return Object.fromEntries(out.split('\n').map((l) => l.trim().split(/\s+/)).filter((p) => p.length === 2).map(([t, x]) => [t as string, x as string]));
}

describe('CLC → CC → NC → libvirt: a guest with a volume migrates with it', () => {
  beforeAll(() => { current = lvCloud; });
  runCloudOnLab(lab, lvCloud);
  const [H1, H2] = lab.hosts;
  const [l1, l2] = lvCloud.nodeHosts as [string, string];

  it('the destination NC prepares the volume, libvirt moves the guest with it as the same disk, and the new NC holds the attachment', async () => {
    const [id] = await placeOn(lvCloud, l1, 1) as [string];
    await until('running on the first node', () => virsh(H1.uri, 'domstate', id), (st) => st === 'running', 60_000);
    const v = await attachNew(id, '/dev/vdb');
    expect((await blockDevices(H1.uri, id))['vdb']).toBe(v.path);

    const r = await q({ Action: 'MigrateInstances', InstanceId: id, 'DestinationHost.1': l2, AllowHosts: 'true' });
    const done = await waitFinal(r.migrationId);
    const moved = arr<any>(done.itemSet.item)[0];
    expect(moved?.state, JSON.stringify(moved)).toBe('completed');

    expect(await virsh(H2.uri, 'domstate', '--reason', id)).toBe('running (migrated)');
    expect(await virsh(H1.uri, 'list', '--all', '--name')).not.toContain(id);
    expect((await blockDevices(H2.uri, id))['vdb']).toBe(v.path);
    expect(await virsh(H2.uri, 'dumpxml', '--inactive', id)).toContain(`<serial>${v.volumeId}</serial>`);
    expect(ncRecordVolumes(l2, id)).toEqual([expect.objectContaining({ volumeId: v.volumeId, device: '/dev/vdb', path: v.path, status: 'attached' })]);
    expect(ncRecordVolumes(l1, id)).toBeUndefined();
    expect(await attachmentOf(v.volumeId)).toMatchObject({ volumeStatus: 'in-use', instanceId: id, status: 'attached' });

    await q({ Action: 'TerminateInstances', 'InstanceId.1': id });
    await until('guest gone from libvirt', async () => (await virsh(H1.uri, 'list', '--all', '--name')) + (await virsh(H2.uri, 'list', '--all', '--name')),
      (names) => !names.includes(id), 60_000);
    expect((await attachmentOf(v.volumeId)).volumeStatus).toBe('available');
    expect(statSync(v.path).size).toBe(1024 ** 3); // the volume outlives the guest
  }, 300_000);
});
