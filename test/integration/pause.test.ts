/**
 * Pause end to end (issue 18 part 6) with real processes on 127.0.76.0/24: two NCs (each with its
 * simulated hypervisor), a CC and a CLC, over mutual TLS. A running instance is paused with the CLI:
 * the NC's nc.json says so once the CLC has answered, its simulated domain is suspended and stops
 * writing its disk while the host's heartbeat goes on, DescribeInstances shows it running and
 * paused; kill -9 of its NC keeps it paused; unpaused, its disk is written again; paused again and
 * live-migrated by MigrateInstances InstanceId, it arrives paused on the other node; unpaused there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SimDriver } from '../../nc/hypervisor/sim/simDriver.js';
import { diskPath, heartbeatPath, decodeDiskCounter } from '../../nc/hypervisor/sim/hostLedger.js';
import { storageDirOf } from '../../scripts/cloudLayout.js';
import { cloudCli, TestCloud } from '../helpers/cloud.js';

const cloud = new TestCloud(76, 2);
const [n1, n2] = cloud.nodeHosts as [string, string];
const storage = storageDirOf({ baseDir: cloud.baseDir });

function arr<T>(x: T | T[] | undefined | ''): T[] {
  return x === undefined || x === '' ? [] : Array.isArray(x) ? x : [x];
}

const cli = (cmd: string, ...args: string[]) => cloudCli(cloud, cmd, ...args);

function ncStore(host: string): { instances: Record<string, { phase: string; paused?: boolean }> } {
  return JSON.parse(readFileSync(join(cloud.baseDir, 'hosts', host, 'nc', 'nc.json'), 'utf8')).data;
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

function heartbeatAt(host: string): number {
  return statSync(heartbeatPath(storage, host)).mtimeMs;
}

interface Inst { instanceId: string; nodeHost: string; instanceState: { name: string }; paused?: string }

async function instance(id: string): Promise<Inst | undefined> {
  const r = await cloud.query({ Action: 'DescribeInstances', 'InstanceId.1': id });
  if (r.status !== 200) return undefined;
  return arr<any>(arr<any>((r.doc.DescribeInstancesResponse as any).reservationSet?.item)[0]?.instancesSet?.item)[0];
}

/** Polls until `check` holds, with a generous deadline (a busy 2-core machine). */
async function until<T>(what: string, probe: () => Promise<T> | T, check: (v: T) => boolean, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  let last: T = await probe();
  while (!check(last)) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 200));
    last = await probe();
  }
  return last;
}

/** Waits until the host's activity writer has done two more rounds (each round rewrites the heartbeat). */
async function twoWriteRounds(host: string): Promise<void> {
  const first = await until(`a heartbeat of ${host}`, () => heartbeatAt(host), (t) => t > 0);
  const second = await until(`a newer heartbeat of ${host}`, () => heartbeatAt(host), (t) => t > first);
  await until(`a heartbeat of ${host} newer still`, () => heartbeatAt(host), (t) => t > second);
}

beforeAll(async () => { await cloud.start(); }, 120_000);
afterAll(async () => { await cloud.destroy(); });

