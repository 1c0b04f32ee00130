/**
 * Live migration through the HTTP pipeline over the fake Clusters: MigrateInstances (drain, one
 * instance, partial, allow/deny, reservations), DescribeMigrations, CancelMigration, the migration
 * columns of DescribeInstances and DescribeNodes, and OperationNotPermitted on migrating instances.
 */
import { describe, expect, it } from 'vitest';
import { FakeClusters } from './fakeClusters.js';
import { harness, items, launchRunning, query, type Harness } from './harness.js';

/** cluster01: three 4-core nodes; cluster02: two. */
function threeNodeCloud(): FakeClusters {
  return new FakeClusters({
    cluster01: [{ host: '127.0.12.11' }, { host: '127.0.12.12' }, { host: '127.0.12.13' }],
    cluster02: [{ host: '127.0.12.21' }, { host: '127.0.12.22' }],
  });
}

async function migrate(h: Harness, params: Record<string, string>) {
  const r = await query(h.app, { Action: 'MigrateInstances', ...params });
  expect(r.status, r.text).toBe(200);
  return r.doc.MigrateInstancesResponse;
}

async function describeMigrations(h: Harness, params: Record<string, string> = {}) {
  const r = await query(h.app, { Action: 'DescribeMigrations', ...params });
  expect(r.status, r.text).toBe(200);
  return r.doc.DescribeMigrationsResponse;
}

function instancesOf(doc: any): any[] {
  return items(doc.DescribeInstancesResponse.reservationSet).flatMap((res) => items(res.instancesSet));
}

