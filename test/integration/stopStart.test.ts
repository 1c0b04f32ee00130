/**
 * Stop, start, reboot end to end (issue 18 part 5) with real processes on 127.0.80.0/24: three NCs
 * (each with its simulated hypervisor), a CC and a CLC, over mutual TLS. A running instance is
 * stopped with the CLI: its NC's nc.json says so once the CLC has answered, its domain is shut off
 * (defined, its disk kept) and DescribeInstances shows it stopped; kill -9 of its NC keeps it
 * stopped; started, it runs on the same node and its disk counter goes on; rebooted, it stays there
 * and keeps writing; stopped again with its node disabled, a start lands it on an enabled node and
 * the old node forgets it; a migrating instance's stop, start and reboot are refused with a code.
 * Then boto3 and the aws CLI (Debian's, default settings, as realClients.test.ts runs them) stop,
 * start and reboot, with their waiters, and get the coded error for an unknown id.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimDriver } from '../../nc/hypervisor/sim/simDriver.js';
import { decodeDiskCounter, diskPath } from '../../nc/hypervisor/sim/hostLedger.js';
import { storageDirOf } from '../../scripts/cloudLayout.js';
import { cloudCli, TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, describeMigration, hypervisorDomains, placeOn, setNodeState, until } from '../helpers/cloudApi.js';
import { awsCli, awsToolEnv, boto3, boto3Ok, sourceCredentials, type Boto3Step } from '../clients/awsTools.js';

// Slow migrations (a 256 MiB guest over 400 Mbit/s: ~5 s), so one is caught in flight.
const cloud = new TestCloud(80, 3, { simArgs: ['--bandwidth-mbps', '400', '--dirty-rate-mibps', '4'], ccArgs: ['--poll-interval-ms', '1000'] });
const [n1, n2, n3] = cloud.nodeHosts as [string, string, string];
const storage = storageDirOf({ baseDir: cloud.baseDir });
const cli = (cmd: string, ...args: string[]) => cloudCli(cloud, cmd, ...args);

function ncRecord(host: string, id: string): { phase: string; userStopped?: boolean } | undefined {
  return JSON.parse(readFileSync(join(cloud.baseDir, 'hosts', host, 'nc', 'nc.json'), 'utf8')).data.instances[id];
}

/** The domain as the host's simulated hypervisor holds it (its owner-only control socket). */
async function domainState(host: string, id: string): Promise<string | undefined> {
  const d = new SimDriver({ socketPath: cloud.simSocket(host) });
  try {
    return (await d.info(id))?.state;
  } finally {
    await d.close();
  }
}

function diskCounter(host: string, id: string): number {
  return decodeDiskCounter(readFileSync(diskPath(storage, host, id), 'utf8'));
}

interface Inst { instanceId: string; nodeHost: string; instanceState: { name: string } }

async function instance(id: string): Promise<Inst | undefined> {
  const r = await cloud.query({ Action: 'DescribeInstances', 'InstanceId.1': id });
  if (r.status !== 200) return undefined;
  return arr<any>(arr<any>((r.doc.DescribeInstancesResponse as any).reservationSet?.item)[0]?.instancesSet?.item)[0];
}

const errorCode = (r: { text: string }): string => /<Code>([^<]+)<\/Code>/.exec(r.text)?.[1] ?? '';

beforeAll(async () => { await cloud.start(); }, 120_000);
afterAll(async () => { await cloud.destroy(); });

