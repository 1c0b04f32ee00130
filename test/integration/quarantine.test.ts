/**
 * Quarantine end to end (issue 18 part 7) with real processes on 127.0.73.0/24: three NCs (each with
 * its simulated hypervisor), a CC and a CLC, over mutual TLS. A node with instances is quarantined:
 * its nc.json says so once the CLC has answered; RunInstances never lands there; a drain of another
 * node never picks it; MigrateInstances SourceHost of it is refused naming its instances, InstanceId
 * of one of them is allowed; EnableService is refused; it survives NC, CC and CLC restarts (kill -9);
 * the CLI shows and lifts it; lifted, the node stays disabled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cloudCli, TestCloud, type QueryResult } from '../helpers/cloud.js';

const cloud = new TestCloud(73, 3);
const [n1, n2, n3] = cloud.nodeHosts as [string, string, string];

function arr<T>(x: T | T[] | undefined | ''): T[] {
  return x === undefined || x === '' ? [] : Array.isArray(x) ? x : [x];
}

const codeOf = (r: QueryResult): string => /<Code>([^<]*)<\/Code>/.exec(r.text)?.[1] ?? '';

const cli = (cmd: string, ...args: string[]) => cloudCli(cloud, cmd, ...args);

/** nc.json of a host as its NC last made it durable. */
function ncStore(host: string): { nodeState: string; quarantine?: { since: number; reason: string }; instances: Record<string, { phase: string }> } {
  return JSON.parse(readFileSync(join(cloud.baseDir, 'hosts', host, 'nc', 'nc.json'), 'utf8')).data;
}

interface Inst { instanceId: string; nodeHost: string; instanceState: { name: string } }

async function runInstances(count: number): Promise<Inst[]> {
  const r = await cloud.query({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: String(count), MaxCount: String(count) });
  expect(r.status, r.text).toBe(200);
  return arr<Inst>((r.doc.RunInstancesResponse as any).instancesSet.item);
}

async function node(host: string): Promise<Record<string, any> | undefined> {
  const r = await cloud.query({ Action: 'DescribeNodes', ByHost: host });
  return r.status === 200 ? arr<any>((r.doc.DescribeNodesResponse as any).nodeSet.item)[0] : undefined;
}

/** Polls until `check` holds, with a generous deadline (a busy 2-core machine). */
async function until<T>(what: string, probe: () => Promise<T>, check: (v: T) => boolean, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  let last: T = await probe();
  while (!check(last)) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 250));
    last = await probe();
  }
  return last;
}

beforeAll(async () => { await cloud.start(); }, 120_000);
afterAll(async () => { await cloud.destroy(); });