describe('MigrateInstances', () => {
  it('drains a node: plan, destinations, and the matrix after the reservation', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const ids = await launchRunning(h, 'cluster01', 'c1.medium', 2);
    expect(ids.map((id) => h.clusters.instance(id)?.host)).toEqual(['127.0.12.11', '127.0.12.11']);

    const r = await query(h.app, { Action: 'MigrateInstances', SourceHost: '127.0.12.11' });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toContain('<MigrateInstancesResponse xmlns="http://msgs.eucalyptus.com/">');
    const body = r.doc.MigrateInstancesResponse;
    expect(body).toMatchObject({
      migrationId: 'mig-00000001', partition: 'cluster01', sourceHost: '127.0.12.11', kind: 'drain', state: 'active',
      cancelRequested: 'false', allowHosts: 'true', reserveDestinations: 'false',
    });
    expect(items(body.itemSet).map((i) => [i.instanceId, i.instanceType, i.destination, i.state])).toEqual([
      [ids[0], 'c1.medium', '127.0.12.12', 'queued'], [ids[1], 'c1.medium', '127.0.12.12', 'queued'],
    ]);
    expect(items(body.unplacedSet)).toEqual([]);
    // .11 is full (its instances are still there), .12 is reserved by the plan, .13 is free: 2 c1.medium.
    expect(items(body.resourceMatrix).find((m) => m.vmType === 'c1.medium')).toMatchObject({ available: '2', max: '6' });

    const call = h.clusters.calls.find((c) => c.op === 'ccMigrateInstances');
    expect(call?.partition).toBe('cluster01');
    expect(call?.req).toMatchObject({ sourceHost: '127.0.12.11', destinations: [], allowHosts: true, reserveDestinations: false, partial: false });
    expect(call?.req).not.toHaveProperty('instanceId');
    expect((call?.req as { vmTypes: unknown[] }).vmTypes).toHaveLength(17);
  });

  it('moves one instance, asking only the partition its record names', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const [id] = await launchRunning(h, 'cluster02');
    h.clusters.calls.length = 0;
    const body = await migrate(h, { InstanceId: (id as string).toUpperCase() });
    expect(body).toMatchObject({ partition: 'cluster02', sourceHost: '127.0.12.21', kind: 'instance' });
    expect(items(body.itemSet).map((i) => [i.instanceId, i.destination])).toEqual([[id, '127.0.12.22']]);
    expect(h.clusters.calls.map((c) => `${c.partition}:${c.op}`)).toEqual(['cluster02:ccDescribeInstances', 'cluster02:ccMigrateInstances']);
  });

  it('DestinationHost with AllowHosts=true names the only destinations; false forbids them', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    const allowed = await migrate(h, { InstanceId: a as string, 'DestinationHost.1': '127.0.12.13' });
    expect(items(allowed.itemSet)[0].destination).toBe('127.0.12.13');
    expect(items(allowed.destinationHostSet)).toEqual(['127.0.12.13']);
    const denied = await migrate(h, { InstanceId: b as string, 'DestinationHost.1': '127.0.12.12', AllowHosts: 'false' });
    expect(items(denied.itemSet)[0].destination).toBe('127.0.12.13');
    expect(denied.allowHosts).toBe('false');
  });

  it('an allowed disabled node may take instances; without being named it may not', async () => {
    const h = await harness({ clusters: new FakeClusters({ cluster01: [{ host: '127.0.12.11' }, { host: '127.0.12.12', nodeState: 'disabled' }, { host: '127.0.12.13' }] }) });
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    expect(items((await migrate(h, { InstanceId: a as string })).itemSet)[0].destination).toBe('127.0.12.13');
    expect(items((await migrate(h, { InstanceId: b as string, 'DestinationHost.1': '127.0.12.12' })).itemSet)[0].destination).toBe('127.0.12.12');
  });

  it('Partial=true migrates what fits and names the rest with reasons', async () => {
    const h = await harness();
    const onSource = await launchRunning(h, 'cluster01', 'c1.medium', 2);
    await launchRunning(h, 'cluster01', 'c1.medium', 1); // lands on .12: room for one more c1.medium there
    const body = await migrate(h, { SourceHost: '127.0.12.11', Partial: 'true' });
    expect(items(body.itemSet).map((i) => [i.instanceId, i.destination, i.state])).toEqual([
      [onSource[0], '127.0.12.12', 'queued'], [onSource[1], '', 'failed'],
    ]);
    expect(items(body.itemSet)[1].error).toMatch(/insufficient-capacity/);
    expect(items(body.unplacedSet)).toEqual([{ instanceId: onSource[1], reason: 'insufficient-capacity' }]);
    expect((h.clusters.calls.find((c) => c.op === 'ccMigrateInstances')?.req as { partial: boolean }).partial).toBe(true);
  });

  it('ReserveDestinations holds the destination whole: no new instance lands there', async () => {
    const hosts = async (reserve: boolean) => {
      const h = await harness({ clusters: threeNodeCloud() });
      const [a] = await launchRunning(h, 'cluster01', 'c1.medium', 2);
      const m = await migrate(h, { InstanceId: a as string, ...(reserve ? { ReserveDestinations: 'true' } : {}) });
      const run = await query(h.app, { Action: 'RunInstances', ImageId: 'emi-00000001', MinCount: '3', 'Placement.AvailabilityZone': 'cluster01' });
      expect(run.status, run.text).toBe(200);
      return {
        small: items(m.resourceMatrix).find((x) => x.vmType === 'm1.small').available as string,
        placed: items(run.doc.RunInstancesResponse.instancesSet).map((i) => i.nodeHost as string),
      };
    };
    // .11 is full; the plan holds 2 of .12's 4 cores. Without the reservation .12 still offers 2 m1.small.
    expect(await hosts(false)).toEqual({ small: '6', placed: ['127.0.12.12', '127.0.12.12', '127.0.12.13'] });
    expect(await hosts(true)).toEqual({ small: '4', placed: ['127.0.12.13', '127.0.12.13', '127.0.12.13'] });
  });
});