describe('stop, start and reboot in a cloud of real processes', () => {
  let id = '';
  let home = '';

  it('stops: persisted on the NC when the CLC answers, the domain shut off and kept, shown stopped', async () => {
    [id] = await placeOn(cloud, n1, 1) as [string];
    home = n1;
    await until('the instance to run', () => instance(id), (i) => i?.instanceState.name === 'running');
    await until('its disk to be written', async () => diskCounter(home, id), (c) => c > 1);
    const out = await cli('euca-stop-instances', id);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout.trim()).toBe(`INSTANCE\t${id}\trunning\tstopped`);
    // Read right after the answer: the NC persisted it before replying, and the domain is off but defined.
    expect(ncRecord(home, id)?.userStopped).toBe(true);
    expect(await domainState(home, id)).toBe('shutoff');
    expect(await instance(id)).toMatchObject({ instanceState: { name: 'stopped' }, nodeHost: home });
  }, 120_000);

  it('kill -9 of its NC keeps it stopped, and the restarted NC reports it', async () => {
    await cloud.restart(`nc-${home}`);
    await until('the restarted NC to report it stopped', () => instance(id), (i) => i?.instanceState.name === 'stopped');
    expect(await domainState(home, id)).toBe('shutoff');
    expect(ncRecord(home, id)?.userStopped).toBe(true);
    expect(await instance(id)).toMatchObject({ instanceState: { name: 'stopped' } });
  }, 120_000);

  it('starts on its own node, its disk counter going on; a reboot keeps it there, writing', async () => {
    const before = diskCounter(home, id);
    const out = await cli('euca-start-instances', id);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout.trim()).toBe(`INSTANCE\t${id}\tstopped\trunning\t${home}`);
    expect(await domainState(home, id)).toBe('running');
    expect(ncRecord(home, id)?.userStopped).toBeUndefined();
    expect(diskCounter(home, id)).toBeGreaterThan(before);

    const beforeReboot = diskCounter(home, id);
    const r = await cli('euca-reboot-instances', id);
    expect(r.code, r.stderr).toBe(0);
    expect(await domainState(home, id)).toBe('running');
    expect(diskCounter(home, id)).toBeGreaterThan(beforeReboot);
    expect(await instance(id)).toMatchObject({ instanceState: { name: 'running' }, nodeHost: home });
  }, 120_000);

  it('a stopped instance whose node is disabled starts on an enabled node; the old node forgets it', async () => {
    await adminCall(cloud, { Action: 'StopInstances', 'InstanceId.1': id, Force: 'true' });
    await setNodeState(cloud, home, false);
    await setNodeState(cloud, n3, false);
    const r = await adminCall(cloud, { Action: 'StartInstances', 'InstanceId.1': id });
    expect(arr<any>(r.instancesSet.item)[0]).toMatchObject({ instanceId: id, previousState: { name: 'stopped' }, currentState: { name: 'running' }, nodeHost: n2 });
    expect(await domainState(n2, id)).toBe('running');
    expect(await domainState(home, id)).toBeUndefined();
    expect(ncRecord(home, id)?.phase).toBe('terminated');
    await until('the instance shown running on its new node', () => instance(id), (i) => i?.nodeHost === n2 && i.instanceState.name === 'running');
    await setNodeState(cloud, home, true);
    await setNodeState(cloud, n3, true);
    home = n2;
  }, 120_000);

  it('a migrating instance\'s stop, start and reboot are refused with OperationNotPermitted, nothing changed', async () => {
    const m = await adminCall(cloud, { Action: 'MigrateInstances', InstanceId: id });
    await until('the item to migrate', () => describeMigration(cloud, m.migrationId), (x) => arr<any>(x?.itemSet?.item).some((i) => ['preparing', 'ready', 'migrating'].includes(i.state)));
    for (const action of ['StopInstances', 'StartInstances', 'RebootInstances']) {
      const r = await cloud.query({ Action: action, 'InstanceId.1': id });
      expect(r.status, `${action}: ${r.text}`).toBe(409);
      expect(errorCode(r)).toBe('OperationNotPermitted');
    }
    const done = await until('the migration to end', () => describeMigration(cloud, m.migrationId), (x) => x?.state !== 'active', 120_000);
    const item = arr<any>(done.itemSet.item)[0];
    const dest = item?.destination as string;
    expect(item, JSON.stringify(item)).toMatchObject({ state: 'completed' });
    expect(await domainState(dest, id)).toBe('running');
    expect(ncRecord(dest, id)?.userStopped).toBeUndefined();
  }, 180_000);

  it('a drain moves the running instance live and re-homes the stopped one without starting it', async () => {
    const [run, stopped] = await placeOn(cloud, n1, 2) as [string, string];
    await until('both to run', async () => [await instance(run), await instance(stopped)], (xs) => xs.every((i) => i?.instanceState.name === 'running'));
    await adminCall(cloud, { Action: 'StopInstances', 'InstanceId.1': stopped });
    const m = await adminCall(cloud, { Action: 'MigrateInstances', SourceHost: n1, 'DestinationHost.1': n3 });
    expect(arr<any>(m.rehomedSet?.item)).toEqual([{ instanceId: stopped, destination: n3 }]);
    expect(arr<any>(m.notRehomedSet?.item)).toEqual([]);
    // Re-homed as its user left it: defined on n3, shut off, stopped by its user; n1 forgets it.
    expect(await domainState(n3, stopped)).toBe('shutoff');
    expect(ncRecord(n3, stopped)).toMatchObject({ phase: 'running', userStopped: true });
    expect(await domainState(n1, stopped)).toBeUndefined();
    expect(ncRecord(n1, stopped)?.phase).toBe('terminated');
    const done = await until('the drain to end', () => describeMigration(cloud, m.migrationId), (x) => x?.state !== 'active', 120_000);
    const items = arr<any>(done.itemSet.item);
    // Every running instance of n1 moved live (the earlier test's one may be there too); the stopped one is in no item.
    expect(items.find((i) => i.instanceId === run)).toMatchObject({ state: 'completed', destination: n3 });
    expect(items.map((i) => i.instanceId)).not.toContain(stopped);
    expect(items.every((i) => i.state === 'completed')).toBe(true);
    expect(await domainState(n3, run)).toBe('running');
    await until('the stopped one shown stopped on n3', () => instance(stopped), (i) => i?.nodeHost === n3 && i.instanceState.name === 'stopped');
    // Started there when its user asks.
    const s = await adminCall(cloud, { Action: 'StartInstances', 'InstanceId.1': stopped });
    expect(arr<any>(s.instancesSet.item)[0]).toMatchObject({ currentState: { name: 'running' }, nodeHost: n3 });
    expect(await domainState(n3, stopped)).toBe('running');
  }, 240_000);

  it('a drain of a node holding only stopped instances re-homes them as its plan (euca-migrate-instances -s --wait); then NothingToMigrate', async () => {
    const [stopped] = await placeOn(cloud, n1, 1) as [string];
    await until('it to run on n1', () => instance(stopped), (i) => i?.instanceState.name === 'running' && i.nodeHost === n1);
    await adminCall(cloud, { Action: 'StopInstances', 'InstanceId.1': stopped });
    const live = (await hypervisorDomains(cloud, n1)).filter((d) => d.state === 'running');
    expect(live, 'n1 runs nothing live (the drain above moved its running instances)').toEqual([]);
    const r = await cli('euca-migrate-instances', '-s', n1, '--include-dest', n2, '--wait', '--poll-ms', '200');
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const migrationId = /^MIGRATION\t(mig-[0-9a-f]+)\t/m.exec(r.stdout)?.[1] ?? '';
    expect(r.stdout).toMatch(new RegExp(`^INSTANCE\t${stopped}\t${n2.replace(/\./g, '\\.')}\tcompleted\t`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`^REHOMED\t${stopped}\t${n2.replace(/\./g, '\\.')}$`, 'm'));
    // Re-homed as its user left it: defined on n2, shut off, still stopped; n1 forgets it.
    expect(await domainState(n2, stopped)).toBe('shutoff');
    expect(ncRecord(n2, stopped)).toMatchObject({ phase: 'running', userStopped: true });
    expect(await domainState(n1, stopped)).toBeUndefined();
    // DescribeMigrations keeps it as a finished drain whose item is a cold move.
    const described = await describeMigration(cloud, migrationId);
    expect(described).toMatchObject({ migrationId, sourceHost: n1, kind: 'drain', state: 'completed' });
    expect(arr<any>(described.itemSet.item)).toEqual([expect.objectContaining({ instanceId: stopped, destination: n2, state: 'completed', cold: 'true' })]);
    await until('it shown stopped on n2', () => instance(stopped), (i) => i?.nodeHost === n2 && i.instanceState.name === 'stopped');
    // Nothing is left on n1 now: the drain is refused as before, and nothing changes.
    const again = await cloud.query({ Action: 'MigrateInstances', SourceHost: n1 });
    expect(errorCode(again), again.text).toBe('NothingToMigrate');
    expect(await domainState(n2, stopped)).toBe('shutoff');
  }, 180_000);

  it('bad input changes nothing: an unknown id next to a known one', async () => {
    const before = cloud.nodeHosts.map((h) => readFileSync(join(cloud.baseDir, 'hosts', h, 'nc', 'nc.json'), 'utf8')).join('');
    const r = await cloud.query({ Action: 'StopInstances', 'InstanceId.1': id, 'InstanceId.2': 'i-0000ffff' });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('InvalidInstanceID.NotFound');
    expect(cloud.nodeHosts.map((h) => readFileSync(join(cloud.baseDir, 'hosts', h, 'nc', 'nc.json'), 'utf8')).join('')).toBe(before);
  });
});