describe('a quarantined node in a cloud of real processes', () => {
  let onN1: string[] = [];

  it('quarantine is on the NC\'s disk when the CLC answers; the node is disabled and shown quarantined', async () => {
    // Six small instances over three nodes (spread): n1 gets some.
    const started = await runInstances(6);
    onN1 = started.filter((i) => i.nodeHost === n1).map((i) => i.instanceId);
    expect(onN1.length).toBeGreaterThan(0);
    const out = await cli('euca-quarantine-node', n1, '-r', 'unexpected outbound traffic');
    expect(out.code, out.stderr).toBe(0);
    // Read right after the answer: the NC persisted it before replying.
    const stored = ncStore(n1);
    expect(stored.nodeState).toBe('disabled');
    expect(stored.quarantine?.reason).toBe('unexpected outbound traffic');
    expect(out.stdout).toContain(`QUARANTINE\t${n1}\t`);
    for (const id of onN1) expect(stored.instances[id]?.phase).toBe('running');
    expect(await node(n1)).toMatchObject({ state: 'DISABLED', quarantined: 'true', quarantineReason: 'unexpected outbound traffic' });
    const services = await cli('euca-describe-services');
    expect(services.stdout).toMatch(new RegExp(`SERVICE\tnode\tcluster01\t${n1.replaceAll('.', '\\.')}\tDISABLED`));
  });

  it('refuses a second quarantine and an enable, with nothing changed', async () => {
    const before = readFileSync(join(cloud.baseDir, 'hosts', n1, 'nc', 'nc.json'), 'utf8');
    const again = await cloud.query({ Action: 'QuarantineNode', Host: n1, Reason: 'again' });
    expect([again.status, codeOf(again)]).toEqual([409, 'NodeQuarantined']);
    const enable = await cloud.query({ Action: 'EnableService', Type: 'NODE', Host: n1 });
    expect([enable.status, codeOf(enable)]).toEqual([409, 'NodeQuarantined']);
    expect(readFileSync(join(cloud.baseDir, 'hosts', n1, 'nc', 'nc.json'), 'utf8')).toBe(before);
  });

  it('RunInstances never lands on it; a drain of another node never picks it', async () => {
    const placed = await runInstances(3);
    expect(placed.map((i) => i.nodeHost)).not.toContain(n1);
    const onN2 = (await node(n2))?.instancesSet;
    expect(arr<any>(onN2?.item).length).toBeGreaterThan(0);
    const drain = await cloud.query({ Action: 'MigrateInstances', SourceHost: n2, Partial: 'true' });
    expect(drain.status, drain.text).toBe(200);
    const items = arr<any>((drain.doc.MigrateInstancesResponse as any).itemSet?.item);
    expect(items.length).toBeGreaterThan(0);
    for (const i of items) expect(i.destination).not.toBe(n1);
    // Naming it as the destination is refused.
    const named = await cloud.query({ Action: 'MigrateInstances', SourceHost: n3, 'DestinationHost.1': n1 });
    expect([named.status, codeOf(named)]).toEqual([409, 'NodeQuarantined']);
    const migrationId = String((drain.doc.MigrateInstancesResponse as any).migrationId);
    await until('the drain of n2 to end', () => cloud.query({ Action: 'DescribeMigrations', 'MigrationId.1': migrationId }),
      (r) => arr<any>((r.doc.DescribeMigrationsResponse as any)?.migrationSet?.item)[0]?.state !== 'active', 120_000);
    expect(ncStore(n1).instances).toSatisfy((recs: Record<string, unknown>) => Object.keys(recs).every((id) => onN1.includes(id)));
  }, 180_000);

  it('a drain of it is refused naming its instances; one named instance moves', async () => {
    const drain = await cloud.query({ Action: 'MigrateInstances', SourceHost: n1 });
    expect([drain.status, codeOf(drain)]).toEqual([409, 'NodeQuarantined']);
    for (const id of onN1) expect(drain.text).toContain(id);
    const id = onN1[0] as string;
    const one = await cloud.query({ Action: 'MigrateInstances', InstanceId: id });
    expect(one.status, one.text).toBe(200);
    const migrationId = String((one.doc.MigrateInstancesResponse as any).migrationId);
    const done = await until('the named instance to move', () => cloud.query({ Action: 'DescribeMigrations', 'MigrationId.1': migrationId }),
      (r) => arr<any>((r.doc.DescribeMigrationsResponse as any)?.migrationSet?.item)[0]?.state !== 'active', 120_000);
    const item = arr<any>(arr<any>((done.doc.DescribeMigrationsResponse as any).migrationSet.item)[0].itemSet.item)[0];
    expect(item).toMatchObject({ instanceId: id, state: 'completed' });
    expect(item.destination).not.toBe(n1);
    onN1 = onN1.slice(1);
  }, 180_000);

  it('survives kill -9 of its NC, the CC and the CLC', async () => {
    for (const name of [`nc-${n1}`, 'cc', 'clc']) await cloud.restart(name);
    const shown = await until('n1 reported quarantined again', () => node(n1), (n) => n?.quarantined === 'true' && n?.reachable === 'true');
    expect(shown).toMatchObject({ state: 'DISABLED', quarantineReason: 'unexpected outbound traffic' });
    expect(ncStore(n1).quarantine?.reason).toBe('unexpected outbound traffic');
    const placed = await runInstances(1);
    expect(placed[0]?.nodeHost).not.toBe(n1);
  }, 120_000);

  it('lifted, the node stays disabled; EnableService then returns it to service', async () => {
    const out = await cli('euca-unquarantine-node', n1);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).not.toContain('QUARANTINE\t');
    const stored = ncStore(n1);
    expect(stored.quarantine).toBeUndefined();
    expect(stored.nodeState).toBe('disabled');
    expect(await node(n1)).toMatchObject({ state: 'DISABLED', quarantined: 'false' });
    const again = await cloud.query({ Action: 'UnquarantineNode', Host: n1 });
    expect([again.status, codeOf(again)]).toEqual([409, 'NodeNotQuarantined']);
    const enable = await cloud.query({ Action: 'EnableService', Type: 'NODE', Host: n1 });
    expect(enable.status, enable.text).toBe(200);
    expect(ncStore(n1).nodeState).toBe('enabled');
  });
});
