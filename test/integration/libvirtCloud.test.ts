/**
 * The whole path on real libvirt: CLC, CC and two NCs (127.0.34.0/24) whose hypervisors are the
 * two libvirtd daemons of scripts/libvirt-lab.sh, one per NC address on port 16509. RunInstances
 * places a firmware-only guest on NC1; MigrateInstances live-migrates it to NC2 through the
 * CC handshake; libvirt (virsh) shows it running on host 2 and gone from host 1, DescribeInstances
 * shows the new host, and euca-describe-migrations shows the job's time, downtime and bytes. A
 * migration cancelled mid-way (CancelMigration → virDomainAbortJob) leaves the guest on NC1; after
 * kill -9 of the source or the destination NC mid-migration the guest ends running exactly once.
 * The cloud runs mutual TLS (the layout's default), so the CC issues each item its per-migration
 * credentials and the driver migrates with VIR_MIGRATE_TLS through the per-host TLS directories;
 * the TLS refusal and abort cases on the driver are in libvirt.test.ts.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT, TestCloud } from '../helpers/cloud.js';
import { until } from '../helpers/cloudApi.js';
import { labLayout, runCloudOnLab, virsh } from '../helpers/libvirtLab.js';
import { libvirtCloudArgs } from '../../scripts/libvirtCloud.js';

const SUBNET = 34;
const addrs = [`127.0.${SUBNET}.1`, `127.0.${SUBNET}.2`] as const;
const lab = labLayout('/tmp/ferry-libvirt-cloud-lab', { addrs, port: 16509 });
const [H1, H2] = lab.hosts;
const tlsDirOf = (host: string): string => (host === addrs[0] ? H1.tlsDir : H2.tlsDir);
// 1 MiB/s: a 64 MiB firmware guest's ~0.6 MB then takes ~1.7 s, long enough to cancel mid-way.
const cloud = new TestCloud(SUBNET, 2, libvirtCloudArgs({
  libvirtPort: 16509, tlsDirOf, guestMemoryCapMiB: 64, migrationBandwidthMiBs: 1, pollIntervalMs: 1000,
}));
const [n1, n2] = cloud.nodeHosts as [string, string];
const arr = <T>(x: T | T[] | undefined | ''): T[] => (x === undefined || x === '' ? [] : Array.isArray(x) ? x : [x]);

async function q(params: Record<string, string>): Promise<any> {
  const r = await cloud.query(params);
  if (r.status !== 200) throw new Error(`${params.Action} → ${r.status}: ${r.text}`);
  return r.doc[`${params.Action}Response`];
}

async function instance(id: string): Promise<any> {
  const r = await q({ Action: 'DescribeInstances', 'InstanceId.1': id });
  return arr<any>(r.reservationSet?.item).flatMap((rv) => arr<any>(rv.instancesSet?.item))[0];
}

async function placeOnN1(): Promise<string> {
  await q({ Action: 'DisableService', Type: 'NODE', Host: n2 });
  const run = await q({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '1', MaxCount: '1' });
  await q({ Action: 'EnableService', Type: 'NODE', Host: n2 });
  const id = arr<any>(run.instancesSet.item)[0].instanceId as string;
  await until('instance running on n1', () => instance(id), (i) => i?.instanceState?.name === 'running' && i.nodeHost === n1);
  return id;
}

async function migration(id: string): Promise<any> {
  return arr<any>((await q({ Action: 'DescribeMigrations', 'MigrationId.1': id })).migrationSet?.item)[0];
}

runCloudOnLab(lab, cloud);

describe('live migration of a real guest through CLC → CC → NC → libvirt', () => {
  it('moves a running guest from NC1 to NC2 and records the job statistics', async () => {
    const id = await placeOnN1();
    expect(await virsh(H1.uri, 'domstate', id)).toBe('running');

    const mig = await q({ Action: 'MigrateInstances', InstanceId: id, 'DestinationHost.1': n2, AllowHosts: 'true' });
    const done = await until('migration final', () => migration(mig.migrationId), (m) => m && m.state !== 'active', 90_000);
    const item = arr<any>(done.itemSet.item)[0];
    expect([done.state, item.state, item.error ?? '']).toEqual(['completed', 'completed', '']);
    expect(Number(item.stats.elapsedMs)).toBeGreaterThan(0);
    expect(Number(item.stats.downtimeMs)).toBeGreaterThan(0);
    expect(Number(item.stats.bytesTransferred)).toBeGreaterThan(0);
    console.log(`CLC→CC→NC→libvirt migration: job ${item.stats.elapsedMs} ms, downtime ${item.stats.downtimeMs} ms, ${item.stats.bytesTransferred} bytes`);

    expect(await virsh(H2.uri, 'domstate', '--reason', id)).toBe('running (migrated)');
    expect(await virsh(H1.uri, 'list', '--all', '--name')).not.toContain(id);
    await until('DescribeInstances shows n2', () => instance(id), (i) => i?.nodeHost === n2 && i.instanceState?.name === 'running', 30_000);

    const cli = await promisify(execFile)(process.execPath, [join(ROOT, 'bin/euca-describe-migrations'), mig.migrationId], { env: cloud.cliEnv() as Record<string, string> });
    const row = cli.stdout.split('\n').find((l) => l.startsWith(`INSTANCE\t${id}`));
    expect(row?.split('\t').slice(0, 4)).toEqual(['INSTANCE', id, n2, 'completed']);
    expect(row?.split('\t')[6]).toMatch(/^\d+ms$/); // downtime
    expect(row?.split('\t')[7]).toMatch(/^[\d.]+(B|KiB|MiB)$/); // bytes moved

    await q({ Action: 'TerminateInstances', 'InstanceId.1': id });
    await until('guest gone from libvirt', () => virsh(H2.uri, 'list', '--all', '--name'), (names) => !names.includes(id), 30_000);
  });

  it('a migration cancelled mid-way leaves the guest running on the source, in libvirt and in DescribeInstances', async () => {
    const id = await placeOnN1();
    const mig = await q({ Action: 'MigrateInstances', InstanceId: id, 'DestinationHost.1': n2, AllowHosts: 'true' });
    await until('item migrating', () => migration(mig.migrationId), (m) => arr<any>(m?.itemSet?.item)[0]?.state === 'migrating', 30_000);
    await q({ Action: 'CancelMigration', MigrationId: mig.migrationId });
    const done = await until('migration final', () => migration(mig.migrationId), (m) => m && m.state !== 'active', 90_000);
    expect(arr<any>(done.itemSet.item)[0].state).toBe('cancelled');

    expect(await virsh(H1.uri, 'domstate', id)).toBe('running');
    expect(await virsh(H2.uri, 'list', '--all', '--name')).not.toContain(id);
    expect(await instance(id)).toMatchObject({ nodeHost: n1, instanceState: { name: 'running' } });

    await q({ Action: 'TerminateInstances', 'InstanceId.1': id });
    await until('guest gone from libvirt', () => virsh(H1.uri, 'list', '--all', '--name'), (names) => !names.includes(id), 30_000);
  });

  it.each([
    ['source', () => n1],
    ['destination', () => n2],
  ])('survives kill -9 of the %s NC mid-migration (libvirtd carries on; the restarted NC catches up): the guest runs once', async (who, victim) => {
    const id = await placeOnN1();
    const mig = await q({ Action: 'MigrateInstances', InstanceId: id, 'DestinationHost.1': n2, AllowHosts: 'true' });
    await until('item migrating', () => migration(mig.migrationId), (m) => arr<any>(m?.itemSet?.item)[0]?.state === 'migrating', 30_000);
    await cloud.restart(`nc-${victim()}`);
    const done = await until('migration final', () => migration(mig.migrationId), (m) => m && m.state !== 'active', 90_000);
    const item = arr<any>(done.itemSet.item)[0];
    expect(['completed', 'rolled-back']).toContain(item.state);
    const [on1, on2] = [await virsh(H1.uri, 'domstate', id), await virsh(H2.uri, 'domstate', id)];
    console.log(`${who} NC killed mid-migration: item ${item.state}, stats ${JSON.stringify(item.stats ?? null)}`);
    expect([on1, on2]).toEqual(item.state === 'completed' ? ['', 'running'] : ['running', '']);
    await until('DescribeInstances agrees', () => instance(id), (i) => i?.nodeHost === (item.state === 'completed' ? n2 : n1) && i.instanceState?.name === 'running', 30_000);
    await q({ Action: 'TerminateInstances', 'InstanceId.1': id });
    await until('guest gone from libvirt', async () => (await virsh(H1.uri, 'list', '--all', '--name')) + (await virsh(H2.uri, 'list', '--all', '--name')),
      (names) => !names.includes(id), 30_000);
  });
});
