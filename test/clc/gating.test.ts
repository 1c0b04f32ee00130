/**
 * The change gate through the API: while a DisableService or MigrateInstances is held open at the
 * fake CC, changes to its partition wait, and run after its reply against what it changed, in
 * arrival order; reads and other partitions go on; waiting is bounded (PartitionBusy, nothing done);
 * no change reaches a CC without the gate.
 */
import { describe, expect, it } from 'vitest';
import { ClcErrors } from '../../clc/core/errors.js';
import { PartitionGate } from '../../clc/core/partitionGate.js';
import { gatedClusters, openRequestGate } from '../../clc/core/requestGate.js';
import { ManualClock } from '../../shared/clock.js';
import { DEFAULT_VM_TYPES } from '../../shared/model/vmTypes.js';
import { FakeClusters, type RecordedCall } from './fakeClusters.js';
import { eventually, harness, items, launchRunning, query, type Harness, type QueryReply } from './harness.js';

const EMI = 'emi-00000001';

function cloud(): FakeClusters {
  return new FakeClusters({
    cluster01: [{ host: '127.0.12.11' }, { host: '127.0.12.12' }, { host: '127.0.12.13' }],
    cluster02: [{ host: '127.0.12.21' }],
  });
}

const label = (c: RecordedCall): string => `${c.partition}:${c.op}`;

/**
 * Sends `params` and resolves once the request waits in the gate of `partition`, with its reply to
 * come (boxed: an async function returning the bare promise would wait for the reply itself).
 */
async function sendAndWait(h: Harness, params: Record<string, string>, partition = 'cluster01'): Promise<{ reply: Promise<QueryReply> }> {
  const waiting = h.gate.waiting(partition);
  const reply = query(h.app, params);
  await eventually(() => h.gate.waiting(partition) > waiting, `${params.Action} waits in ${partition}`);
  return { reply };
}