describe('DescribeMigrations', () => {
  it('follows items through their states with progress, timings and statistics', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const [id] = await launchRunning(h, 'cluster01', 'm1.medium');
    const { migrationId } = await migrate(h, { InstanceId: id as string });
    const stateAfter = async (): Promise<any> => items((await describeMigrations(h, { 'MigrationId.1': migrationId })).migrationSet)[0];

    let m = await stateAfter();
    expect(m).toMatchObject({ migrationId, partition: 'cluster01', sourceHost: '127.0.12.11', state: 'active', sourceReachable: 'true' });
    expect(items(m.itemSet)[0]).toMatchObject({ instanceId: id, state: 'queued', attempts: '1', queuedAt: '2013-06-01T12:00:00.000Z' });
    expect(items(m.itemSet)[0].startedAt).toBeUndefined();

    h.clusters.advanceMigrations(); // preparing
    h.clusters.advanceMigrations(); // ready
    h.clusters.advanceMigrations(); // migrating, half copied
    m = await stateAfter();
    expect(items(m.itemSet)[0]).toMatchObject({
      state: 'migrating', startedAt: '2013-06-01T12:00:01.000Z',
      progress: { bytesTotal: String(512 * 1024 * 1024), bytesTransferred: String(256 * 1024 * 1024), iteration: '1' },
    });

    h.clusters.advanceMigrations(); // cleaning
    h.clusters.advanceMigrations(); // completed
    m = await stateAfter();
    expect(m.state).toBe('completed');
    expect(items(m.itemSet)[0]).toMatchObject({
      state: 'completed', endedAt: '2013-06-01T12:00:05.000Z', elapsedMs: '4000',
      stats: { elapsedMs: '4000', downtimeMs: '42', bytesTransferred: String(512 * 1024 * 1024), iterations: '2' },
    });
    expect(h.clusters.instance(id as string)?.host).toBe('127.0.12.12');
  });

  it('an item that rolled back leaves the migration incomplete, with its error', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    const { migrationId } = await migrate(h, { SourceHost: '127.0.12.11' });
    h.clusters.failing.add(b as string);
    for (let i = 0; i < 5; i++) h.clusters.advanceMigrations();
    const m = items((await describeMigrations(h, { 'MigrationId.1': migrationId })).migrationSet)[0];
    expect(m.state).toBe('incomplete');
    expect(items(m.itemSet).map((i) => [i.instanceId, i.state])).toEqual([[a, 'completed'], [b, 'rolled-back']]);
    expect(items(m.itemSet)[1].error).toMatch(/stopped answering/);
  });

  it('lists every partition\'s migrations oldest first, and names a partition that did not answer', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const [a] = await launchRunning(h, 'cluster02');
    const [b] = await launchRunning(h, 'cluster01');
    const first = await migrate(h, { InstanceId: a as string });
    h.clock.advance(1000);
    const second = await migrate(h, { InstanceId: b as string });
    const all = await describeMigrations(h);
    expect(items(all.migrationSet).map((m) => [m.migrationId, m.partition])).toEqual([[first.migrationId, 'cluster02'], [second.migrationId, 'cluster01']]);
    expect(items(all.unavailablePartitionSet)).toEqual([]);

    h.clusters.down.add('cluster02');
    const some = await describeMigrations(h);
    expect(items(some.migrationSet).map((m) => m.migrationId)).toEqual([second.migrationId]);
    expect(items(some.unavailablePartitionSet).map((u) => u.partition)).toEqual(['cluster02']);
  });
});

describe('CancelMigration', () => {
  it('cancels what has not committed; the instances stay and are no longer migrating', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const ids = await launchRunning(h, 'cluster01', 'm1.small', 2);
    const { migrationId } = await migrate(h, { SourceHost: '127.0.12.11' });
    h.clusters.advanceMigrations();
    const r = await query(h.app, { Action: 'CancelMigration', MigrationId: migrationId });
    expect(r.status, r.text).toBe(200);
    const body = r.doc.CancelMigrationResponse;
    expect(body).toMatchObject({ migrationId, state: 'incomplete', cancelRequested: 'true' });
    expect(items(body.itemSet).map((i) => [i.instanceId, i.state])).toEqual(ids.map((id) => [id, 'cancelled']));
    for (const id of ids) expect(h.clusters.instance(id)).toMatchObject({ host: '127.0.12.11', migrationState: 'none', migrationDestination: '' });
    expect(h.clusters.calls.filter((c) => c.op === 'ccCancelMigration').map((c) => c.partition)).toEqual(['cluster01']);
  });
});