describe('pausing an instance in a cloud of real processes', () => {
  let id = '';
  let home = '';

  it('pauses: persisted on the NC when the CLC answers, the domain suspended, shown running and paused', async () => {
    const r = await cloud.query({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '1', MaxCount: '1' });
    expect(r.status, r.text).toBe(200);
    const started = arr<Inst>((r.doc.RunInstancesResponse as any).instancesSet.item)[0] as Inst;
    id = started.instanceId;
    home = started.nodeHost;
    await until('the instance to run', () => instance(id), (i) => i?.instanceState.name === 'running');

    const out = await cli('euca-pause-instances', id);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout.trim()).toBe(`INSTANCE\t${id}\trunning\tpaused\t${home}\twas-unpaused`);
    // Read right after the answer: the NC persisted it before replying, and the domain is suspended.
    expect(ncStore(home).instances[id]?.paused).toBe(true);
    expect(await domainState(home, id)).toBe('suspended');
    expect(await instance(id)).toMatchObject({ instanceState: { name: 'running' }, paused: 'true' });
  }, 120_000);

  it('a paused guest stops writing its disk while its host\'s heartbeat goes on', async () => {
    const frozen = diskCounter(home, id);
    await twoWriteRounds(home);
    expect(diskCounter(home, id)).toBe(frozen);
  });

  it('kill -9 of its NC keeps it paused, and the restarted NC reports it', async () => {
    await cloud.restart(`nc-${home}`);
    await until('the NC to report it again', () => instance(id), (i) => i?.paused === 'true' && i.instanceState.name === 'running');
    expect(await domainState(home, id)).toBe('suspended');
    expect(ncStore(home).instances[id]?.paused).toBe(true);
  }, 120_000);

  it('unpaused, it runs and writes its disk again', async () => {
    const frozen = diskCounter(home, id);
    const r = await cloud.query({ Action: 'UnpauseInstances', 'InstanceId.1': id });
    expect(r.status, r.text).toBe(200);
    expect(await domainState(home, id)).toBe('running');
    expect(ncStore(home).instances[id]?.paused).toBeUndefined();
    await until('its disk to be written again', () => diskCounter(home, id), (c) => c > frozen);
    expect((await instance(id))?.paused).toBeUndefined();
  });

  it('paused and live-migrated, it arrives paused on the other node; unpaused there', async () => {
    const p = await cloud.query({ Action: 'PauseInstances', 'InstanceId.1': id });
    expect(p.status, p.text).toBe(200);
    const other = home === n1 ? n2 : n1;
    const m = await cloud.query({ Action: 'MigrateInstances', InstanceId: id });
    expect(m.status, m.text).toBe(200);
    const migrationId = String((m.doc.MigrateInstancesResponse as any).migrationId);
    const done = await until('the migration to end', () => cloud.query({ Action: 'DescribeMigrations', 'MigrationId.1': migrationId }),
      (r) => arr<any>((r.doc.DescribeMigrationsResponse as any)?.migrationSet?.item)[0]?.state !== 'active', 120_000);
    const item = arr<any>(arr<any>((done.doc.DescribeMigrationsResponse as any).migrationSet.item)[0].itemSet.item)[0];
    expect(item).toMatchObject({ instanceId: id, state: 'completed', destination: other });
    expect(await domainState(other, id)).toBe('suspended');
    expect(await domainState(home, id)).toBeUndefined();
    await until('the destination NC to record it paused', () => ncStore(other).instances[id]?.paused, (v) => v === true);
    await until('the instance shown on the other node, paused', () => instance(id), (i) => i?.nodeHost === other && i.paused === 'true');

    const u = await cli('euca-unpause-instances', id);
    expect(u.code, u.stderr).toBe(0);
    expect(u.stdout.trim()).toBe(`INSTANCE\t${id}\trunning\tunpaused\t${other}\twas-paused`);
    expect(await domainState(other, id)).toBe('running');
  }, 180_000);

  it('bad input changes nothing: an unknown id, and a terminated instance', async () => {
    const before = readFileSync(join(cloud.baseDir, 'hosts', n1, 'nc', 'nc.json'), 'utf8') + readFileSync(join(cloud.baseDir, 'hosts', n2, 'nc', 'nc.json'), 'utf8');
    const unknown = await cloud.query({ Action: 'PauseInstances', 'InstanceId.1': id, 'InstanceId.2': 'i-0000ffff' });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('InvalidInstanceID.NotFound');
    const after = readFileSync(join(cloud.baseDir, 'hosts', n1, 'nc', 'nc.json'), 'utf8') + readFileSync(join(cloud.baseDir, 'hosts', n2, 'nc', 'nc.json'), 'utf8');
    expect(after).toBe(before);
    expect(await instance(id)).not.toHaveProperty('paused');
  });
});