describe('a pending DisableService', () => {
  it('holds a RunInstances that arrives meanwhile; it then runs after the reply, against the disabled node', async () => {
    const h = await harness({ clusters: cloud() });
    const held = h.clusters.hold('ccModifyNode');
    const disable = query(h.app, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11' });
    await held.reached;
    const callsSoFar = h.clusters.calls.length;

    const { reply: run } = await sendAndWait(h, { Action: 'RunInstances', ImageId: EMI, MinCount: '2' });
    // Reads are not gated.
    const read = await query(h.app, { Action: 'DescribeInstances' });
    expect(read.status).toBe(200);
    expect(h.clusters.calls.slice(callsSoFar).map(label)).toEqual(['cluster01:ccDescribeInstances', 'cluster02:ccDescribeInstances']);

    let disableAnswered = false;
    const disabled = disable.then((r) => { disableAnswered = true; return r; });
    held.release();
    const [d, r] = await Promise.all([disabled, run]);
    expect(disableAnswered).toBe(true);
    expect(d.status, d.text).toBe(200);
    expect(r.status, r.text).toBe(200);

    const order = h.clusters.calls.map(label);
    const modified = order.indexOf('cluster01:ccModifyNode');
    expect(order.indexOf('cluster01:ccDescribeResources')).toBeGreaterThan(modified);
    expect(order.indexOf('cluster01:ccRunInstances')).toBeGreaterThan(modified);
    // Before the disable, both would have gone to .11; after it, neither may.
    expect(items(r.doc.RunInstancesResponse.instancesSet).map((i) => i.nodeHost)).toEqual(['127.0.12.12', '127.0.12.12']);
  });

  it('holds TerminateInstances too, while a change to another partition goes ahead', async () => {
    const h = await harness({ clusters: cloud() });
    const [a] = await launchRunning(h, 'cluster01');
    const held = h.clusters.hold('ccModifyNode');
    const disable = query(h.app, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.12', Partition: 'cluster01' });
    await held.reached;
    const { reply: terminate } = await sendAndWait(h, { Action: 'TerminateInstances', 'InstanceId.1': a as string });
    const elsewhere = await query(h.app, { Action: 'RunInstances', ImageId: EMI, 'Placement.AvailabilityZone': 'cluster02' });
    expect(elsewhere.status, elsewhere.text).toBe(200);
    expect(h.clusters.calls.filter((c) => c.op === 'ccTerminateInstances')).toEqual([]);
    held.release();
    expect((await disable).status).toBe(200);
    expect((await terminate).status).toBe(200);
    expect(h.clusters.instance(a as string)?.state).toBe('terminated');
  });

  it('releases the waiting changes in the order they arrived', async () => {
    const h = await harness({ clusters: cloud() });
    const held = h.clusters.hold('ccModifyNode');
    const disable = query(h.app, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11' });
    await held.reached;
    const types = ['m1.medium', 't1.micro', 'c1.medium', 'm1.small'];
    const runs: Promise<QueryReply>[] = [];
    for (const t of types) runs.push((await sendAndWait(h, { Action: 'RunInstances', ImageId: EMI, InstanceType: t, 'Placement.AvailabilityZone': 'cluster01' })).reply);
    const start = h.clusters.calls.length;
    held.release();
    await disable;
    for (const r of await Promise.all(runs)) expect(r.status, r.text).toBe(200);
    const firstCalls = h.clusters.calls.slice(start).filter((c) => c.op === 'ccDescribeResources')
      .map((c) => (c.req as { vmTypes: { name: string }[] }).vmTypes[0]?.name);
    expect(firstCalls).toEqual(types);
  });

  it('a change that waits beyond the bound is refused with PartitionBusy, and did nothing', async () => {
    const h = await harness({ clusters: cloud() });
    const held = h.clusters.hold('ccModifyNode');
    const disable = query(h.app, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11' });
    await held.reached;
    const store = JSON.stringify(h.store.read());
    const { reply: run } = await sendAndWait(h, { Action: 'RunInstances', ImageId: EMI, 'Placement.AvailabilityZone': 'cluster01' });
    h.clock.advance(30_000);
    const r = await run;
    expect(r.status).toBe(503);
    expect(r.doc.Response.Errors.Error.Code).toBe('PartitionBusy');
    expect(r.doc.Response.Errors.Error.Message).toBe(
      'Partition cluster01 is busy (DisableService of node 127.0.12.11 is pending); the request was not run: it waited 30000 ms; retry later');
    expect(ClcErrors.table.PartitionBusy.retryable).toBe(true);
    expect(h.clusters.calls.filter((c) => c.op === 'ccRunInstances' || c.op === 'ccDescribeResources')).toEqual([]);
    expect(JSON.stringify(h.store.read())).toBe(store);
    held.release();
    expect((await disable).status).toBe(200);
  });

  it('a full queue refuses the next change at once', async () => {
    const h = await harness({ clusters: cloud(), gateLimits: { maxWaiting: 1, maxWaitMs: 30_000 } });
    const held = h.clusters.hold('ccModifyNode');
    const disable = query(h.app, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11' });
    await held.reached;
    const { reply: first } = await sendAndWait(h, { Action: 'RunInstances', ImageId: EMI, 'Placement.AvailabilityZone': 'cluster01' });
    const second = await query(h.app, { Action: 'RunInstances', ImageId: EMI, 'Placement.AvailabilityZone': 'cluster01' });
    expect(second.status).toBe(503);
    expect(second.doc.Response.Errors.Error.Code).toBe('PartitionBusy');
    expect(second.doc.Response.Errors.Error.Message).toContain('1 requests already wait for it');
    held.release();
    expect((await disable).status).toBe(200);
    expect((await first).status).toBe(200);
    expect(h.clusters.calls.filter((c) => c.op === 'ccRunInstances')).toHaveLength(1);
  });

  it('a DisableService that fails still lets the waiting changes go', async () => {
    const h = await harness({ clusters: cloud() });
    const held = h.clusters.hold('ccModifyNode');
    const disable = query(h.app, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11' });
    await held.reached;
    const { reply: run } = await sendAndWait(h, { Action: 'RunInstances', ImageId: EMI });
    h.clusters.down.add('cluster01');
    held.release();
    expect((await disable).status).toBe(503);
    const r = await run;
    expect(r.status, r.text).toBe(200);
    expect(items(r.doc.RunInstancesResponse.instancesSet)[0].placement.availabilityZone).toBe('cluster02');
  });
});

describe('a pending MigrateInstances', () => {
  it('holds a RunInstances that arrives meanwhile; it then runs against the reserved capacity', async () => {
    const h = await harness({ clusters: cloud() });
    await launchRunning(h, 'cluster01', 'c1.medium', 2); // .11 full
    h.clusters.calls.length = 0;
    const held = h.clusters.hold('ccMigrateInstances');
    const drain = query(h.app, { Action: 'MigrateInstances', SourceHost: '127.0.12.11', ReserveDestinations: 'true' });
    await held.reached;
    const { reply: run } = await sendAndWait(h, { Action: 'RunInstances', ImageId: EMI, 'Placement.AvailabilityZone': 'cluster01' });
    expect((await query(h.app, { Action: 'DescribeMigrations' })).status).toBe(200);
    expect(h.clusters.calls.filter((c) => c.op === 'ccRunInstances')).toEqual([]);
    held.release();
    const [d, r] = await Promise.all([drain, run]);
    expect(d.status, d.text).toBe(200);
    expect(items(d.doc.MigrateInstancesResponse.itemSet).map((i) => i.destination)).toEqual(['127.0.12.12', '127.0.12.12']);
    expect(r.status, r.text).toBe(200);
    // Had it run first it would have taken .12, which the plan now holds whole.
    expect(items(r.doc.RunInstancesResponse.instancesSet).map((i) => i.nodeHost)).toEqual(['127.0.12.13']);
    const order = h.clusters.calls.map(label);
    expect(order.lastIndexOf('cluster01:ccDescribeResources')).toBeGreaterThan(order.indexOf('cluster01:ccMigrateInstances'));
  });

  it('holds a CancelMigration and a DisableService of its partition behind it, in order', async () => {
    const h = await harness({ clusters: cloud() });
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    const first = await query(h.app, { Action: 'MigrateInstances', InstanceId: a as string });
    const held = h.clusters.hold('ccMigrateInstances');
    const second = query(h.app, { Action: 'MigrateInstances', InstanceId: b as string });
    await held.reached;
    const { reply: cancel } = await sendAndWait(h, { Action: 'CancelMigration', MigrationId: first.doc.MigrateInstancesResponse.migrationId });
    const { reply: disable } = await sendAndWait(h, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.13' });
    held.release();
    for (const r of await Promise.all([second, cancel, disable])) expect(r.status, r.text).toBe(200);
    expect(h.clusters.mutatingCalls().slice(-3).map((c) => c.op)).toEqual(['ccMigrateInstances', 'ccCancelMigration', 'ccModifyNode']);
  });
});

describe('gatedClusters', () => {
  it('sends a change only into a partition the request holds; reads always', async () => {
    const fake = cloud();
    const gate = new PartitionGate({ clock: new ManualClock(0) });
    const request = openRequestGate(gate);
    const clusters = gatedClusters(fake, request);
    const modify = { host: '127.0.12.11', stateName: 'disabled' as const, vmTypes: [...DEFAULT_VM_TYPES] };

    await expect(clusters.call('cluster01', 'ccModifyNode', modify)).rejects.toMatchObject({ code: 'InternalError' });
    await expect(clusters.call('cluster01', 'ccDescribeNodes', {})).resolves.toMatchObject({ partition: 'cluster01' });
    const t = request.enter('exclusive', 'test', ['cluster02']);
    await t.ready();
    await expect(clusters.call('cluster01', 'ccModifyNode', modify)).rejects.toMatchObject({ code: 'InternalError' });
    expect(fake.mutatingCalls()).toEqual([]);

    request.enter('exclusive', 'test', ['cluster01']);
    await expect(clusters.call('cluster01', 'ccModifyNode', modify)).resolves.toMatchObject({ previousState: 'enabled' });
    request.leaveAll();
    expect(gate.waiting()).toBe(0);
    await expect(clusters.call('cluster01', 'ccModifyNode', modify)).rejects.toMatchObject({ code: 'InternalError' });
  });
});
