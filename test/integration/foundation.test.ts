/**
 * Issue 2's "done when", end to end with real processes on 127.0.20.0/24: three NCs (each with its
 * simulated-hypervisor daemon), a CC and a CLC; the CLI against them; maintenance mode steering
 * RunInstances; every process killed with SIGKILL and restarted without losing anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudCli, TestCloud } from '../helpers/cloud.js';

const cloud = new TestCloud(20, 3);
const [n1, n2, n3] = cloud.nodeHosts as [string, string, string];

const cli = (cmd: string, ...args: string[]) => cloudCli(cloud, cmd, ...args);

function arr<T>(x: T | T[] | undefined | ''): T[] {
  return x === undefined || x === '' ? [] : Array.isArray(x) ? x : [x];
}

interface Inst { instanceId: string; nodeHost: string; instanceState: { name: string } }
async function instances(): Promise<Inst[]> {
  const r = await cloud.query({ Action: 'DescribeInstances' });
  expect(r.status).toBe(200);
  const res = (r.doc.DescribeInstancesResponse as any).reservationSet;
  return arr<any>(res?.item).flatMap((rv) => arr<Inst>(rv.instancesSet?.item));
}

async function runInstances(count: number): Promise<Inst[]> {
  const r = await cloud.query({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: String(count), MaxCount: String(count) });
  expect(r.status, r.text).toBe(200);
  return arr<Inst>((r.doc.RunInstancesResponse as any).instancesSet.item);
}

async function nodeStates(): Promise<Record<string, string>> {
  const r = await cloud.query({ Action: 'DescribeNodes' });
  expect(r.status).toBe(200);
  return Object.fromEntries(arr<any>((r.doc.DescribeNodesResponse as any).nodeSet.item).map((n) => [n.host, n.state]));
}

beforeAll(async () => { await cloud.start(); });
afterAll(async () => { await cloud.destroy(); });

describe('a three-tier cloud of real processes', () => {
  it('euca-describe-nodes shows three enabled nodes and the instances beneath them', async () => {
    const started = await runInstances(3);
    expect(started).toHaveLength(3);
    const out = await cli('euca-describe-nodes');
    expect(out.code).toBe(0);
    const nodeRows = out.stdout.split('\n').filter((l) => l.startsWith('NODE\t'));
    expect(nodeRows.map((l) => l.split('\t').slice(1, 4))).toEqual([
      ['cluster01', n1, 'ENABLED'], ['cluster01', n2, 'ENABLED'], ['cluster01', n3, 'ENABLED'],
    ]);
    for (const i of started) expect(out.stdout).toContain(`INSTANCE\t${i.instanceId}`);
  });

  it('euca-modify-service -s DISABLED makes RunInstances avoid the node', async () => {
    const out = await cli('euca-modify-service', '-s', 'DISABLED', n1);
    expect(out.code, out.stderr).toBe(0);
    expect((await nodeStates())[n1]).toBe('DISABLED');
    const placed = await runInstances(4);
    expect(placed.map((i) => i.nodeHost)).not.toContain(n1);
    const all = await instances();
    expect(all).toHaveLength(7);
    expect(all.every((i) => i.instanceState.name === 'running')).toBe(true);
  });

  it('loses nothing when every Ferry process is killed with SIGKILL and restarted', async () => {
    const before = new Map((await instances()).map((i) => [i.instanceId, i.nodeHost]));
    const ferry = cloud.names().filter((n) => !n.startsWith('simhv-'));
    for (const name of ferry) await cloud.crash(name);
    await cloud.start(ferry);
    expect(await nodeStates()).toEqual({ [n1]: 'DISABLED', [n2]: 'ENABLED', [n3]: 'ENABLED' });
    const after = await instances();
    expect(new Map(after.map((i) => [i.instanceId, i.nodeHost]))).toEqual(before);
    // The hypervisors kept the VMs running while the NCs were down; the NCs re-adopted them.
    expect(after.every((i) => i.instanceState.name === 'running')).toBe(true);
    const placed = await runInstances(2);
    expect(placed.map((i) => i.nodeHost)).not.toContain(n1);
  });

  it('keeps node state and instance records when the hypervisors die too (a power loss)', async () => {
    const before = new Map((await instances()).map((i) => [i.instanceId, i.nodeHost]));
    for (const name of cloud.names()) await cloud.crash(name);
    await cloud.start();
    expect(await nodeStates()).toEqual({ [n1]: 'DISABLED', [n2]: 'ENABLED', [n3]: 'ENABLED' });
    const after = await instances();
    expect(new Map(after.map((i) => [i.instanceId, i.nodeHost]))).toEqual(before);
    // A host that lost power lost its running VMs: they are reported stopped, never silently dropped.
    expect(after.every((i) => i.instanceState.name === 'stopped')).toBe(true);
  });

  it('takes a re-enabled node back into scheduling', async () => {
    const out = await cli('euca-modify-service', '-s', 'ENABLED', n1);
    expect(out.code, out.stderr).toBe(0);
    // n1 now has the most free room, so the spread policy picks it.
    const placed = await runInstances(1);
    expect(placed[0]?.nodeHost).toBe(n1);
  });

  it.each([
    ['an unknown action', { Action: 'FlyToTheMoon' }, 400, 'InvalidAction'],
    ['a node that does not exist', { Action: 'DisableService', Type: 'NODE', Host: '127.0.20.99' }, 400, 'InvalidHost.NotFound'],
    ['a wrong service type', { Action: 'DisableService', Type: 'STORAGE', Host: n2 }, 400, 'InvalidServiceType'],
  ])('answers %s with a coded EC2 error and changes nothing', async (_name, params, status, code) => {
    const before = await nodeStates();
    const r = await cloud.query(params as Record<string, string>);
    expect(r.status).toBe(status);
    expect(r.text).toContain(`<Code>${code}</Code>`);
    expect(await nodeStates()).toEqual(before);
  });

  it('prints the API code and exits non-zero on a CLI error', async () => {
    const out = await cli('euca-terminate-instances', 'i-00000000');
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('InvalidInstanceID.NotFound');
  });
});
