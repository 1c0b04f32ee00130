/**
 * The whole path through per-migration tunnels: CLC, CC and two NCs (127.0.58.0/24) on the two
 * libvirtd daemons of scripts/libvirt-lab.sh (lab /tmp/ferry-lab-tunnel/cloud, one per NC address
 * at port 17509). The NCs run with --libvirt-tunnel-port and NO --libvirt-tls-dir, so the
 * credentials the CC issues each item can only travel through the NCs' tunnels. Draining NC1 of two
 * guests moves both to NC2 at once (the CC allows two per source and destination): their libvirt
 * jobs overlap, which one TLS directory per libvirtd could not do. The NCs are in the stream's
 * path now: kill -9 of either NC mid-migration breaks that stream, and the guest still ends running
 * exactly once (libvirt keeps it on the source when the stream breaks).
 */
import { describe, expect, it } from 'vitest';
import { TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, describeMigration, describeNodes, placeOn, until } from '../helpers/cloudApi.js';
import { labLayout, runCloudOnLab, virsh } from '../helpers/libvirtLab.js';
import { libvirtCloudArgs } from '../../scripts/libvirtCloud.js';

const SUBNET = 58;
const addrs = [`127.0.${SUBNET}.1`, `127.0.${SUBNET}.2`] as const;
const lab = labLayout('/tmp/ferry-lab-tunnel/cloud', { addrs, port: 17509 });
const [H1, H2] = lab.hosts;
// 1 MiB/s: a 64 MiB firmware guest's ~0.6 MB then takes over a second, long enough to overlap.
const cloud = new TestCloud(SUBNET, 2, libvirtCloudArgs({
  libvirtPort: 17509, guestMemoryCapMiB: 64, migrationBandwidthMiBs: 1, pollIntervalMs: 1000,
  tunnel: { port: 17514, local: 'host', dataPorts: { min: 17700, max: 17799 } },
}));
const [n1, n2] = cloud.nodeHosts as [string, string];

const q = (params: Record<string, string>): Promise<any> => adminCall(cloud, params);

async function instancesOn(host: string): Promise<any[]> {
  const r = await q({ Action: 'DescribeInstances' });
  return arr<any>(r.reservationSet?.item).flatMap((rv) => arr<any>(rv.instancesSet?.item))
    .filter((i) => i.nodeHost === host && i.instanceState?.name === 'running');
}

runCloudOnLab(lab, cloud);

const migration = (id: string): Promise<any> => describeMigration(cloud, id);

/**
 * Each case places on an empty cloud: wait until the CC has seen the earlier cases' guests go (on a
 * busy machine its view lags libvirt). An instance still shutting down holds its slot even once
 * `used` reads 0 (cc/view.ts committed()).
 */
const nodesEmpty = (): Promise<unknown> => until('both nodes empty', () => describeNodes(cloud), (ns) => ns.every((n) => Number(n.used?.cores) === 0
  && arr<any>(n.instancesSet?.item).every((i) => i.state === 'terminated')), 60_000);

describe('CLC → CC → NC → libvirt through per-migration tunnels', () => {
  it.each([
    ['source', () => n1],
    ['destination', () => n2],
  ])('kill -9 of the %s NC mid-migration (its tunnel end dies with it): the guest runs once', async (who, victim) => {
    await nodesEmpty();
    const [id] = await placeOn(cloud, n1, 1) as [string];
    await until('running on n1', () => instancesOn(n1), (xs) => xs.some((i) => i.instanceId === id));
    const mig = await q({ Action: 'MigrateInstances', InstanceId: id, 'DestinationHost.1': n2, AllowHosts: 'true' });
    await until('item migrating', () => migration(mig.migrationId), (m) => arr<any>(m?.itemSet?.item)[0]?.state === 'migrating', 30_000);
    await cloud.restart(`nc-${victim()}`);
    const done = await until('migration final', () => migration(mig.migrationId), (m) => m && m.state !== 'active', 120_000);
    const item = arr<any>(done.itemSet.item)[0];
    console.log(`${who} NC killed mid tunnelled migration: item ${item.state} ${item.error ?? ''}`);
    expect(['completed', 'rolled-back', 'failed']).toContain(item.state);
    const [on1, on2] = [await virsh(H1.uri, 'domstate', id), await virsh(H2.uri, 'domstate', id)];
    expect([on1, on2]).toEqual(item.state === 'completed' ? ['', 'running'] : ['running', '']);
    await q({ Action: 'TerminateInstances', 'InstanceId.1': id });
    await until('guest gone from libvirt', async () => (await virsh(H1.uri, 'list', '--all', '--name')) + (await virsh(H2.uri, 'list', '--all', '--name')),
      (names) => !names.includes(id), 30_000);
  }, 300_000);

  it('drains two guests from NC1 to NC2 at once, each through its own tunnel', async () => {
    // The earlier cases' guests are gone from libvirt; wait until the CC has heard it too (room for two).
    await nodesEmpty();
    const ids = await placeOn(cloud, n1, 2);
    await until('two guests running on n1', () => instancesOn(n1), (xs) => xs.length === 2);

    const mig = await q({ Action: 'MigrateInstances', SourceHost: n1 });
    const done = await until('drain final', () => migration(mig.migrationId), (m) => m && m.state !== 'active', 120_000);
    const items = arr<any>(done.itemSet.item);
    expect(items.map((i) => [i.state, i.error ?? ''])).toEqual([['completed', ''], ['completed', '']]);
    // Each libvirt job's span, ending when its item ended.
    const spans = items.map((i) => ({ to: Date.parse(i.endedAt), from: Date.parse(i.endedAt) - Number(i.stats.elapsedMs) }));
    console.log(`tunnelled drain: jobs ${items.map((i) => `${i.stats.elapsedMs} ms (downtime ${i.stats.downtimeMs} ms)`).join(', ')}; spans ${JSON.stringify(spans)}`);
    const [a, b] = spans as [typeof spans[0], typeof spans[0]];
    expect(items.every((i) => Number(i.stats.elapsedMs) > 500)).toBe(true);
    // Serialised jobs would not overlap at all; these share more than half of the shorter one.
    expect(Math.min(a.to, b.to) - Math.max(a.from, b.from)).toBeGreaterThan(Math.min(...items.map((i) => Number(i.stats.elapsedMs))) / 2);

    for (const id of ids) expect(await virsh(H2.uri, 'domstate', '--reason', id)).toBe('running (migrated)');
    const left = await virsh(H1.uri, 'list', '--all', '--name');
    for (const id of ids) expect(left).not.toContain(id);
    await until('DescribeInstances shows both on n2', () => instancesOn(n2), (xs) => xs.length === 2, 30_000);
  }, 300_000);
});
