/** DescribeInstanceStatus: the checks as a table over host facts, then through the admin API. */
import { describe, expect, it } from 'vitest';
import { instanceStatusOf, type HostFacts } from '../../clc/core/instanceStatus.js';
import type { InstanceView } from '../../clc/core/instanceView.js';
import type { HaNodeHooks } from '../../clc/core/nodeHooks.js';
import type { CcNode } from '../../shared/protocol/ccProtocol.js';
import { errorCode, harness, items, launchRunning, query } from './harness.js';

const HOST = '127.0.12.11';
const view: InstanceView = {
  instanceId: 'i-0000000a', reservationId: 'r-0000000a', ownerId: '000000000000', imageId: 'emi-0000000a', instanceType: 'm1.small',
  state: 'running', partition: 'cluster01', host: HOST, launchTime: 0, launchIndex: 0, migration: { state: 'none' }, reported: true,
};
const node: CcNode = {
  host: HOST, partition: 'cluster01', nodeState: 'enabled', reachable: true, healthy: true, lastSeen: 1,
  capacity: { cores: 4, memoryMiB: 4096, diskGiB: 100 }, used: { cores: 1, memoryMiB: 256, diskGiB: 5 }, instances: [],
};
const facts = (n: Partial<CcNode> | undefined, fenced = false): HostFacts => ({ node: n === undefined ? undefined : { ...node, ...n }, fenced });

describe('instanceStatusOf', () => {
  const cases: [string, Partial<InstanceView>, HostFacts, string, string, string[]][] = [
    // [name, view change, host, system, instance, event descriptions (prefix)]
    ['running on a good node', {}, facts({}), 'ok/passed', 'ok/passed', []],
    ['the node is in maintenance mode', {}, facts({ nodeState: 'disabled' }), 'ok/passed', 'ok/passed', ['node 127.0.12.11 is in maintenance mode']],
    ['the CC cannot reach the node', {}, facts({ reachable: false }), 'impaired/failed', 'insufficient-data/insufficient-data', []],
    ['the node\'s hypervisor is broken', {}, facts({ healthy: false }), 'impaired/failed', 'insufficient-data/insufficient-data', []],
    ['host HA fenced the node', {}, facts({}, true), 'impaired/failed', 'insufficient-data/insufficient-data', []],
    ['not heard from since the CC started', {}, facts({ nodeState: 'unknown' }), 'insufficient-data/insufficient-data', 'insufficient-data/insufficient-data', []],
    ['the node listing did not answer', {}, facts(undefined), 'insufficient-data/insufficient-data', 'insufficient-data/insufficient-data', []],
    ['pending', { state: 'pending' }, facts({}), 'initializing/initializing', 'initializing/initializing', []],
    ['terminated', { state: 'terminated', host: undefined }, facts(undefined), 'not-applicable', 'not-applicable', []],
    ['being migrated', { migration: { state: 'migrating', source: HOST, destination: '127.0.12.12' } }, facts({}), 'ok/passed', 'ok/passed',
      ['live migration 127.0.12.11 to 127.0.12.12 (migrating)']],
    ['queued in a drain', { migration: { state: 'none', source: HOST, destination: '127.0.12.12' } }, facts({}), 'ok/passed', 'ok/passed',
      ['live migration 127.0.12.11 to 127.0.12.12 (queued)']],
  ];
  it.each(cases)('%s', (_name, change, host, system, instance, events) => {
    const s = instanceStatusOf({ ...view, ...change }, host);
    const show = (c: { status: string; reachability?: string }) => [c.status, c.reachability].filter(Boolean).join('/');
    expect([show(s.system), show(s.instance)]).toEqual([system, instance]);
    expect(s.events.map((e) => e.code)).toEqual(events.map(() => 'system-maintenance'));
    events.forEach((prefix, i) => expect(s.events[i]?.description.startsWith(prefix)).toBe(true));
  });
});

function statuses(r: Awaited<ReturnType<typeof query>>): any[] {
  expect(r.status, r.text).toBe(200);
  return items(r.doc.DescribeInstanceStatusResponse.instanceStatusSet);
}