describe('migration columns', () => {
  it('DescribeInstances shows migrationState, migrationSource and migrationDestination', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    await migrate(h, { InstanceId: a as string });
    h.clusters.advanceMigrations();
    const r = await query(h.app, { Action: 'DescribeInstances' });
    const byId = new Map(instancesOf(r.doc).map((i) => [i.instanceId, i]));
    expect(byId.get(a)).toMatchObject({ migrationState: 'preparing', migrationSource: '127.0.12.11', migrationDestination: '127.0.12.12' });
    expect(byId.get(b).migrationState).toBe('none');
    expect(byId.get(b)).not.toHaveProperty('migrationSource');
    const filtered = await query(h.app, { Action: 'DescribeInstances', 'Filter.1.Name': 'migration-state', 'Filter.1.Value.1': 'prep*' });
    expect(instancesOf(filtered.doc).map((i) => i.instanceId)).toEqual([a]);
  });

  it('DescribeNodes gives each migrating instance its source and destination', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    await migrate(h, { InstanceId: a as string, 'DestinationHost.1': '127.0.12.13' });
    const r = await query(h.app, { Action: 'DescribeNodes', ByHost: '127.0.12.11' });
    expect(r.status, r.text).toBe(200);
    const node = items(r.doc.DescribeNodesResponse.nodeSet)[0];
    expect(items(node.instancesSet)).toEqual([
      { instanceId: a, state: 'running', instanceType: 'm1.small', migrationState: 'none', migrationSource: '127.0.12.11', migrationDestination: '127.0.12.13' },
      { instanceId: b, state: 'running', instanceType: 'm1.small', migrationState: 'none' },
    ]);
  });
});

describe('changes to migrating instances', () => {
  it('TerminateInstances is refused as a whole with OperationNotPermitted naming the instance and its migration', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    const { migrationId } = await migrate(h, { InstanceId: a as string });
    h.clusters.advanceMigrations();
    h.clusters.advanceMigrations();
    h.clusters.advanceMigrations(); // migrating
    const before = h.clusters.snapshot();
    const r = await query(h.app, { Action: 'TerminateInstances', 'InstanceId.1': b as string, 'InstanceId.2': a as string });
    expect(r.status).toBe(409);
    expect(r.doc.Response.Errors.Error.Code).toBe('OperationNotPermitted');
    expect(r.doc.Response.Errors.Error.Message).toBe(
      `TerminateInstances is not permitted on instance ${a}: it is in migration ${migrationId} (migrating, 127.0.12.11 to 127.0.12.12). `
      + 'Nothing was done; retry once the migration has finished, or cancel it with CancelMigration');
    expect(h.clusters.calls.filter((c) => c.op === 'ccTerminateInstances')).toEqual([]);
    expect(h.clusters.snapshot()).toBe(before);
  });

  it('an instance still queued in a plan is refused too', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const [a] = await launchRunning(h, 'cluster01');
    await migrate(h, { InstanceId: a as string });
    expect(h.clusters.instance(a as string)?.migrationState).toBe('none');
    const r = await query(h.app, { Action: 'TerminateInstances', 'InstanceId.1': a as string });
    expect(r.doc.Response.Errors.Error.Code).toBe('OperationNotPermitted');
    expect(r.doc.Response.Errors.Error.Message).toContain('(none, 127.0.12.11 to 127.0.12.12)');
  });

  it('once the migration is over, the instance can be terminated where it now runs', async () => {
    const h = await harness({ clusters: threeNodeCloud() });
    const [a] = await launchRunning(h, 'cluster01');
    await migrate(h, { InstanceId: a as string });
    for (let i = 0; i < 5; i++) h.clusters.advanceMigrations();
    const r = await query(h.app, { Action: 'TerminateInstances', 'InstanceId.1': a as string });
    expect(r.status, r.text).toBe(200);
    expect(h.clusters.instance(a as string)).toMatchObject({ host: '127.0.12.12', state: 'terminated' });
  });
});
