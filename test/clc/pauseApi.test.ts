/**
 * PauseInstances / UnpauseInstances through the admin API (issue 18 part 6), over the fake CCs:
 * every class of bad input gets its coded error and changes nothing (no change reaches a CC); a
 * pause answers running + paused and shows in DescribeInstances and DescribeNodes; both are
 * admin-only and idempotent.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN_ONLY } from '../../clc/api/authorization.js';
import { FakeClusters } from './fakeClusters.js';
import { harness, items, query } from './harness.js';

const A = '127.0.76.11';
const code = (r: { doc: Record<string, unknown> }): string => ((r.doc as { Response?: { Errors?: { Error?: { Code?: string } } } }).Response?.Errors?.Error?.Code ?? '');

const cloud = (): FakeClusters => new FakeClusters({ cluster01: [{ host: A }, { host: '127.0.76.12' }] });

async function withRunning(n = 2) {
  const clusters = cloud();
  const fenced = new Set<string>();
  const h = await harness({
    clusters,
    haHooks: { beforeEnable: async () => undefined, afterEnable: async () => undefined, fencedHosts: () => fenced },
  });
  const run = await query(h.app, { Action: 'RunInstances', ImageId: 'emi-00000001', MinCount: String(n), 'Placement.AvailabilityZone': 'cluster01' });
  const ids = items(run.doc.RunInstancesResponse.instancesSet).map((i) => i.instanceId as string);
  for (const id of ids) clusters.setInstanceState(id, 'running');
  return { h, clusters, ids, fenced };
}

describe('PauseInstances / UnpauseInstances: bad input changes nothing', () => {
  const cases: [string, (ids: string[]) => Record<string, string>, number, string, ((c: FakeClusters, ids: string[], fenced: Set<string>) => void)?][] = [
    ['no InstanceId', () => ({ Action: 'PauseInstances' }), 400, 'MissingParameter'],
    ['a malformed InstanceId', () => ({ Action: 'PauseInstances', 'InstanceId.1': 'vm-1' }), 400, 'InvalidInstanceID.Malformed'],
    ['an unknown parameter', (ids) => ({ Action: 'PauseInstances', 'InstanceId.1': ids[0] as string, Force: 'true' }), 400, 'UnknownParameter'],
    ['an unknown instance (with a known one: nothing is paused)', (ids) => ({ Action: 'PauseInstances', 'InstanceId.1': ids[0] as string, 'InstanceId.2': 'i-0000ffff' }), 400, 'InvalidInstanceID.NotFound'],
    ['a terminated instance', (ids) => ({ Action: 'PauseInstances', 'InstanceId.1': ids[0] as string }), 409, 'IncorrectInstanceState', (c, ids) => c.setInstanceState(ids[0] as string, 'terminated')],
    ['a stopped instance', (ids) => ({ Action: 'UnpauseInstances', 'InstanceId.1': ids[0] as string }), 409, 'IncorrectInstanceState', (c, ids) => c.setInstanceState(ids[0] as string, 'stopped')],
    ['a migrating instance', (ids) => ({ Action: 'PauseInstances', 'InstanceId.1': ids[0] as string }), 409, 'OperationNotPermitted', (c, ids) => { (c.instance(ids[0] as string) as { migrationState: string }).migrationState = 'migrating'; }],
    ['an instance on a host HA fences', (ids) => ({ Action: 'PauseInstances', 'InstanceId.1': ids[0] as string }), 409, 'IncorrectInstanceState', (c, ids, fenced) => fenced.add(c.instance(ids[0] as string)?.host as string)],
  ];
  it.each(cases)('%s', async (_n, params, status, expected, prepare) => {
    const { h, clusters, ids, fenced } = await withRunning();
    prepare?.(clusters, ids, fenced);
    const calls = clusters.mutatingCalls().length;
    const before = clusters.snapshot();
    const storeBefore = JSON.stringify(h.store.read());
    const r = await query(h.app, params(ids));
    expect(r.status, r.text).toBe(status);
    expect(code(r)).toBe(expected);
    expect(clusters.mutatingCalls()).toHaveLength(calls);
    expect(clusters.snapshot()).toBe(before);
    expect(JSON.stringify(h.store.read())).toBe(storeBefore);
  });

  it('both are admin-only', () => {
    expect(ADMIN_ONLY.has('PauseInstances')).toBe(true);
    expect(ADMIN_ONLY.has('UnpauseInstances')).toBe(true);
  });
});

describe('PauseInstances / UnpauseInstances', () => {
  it('pauses (running stays running, paused=true), shows it in DescribeInstances and DescribeNodes, and unpauses', async () => {
    const { h, clusters, ids } = await withRunning();
    const id = ids[0] as string;
    const r = await query(h.app, { Action: 'PauseInstances', 'InstanceId.1': id });
    expect(r.status, r.text).toBe(200);
    expect(items(r.doc.PauseInstancesResponse.instancesSet)[0]).toMatchObject({
      instanceId: id, currentState: { name: 'running', code: '16' }, previousState: { name: 'running' }, paused: 'true', previouslyPaused: 'false',
    });
    expect(clusters.mutatingCalls().at(-1)).toMatchObject({ op: 'ccPauseInstance', req: { instanceId: id, paused: true } });

    const d = await query(h.app, { Action: 'DescribeInstances', 'InstanceId.1': id });
    const inst = items(items(d.doc.DescribeInstancesResponse.reservationSet)[0].instancesSet)[0];
    expect(inst).toMatchObject({ instanceState: { name: 'running' }, paused: 'true' });
    const other = await query(h.app, { Action: 'DescribeInstances', 'InstanceId.1': ids[1] as string });
    expect(items(items(other.doc.DescribeInstancesResponse.reservationSet)[0].instancesSet)[0].paused).toBeUndefined();
    const host = clusters.instance(id)?.host as string;
    const nodes = await query(h.app, { Action: 'DescribeNodes', ByHost: host });
    const listed = items(items(nodes.doc.DescribeNodesResponse.nodeSet)[0].instancesSet).find((i) => i.instanceId === id);
    expect(listed).toMatchObject({ paused: 'true' });

    // Idempotent: a second pause answers previouslyPaused=true.
    const again = await query(h.app, { Action: 'PauseInstances', 'InstanceId.1': id });
    expect(items(again.doc.PauseInstancesResponse.instancesSet)[0]).toMatchObject({ paused: 'true', previouslyPaused: 'true' });
    const un = await query(h.app, { Action: 'UnpauseInstances', 'InstanceId.1': id });
    expect(items(un.doc.UnpauseInstancesResponse.instancesSet)[0]).toMatchObject({ paused: 'false', previouslyPaused: 'true' });
    expect(clusters.instance(id)?.paused).toBeUndefined();
  });

  it('pauses several at once, each id once', async () => {
    const { h, clusters, ids } = await withRunning(2);
    const r = await query(h.app, { Action: 'PauseInstances', 'InstanceId.1': ids[0] as string, 'InstanceId.2': ids[1] as string, 'InstanceId.3': ids[0] as string });
    expect(items(r.doc.PauseInstancesResponse.instancesSet).map((i) => i.instanceId)).toEqual(ids);
    expect(ids.map((id) => clusters.instance(id)?.paused)).toEqual([true, true]);
  });
});