describe('DescribeInstanceStatus', () => {
  it('lists running instances with their checks; IncludeAllInstances adds the others', async () => {
    const h = await harness();
    const [running] = await launchRunning(h, 'cluster01');
    const pending = items((await query(h.app, { Action: 'RunInstances', ImageId: 'emi-00000001', 'Placement.AvailabilityZone': 'cluster02' })).doc.RunInstancesResponse.instancesSet)[0].instanceId;
    const shown = statuses(await query(h.app, { Action: 'DescribeInstanceStatus' }));
    expect(shown).toEqual([{
      instanceId: running, availabilityZone: 'cluster01', eventsSet: '', instanceState: { code: '16', name: 'running' },
      systemStatus: { status: 'ok', details: { item: { name: 'reachability', status: 'passed' } } },
      instanceStatus: { status: 'ok', details: { item: { name: 'reachability', status: 'passed' } } },
    }]);
    const all = statuses(await query(h.app, { Action: 'DescribeInstanceStatus', IncludeAllInstances: 'true' }));
    expect(all.map((s) => [s.instanceId, s.instanceStatus.status])).toEqual([[running, 'ok'], [pending, 'initializing']]);
  });

  it('shows maintenance mode as a system-maintenance event, and an unreachable host as impaired; filters select them', async () => {
    const h = await harness();
    const [a] = await launchRunning(h, 'cluster01');
    const [b] = await launchRunning(h, 'cluster02');
    const hostOf = (id: string) => h.clusters.instance(id)?.host as string;
    expect((await query(h.app, { Action: 'DisableService', Type: 'node', Host: hostOf(a as string) })).status).toBe(200);
    const nodeB = h.clusters.node(hostOf(b as string));
    if (nodeB) nodeB.reachable = false;
    const all = statuses(await query(h.app, { Action: 'DescribeInstanceStatus' }));
    expect(all.map((s) => [s.instanceId, s.systemStatus.status, items(s.eventsSet).map((e) => e.code)])).toEqual([
      [a, 'ok', ['system-maintenance']], [b, 'impaired', []],
    ]);
    const impaired = statuses(await query(h.app, { Action: 'DescribeInstanceStatus', 'Filter.1.Name': 'system-status.status', 'Filter.1.Value.1': 'impaired' }));
    expect(impaired.map((s) => s.instanceId)).toEqual([b]);
    const maintenance = statuses(await query(h.app, { Action: 'DescribeInstanceStatus', 'Filter.1.Name': 'event.code', 'Filter.1.Value.1': 'system-maintenance' }));
    expect(maintenance.map((s) => s.instanceId)).toEqual([a]);
  });

  it('shows a host HA fenced as impaired', async () => {
    const [hostA] = ['127.0.12.11'];
    const hooks: HaNodeHooks = {
      fencedHosts: () => new Set([hostA]), beforeEnable: () => Promise.resolve(), afterEnable: () => Promise.resolve(),
    } as unknown as HaNodeHooks;
    const h = await harness({ haHooks: hooks });
    const ids = await launchRunning(h, 'cluster01', 'm1.small', 2);
    const shown = statuses(await query(h.app, { Action: 'DescribeInstanceStatus' }));
    expect(shown.map((s) => [h.clusters.instance(s.instanceId)?.host === hostA, s.systemStatus.status])).toEqual(
      ids.map((id) => [h.clusters.instance(id)?.host === hostA, h.clusters.instance(id)?.host === hostA ? 'impaired' : 'ok']),
    );
  });

  it('pages like DescribeInstances and names unknown ids', async () => {
    const h = await harness();
    const ids = [...await launchRunning(h, 'cluster01', 'm1.small', 4), ...await launchRunning(h, 'cluster02', 'm1.small', 3)];
    const first = await query(h.app, { Action: 'DescribeInstanceStatus', MaxResults: '5' });
    const next = first.doc.DescribeInstanceStatusResponse.nextToken as string;
    const second = await query(h.app, { Action: 'DescribeInstanceStatus', MaxResults: '5', NextToken: next });
    expect([...statuses(first), ...statuses(second)].map((s) => s.instanceId).sort()).toEqual([...ids].sort());
    expect(second.doc.DescribeInstanceStatusResponse.nextToken).toBeUndefined();
    const bad = await query(h.app, { Action: 'DescribeInstanceStatus', 'InstanceId.1': 'i-0000ffff' });
    expect([bad.status, errorCode(bad)]).toEqual([400, 'InvalidInstanceID.NotFound']);
    const wrong = await query(h.app, { Action: 'DescribeInstanceStatus', NextToken: `${next}x` });
    expect([wrong.status, errorCode(wrong)]).toEqual([400, 'InvalidPaginationToken']);
    const filter = await query(h.app, { Action: 'DescribeInstanceStatus', 'Filter.1.Name': 'tag-key', 'Filter.1.Value.1': 'x' });
    expect([filter.status, errorCode(filter)]).toEqual([400, 'InvalidParameterValue']);
  });
});