describe('boto3 and the aws CLI stop, start and reboot with their default settings', () => {
  let env: NodeJS.ProcessEnv;
  const call = (op: string, args: Record<string, unknown> = {}): Boto3Step => ({ call: op, args });
  const WAIT_FAST = { Delay: 1, MaxAttempts: 60 };

  beforeAll(async () => {
    env = awsToolEnv(await sourceCredentials(cloud.credentialsFile()), join(cloud.baseDir, 'home'));
  });

  it('boto3: stop_instances, the instance_stopped waiter, start_instances, instance_running, reboot_instances', async () => {
    const [id] = await placeOn(cloud, n3, 1) as [string];
    await until('the instance to run', () => instance(id), (i) => i?.instanceState.name === 'running');
    const stop = await boto3Ok(env, cloud.url, call('stop_instances', { InstanceIds: [id] }));
    expect(stop.StoppingInstances).toEqual([expect.objectContaining({
      InstanceId: id, PreviousState: { Code: 16, Name: 'running' }, CurrentState: { Code: 80, Name: 'stopped' },
    })]);
    expect(await boto3Ok(env, cloud.url, { wait: 'instance_stopped', args: { InstanceIds: [id] }, config: WAIT_FAST })).toBe(true);
    expect(await domainState(n3, id)).toBe('shutoff');
    const start = await boto3Ok(env, cloud.url, call('start_instances', { InstanceIds: [id] }));
    expect(start.StartingInstances).toEqual([expect.objectContaining({ InstanceId: id, PreviousState: { Code: 80, Name: 'stopped' }, CurrentState: { Code: 16, Name: 'running' } })]);
    expect(await boto3Ok(env, cloud.url, { wait: 'instance_running', args: { InstanceIds: [id] }, config: WAIT_FAST })).toBe(true);
    await boto3Ok(env, cloud.url, call('reboot_instances', { InstanceIds: [id] }));
    expect(await domainState(n3, id)).toBe('running');
    const [unknown] = await boto3(env, cloud.url, [call('stop_instances', { InstanceIds: ['i-0000ffff'] })]);
    expect(unknown?.error?.code, JSON.stringify(unknown)).toBe('InvalidInstanceID.NotFound');
    expect(await domainState(n3, id)).toBe('running');
  }, 240_000);

  it('aws ec2 stop-instances --force, start-instances, reboot-instances; an unknown id exits non-zero with its code', async () => {
    const [id] = await placeOn(cloud, n3, 1) as [string];
    await until('the instance to run', () => instance(id), (i) => i?.instanceState.name === 'running');
    const stop = await awsCli(env, cloud.url, ['stop-instances', '--instance-ids', id, '--force']);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.json.StoppingInstances[0]).toMatchObject({ InstanceId: id, CurrentState: { Name: 'stopped' }, PreviousState: { Name: 'running' } });
    const start = await awsCli(env, cloud.url, ['start-instances', '--instance-ids', id]);
    expect(start.code, start.stderr).toBe(0);
    expect(start.json.StartingInstances[0]).toMatchObject({ InstanceId: id, CurrentState: { Name: 'running' } });
    const reboot = await awsCli(env, cloud.url, ['reboot-instances', '--instance-ids', id]);
    expect(reboot.code, reboot.stderr).toBe(0);
    const bad = await awsCli(env, cloud.url, ['reboot-instances', '--instance-ids', 'i-0000ffff']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('InvalidInstanceID.NotFound');
    expect(await domainState(n3, id)).toBe('running');
  }, 240_000);
});
