/** The admin actions end to end through the HTTP pipeline, over a fake Clusters. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { CLC_PATH } from '../../clc/api/app.js';
import type { Clusters } from '../../clc/clusters/clusters.js';
import { ClcErrors } from '../../clc/core/errors.js';
import { openClcStore } from '../../clc/state/clcStore.js';
import { FakeClusters, twoZoneCloud } from './fakeClusters.js';
import { capturingLogger, harness, items, parseXml, query, type Harness } from './harness.js';

const EMI = 'emi-00000001';

async function run(h: Harness, extra: Record<string, string> = {}) {
  const r = await query(h.app, { Action: 'RunInstances', ImageId: EMI, ...extra });
  expect(r.status, r.text).toBe(200);
  return r.doc.RunInstancesResponse;
}

function instancesOf(doc: any): any[] {
  return items(doc.DescribeInstancesResponse.reservationSet).flatMap((res) => items(res.instancesSet));
}

async function describeIds(h: Harness, params: Record<string, string> = {}): Promise<string[]> {
  const r = await query(h.app, { Action: 'DescribeInstances', ...params });
  expect(r.status, r.text).toBe(200);
  return instancesOf(r.doc).map((i) => i.instanceId as string);
}

describe('RunInstances', () => {
  it('answers EC2\'s RunInstancesResponse and records the reservation', async () => {
    const h = await harness();
    const res = await run(h, { MinCount: '2', InstanceType: 'c1.medium' });
    expect(res.reservationId).toMatch(/^r-[0-9a-f]{8}$/);
    expect(res.ownerId).toBe('000000000000');
    const list = items(res.instancesSet);
    expect(list).toHaveLength(2);
    expect(list.map((i) => i.amiLaunchIndex)).toEqual(['0', '1']);
    for (const i of list) {
      expect(i).toMatchObject({
        imageId: EMI, instanceType: 'c1.medium', instanceState: { code: '0', name: 'pending' },
        launchTime: '2013-06-01T12:00:00.000Z', placement: { availabilityZone: 'cluster01' }, migrationState: 'none',
      });
      expect(i.nodeHost).toMatch(/^127\.0\.12\.1[12]$/);
    }
    const records = Object.values(h.store.read().instances);
    expect(records.map((r) => [r.reservationId, r.partition, r.vmType, r.phase])).toEqual([
      [res.reservationId, 'cluster01', 'c1.medium', 'launched'], [res.reservationId, 'cluster01', 'c1.medium', 'launched'],
    ]);
    const runCall = h.clusters.calls.find((c) => c.op === 'ccRunInstances');
    expect(runCall?.req).toMatchObject({ imageId: EMI, minCount: 2, ownerId: '000000000000', vmType: { name: 'c1.medium', cores: 2 } });
  });

  it('without a zone, picks the one with the most free room (ties: configuration order)', async () => {
    const h = await harness();
    expect(items((await run(h, { MinCount: '3' })).instancesSet)[0].placement.availabilityZone).toBe('cluster01');
    expect(items((await run(h)).instancesSet)[0].placement.availabilityZone).toBe('cluster02');
  });

  it('starts as many as fit between MinCount and MaxCount, and forgets the rest', async () => {
    const h = await harness();
    const res = await run(h, { MinCount: '2', MaxCount: '20', 'Placement.AvailabilityZone': 'cluster02' });
    // Two nodes of 4 cores: 8 m1.small fit.
    expect(items(res.instancesSet)).toHaveLength(8);
    expect(Object.keys(h.store.read().instances)).toHaveLength(8);
    expect((h.clusters.calls.find((c) => c.op === 'ccRunInstances')?.req as { instanceIds: string[] }).instanceIds).toHaveLength(20);
  });

  it('writes the records before asking the CC', async () => {
    let seen: string[] = [];
    const h = await harness({
      wrap: (fake) => ({
        partitions: fake.partitions,
        call: async (p, op, req) => {
          if (op === 'ccRunInstances') seen = Object.values(store.read().instances).map((r) => `${r.instanceId}:${r.phase}`);
          return fake.call(p, op, req);
        },
      }) as Clusters,
    });
    const store = h.store;
    const res = await run(h, { MinCount: '2' });
    const ids = items(res.instancesSet).map((i) => i.instanceId as string);
    expect(seen).toEqual(ids.map((id) => `${id}:requested`));
  });

  it('a disabled node takes no new instances', async () => {
    const h = await harness();
    expect((await query(h.app, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11' })).status).toBe(200);
    const res = await run(h, { MinCount: '3', 'Placement.AvailabilityZone': 'cluster01' });
    expect(items(res.instancesSet).map((i) => i.nodeHost)).toEqual(['127.0.12.12', '127.0.12.12', '127.0.12.12']);
  });

  describe('when the CC fails after the records were written', () => {
    function failingRun(err: Error) {
      return (fake: FakeClusters): Clusters => ({
        partitions: fake.partitions,
        call: async (p, op, req) => {
          if (op === 'ccRunInstances') throw err;
          return fake.call(p, op, req);
        },
      }) as Clusters;
    }

    it('a refusal (nothing started) drops the records', async () => {
      const h = await harness({ wrap: failingRun(ClcErrors.make('InsufficientInstanceCapacity', { delivered: 'yes' })) });
      const r = await query(h.app, { Action: 'RunInstances', ImageId: EMI });
      expect(r.status).toBe(503);
      expect(r.doc.Response.Errors.Error.Code).toBe('InsufficientInstanceCapacity');
      expect(h.store.read().instances).toEqual({});
    });

    it('a timeout (maybe started) keeps them as requested, hidden until a CC reports them', async () => {
      const h = await harness({ wrap: failingRun(ClcErrors.make('ServiceUnavailable', { delivered: 'maybe', detail: 'timeout' })) });
      const r = await query(h.app, { Action: 'RunInstances', ImageId: EMI });
      expect(r.status).toBe(503);
      const recs = Object.values(h.store.read().instances);
      expect(recs.map((x) => x.phase)).toEqual(['requested']);
      expect(await describeIds(h)).toEqual([]);
    });
  });
});

describe('DescribeInstances', () => {
  it('groups by reservation and filters', async () => {
    const h = await harness();
    const a = await run(h, { MinCount: '2', 'Placement.AvailabilityZone': 'cluster01' });
    const b = await run(h, { InstanceType: 'm1.medium', 'Placement.AvailabilityZone': 'cluster02' });
    const r = await query(h.app, { Action: 'DescribeInstances' });
    const reservations = items(r.doc.DescribeInstancesResponse.reservationSet);
    expect(reservations.map((x) => [x.reservationId, items(x.instancesSet).length])).toEqual([[a.reservationId, 2], [b.reservationId, 1]]);

    const bId = items(b.instancesSet)[0].instanceId as string;
    expect(await describeIds(h, { 'Filter.1.Name': 'availability-zone', 'Filter.1.Value.1': 'cluster02' })).toEqual([bId]);
    expect(await describeIds(h, { 'Filter.1.Name': 'instance-type', 'Filter.1.Value.1': 'm1.medium' })).toEqual([bId]);
    expect(await describeIds(h, { 'Filter.1.Name': 'node', 'Filter.1.Value.1': '127.0.12.2*' })).toEqual([bId]);
    expect(await describeIds(h, { 'Filter.1.Name': 'reservation-id', 'Filter.1.Value.1': a.reservationId })).toHaveLength(2);
    expect(await describeIds(h, { 'InstanceId.1': bId.toUpperCase() })).toEqual([bId]);
  });

  it('shows what the nodes report: state and migration state', async () => {
    const h = await harness();
    const id = items((await run(h)).instancesSet)[0].instanceId as string;
    h.clusters.setInstanceState(id, 'running');
    const r = await query(h.app, { Action: 'DescribeInstances', 'Filter.1.Name': 'instance-state-name', 'Filter.1.Value.1': 'running' });
    expect(instancesOf(r.doc).map((i) => [i.instanceId, i.instanceState.code, i.migrationState])).toEqual([[id, '16', 'none']]);
  });

  it('answers for the partitions that answered, naming the one that did not (response and log)', async () => {
    const { logger, lines } = capturingLogger();
    const h = await harness({ logger });
    const a = items((await run(h, { 'Placement.AvailabilityZone': 'cluster01' })).instancesSet)[0].instanceId;
    await run(h, { 'Placement.AvailabilityZone': 'cluster02' });
    h.clusters.down.add('cluster02');
    const r = await query(h.app, { Action: 'DescribeInstances' });
    expect(r.status).toBe(200);
    expect(instancesOf(r.doc).map((i) => i.instanceId)).toEqual([a]);
    expect(items(r.doc.DescribeInstancesResponse.unavailablePartitionSet).map((u) => u.partition)).toEqual(['cluster02']);
    expect(lines.some((l) => l.partition === 'cluster02' && String(l.msg).includes('cluster02') && l.level === 40)).toBe(true);
  });

  it('a launched instance no node reports any more is shown terminated', async () => {
    const h = await harness();
    const id = items((await run(h)).instancesSet)[0].instanceId as string;
    h.clusters.dropInstance(id);
    const r = await query(h.app, { Action: 'DescribeInstances', 'InstanceId.1': id });
    expect(instancesOf(r.doc).map((i) => [i.instanceId, i.instanceState.name])).toEqual([[id, 'terminated']]);
  });
});

describe('TerminateInstances', () => {
  it('terminates across partitions and reports previous and current states', async () => {
    const h = await harness();
    const a = items((await run(h, { 'Placement.AvailabilityZone': 'cluster01' })).instancesSet)[0].instanceId as string;
    const b = items((await run(h, { 'Placement.AvailabilityZone': 'cluster02' })).instancesSet)[0].instanceId as string;
    h.clusters.setInstanceState(a, 'running');
    const r = await query(h.app, { Action: 'TerminateInstances', 'InstanceId.1': a, 'InstanceId.2': b });
    expect(r.status).toBe(200);
    expect(items(r.doc.TerminateInstancesResponse.instancesSet).map((i) => [i.instanceId, i.previousState.name, i.currentState.name, i.currentState.code]))
      .toEqual([[a, 'running', 'terminated', '48'], [b, 'pending', 'terminated', '48']]);
    expect(h.clusters.calls.filter((c) => c.op === 'ccTerminateInstances').map((c) => c.partition)).toEqual(['cluster01', 'cluster02']);
    // Recorded, so host HA never brings them back from a fenced host.
    expect([a, b].map((id) => typeof h.store.read().instances[id]?.terminatedAt)).toEqual(['number', 'number']);
  });

  it('an instance already gone from its node answers terminated again without asking the CC', async () => {
    const h = await harness();
    const id = items((await run(h)).instancesSet)[0].instanceId as string;
    h.clusters.dropInstance(id);
    const r = await query(h.app, { Action: 'TerminateInstances', 'InstanceId.1': id });
    expect(items(r.doc.TerminateInstancesResponse.instancesSet)[0]).toMatchObject({ previousState: { name: 'terminated' }, currentState: { name: 'terminated' } });
    expect(h.clusters.mutatingCalls().filter((c) => c.op === 'ccTerminateInstances')).toEqual([]);
  });
});

describe('DescribeAvailabilityZones', () => {
  it('lists zones; verbose adds the resource matrix rows', async () => {
    const h = await harness();
    await run(h, { MinCount: '2', 'Placement.AvailabilityZone': 'cluster01' });
    const plain = await query(h.app, { Action: 'DescribeAvailabilityZones' });
    expect(items(plain.doc.DescribeAvailabilityZonesResponse.availabilityZoneInfo).map((z) => [z.zoneName, z.zoneState, z.regionName]))
      .toEqual([['cluster01', 'available', 'eucalyptus'], ['cluster02', 'available', 'eucalyptus']]);

    const verbose = await query(h.app, { Action: 'DescribeAvailabilityZones', 'ZoneName.1': 'verbose', 'ZoneName.2': 'cluster01' });
    const rows = items(verbose.doc.DescribeAvailabilityZonesResponse.availabilityZoneInfo).map((z) => `${z.zoneName}\t${z.zoneState}`);
    expect(rows[0]).toBe('cluster01\tavailable');
    expect(rows[1]).toBe('|- vm types\tfree / max\tcpu\tram\tdisk');
    expect(rows).toContain('|- m1.small\t0006 / 0008\t1\t256\t5');
    expect(rows).toContain('|- cr1.8xlarge\t0000 / 0000\t16\t16384\t240');
    expect(rows).toHaveLength(2 + 17);
  });

  it('a zone whose CC does not answer is unavailable, with the reason', async () => {
    const h = await harness();
    h.clusters.down.add('cluster02');
    const r = await query(h.app, { Action: 'DescribeAvailabilityZones', 'ZoneName.1': 'verbose' });
    const zones = items(r.doc.DescribeAvailabilityZonesResponse.availabilityZoneInfo);
    const down = zones.find((z) => z.zoneName === 'cluster02');
    expect(down.zoneState).toBe('unavailable');
    expect(items(down.messageSet)[0].message).toContain('unreachable');
    expect(zones.filter((z) => String(z.zoneName).startsWith('|-'))).toHaveLength(18);
  });

  it.each([
    [{ 'Filter.1.Name': 'state', 'Filter.1.Value.1': 'unavailable' }, ['cluster02']],
    [{ 'Filter.1.Name': 'message', 'Filter.1.Value.1': '*unreachable*' }, ['cluster02']],
    [{ 'Filter.1.Name': 'zone-name', 'Filter.1.Value.1': 'cluster0?', 'Filter.2.Name': 'state', 'Filter.2.Value.1': 'available' }, ['cluster01']],
    [{ 'Filter.1.Name': 'region-name', 'Filter.1.Value.1': 'us-east-1' }, []],
    [{ 'ZoneId.1': 'cluster01', AllAvailabilityZones: 'true' }, ['cluster01']],
  ])('EC2\'s parameters as the SDKs send them: %j shows %j', async (params, zones) => {
    const h = await harness();
    h.clusters.down.add('cluster02');
    const r = await query(h.app, { Action: 'DescribeAvailabilityZones', ...params });
    expect(r.status, r.text).toBe(200);
    const shown = items(r.doc.DescribeAvailabilityZonesResponse.availabilityZoneInfo);
    expect(shown.map((z) => z.zoneName)).toEqual(zones);
    for (const z of shown) expect(z).toMatchObject({ zoneId: z.zoneName, zoneType: 'availability-zone', optInStatus: 'opt-in-not-required' });
  });

  it('filters leave a shown zone\'s verbose rows after it, and drop a hidden zone\'s', async () => {
    const h = await harness();
    const r = await query(h.app, { Action: 'DescribeAvailabilityZones', 'ZoneName.1': 'verbose', 'Filter.1.Name': 'zone-name', 'Filter.1.Value.1': 'cluster02' });
    const names = items(r.doc.DescribeAvailabilityZonesResponse.availabilityZoneInfo).map((z) => String(z.zoneName));
    expect(names[0]).toBe('cluster02');
    expect(names.slice(1).every((n) => n.startsWith('|-'))).toBe(true);
    expect(names).toHaveLength(1 + 18);
  });
});

describe('DescribeServices and DescribeNodes', () => {
  it('lists nodes as services with their state; ByServiceType filters', async () => {
    const h = await harness({
      clusters: new FakeClusters({
        cluster01: [{ host: '127.0.12.11' }, { host: '127.0.12.12', nodeState: 'disabled' }, { host: '127.0.12.13', reachable: false }],
        cluster02: [{ host: '127.0.12.21' }],
      }),
    });
    h.clusters.down.add('cluster02');
    const r = await query(h.app, { Action: 'DescribeServices' });
    expect(r.text).toContain('xmlns="http://msgs.eucalyptus.com/"');
    const rows = items(r.doc.DescribeServicesResponse.serviceStatuses).map((s) => `${s.serviceId.type} ${s.serviceId.partition} ${s.serviceId.name} ${s.localState}`);
    expect(rows).toEqual([
      'eucalyptus eucalyptus clc ENABLED',
      'cluster cluster01 cluster01 ENABLED',
      'node cluster01 127.0.12.11 ENABLED',
      'node cluster01 127.0.12.12 DISABLED',
      'node cluster01 127.0.12.13 NOTREADY',
      'cluster cluster02 cluster02 NOTREADY',
    ]);
    const nodes = await query(h.app, { Action: 'DescribeServices', ByServiceType: 'node', ByState: 'enabled' });
    expect(items(nodes.doc.DescribeServicesResponse.serviceStatuses).map((s) => s.serviceId.fullName)).toEqual(['arn:euca:eucalyptus:cluster01:node:127.0.12.11/']);
  });

  it('DescribeNodes shows capacity, use and instances per node', async () => {
    const h = await harness();
    const res = await run(h, { InstanceType: 'c1.medium', 'Placement.AvailabilityZone': 'cluster02' });
    const id = items(res.instancesSet)[0].instanceId;
    const r = await query(h.app, { Action: 'DescribeNodes', ByPartition: 'cluster02' });
    const nodes = items(r.doc.DescribeNodesResponse.nodeSet);
    expect(nodes.map((n) => n.host)).toEqual(['127.0.12.21', '127.0.12.22']);
    expect(nodes[0]).toMatchObject({
      partition: 'cluster02', state: 'ENABLED', nodeState: 'enabled', reachable: 'true',
      capacity: { cores: '4', memoryMiB: '4096', diskGiB: '100' }, used: { cores: '2', memoryMiB: '512', diskGiB: '10' },
    });
    expect(items(nodes[0].instancesSet)).toEqual([{ instanceId: id, state: 'pending', instanceType: 'c1.medium', migrationState: 'none' }]);
  });
});

describe('EnableService and DisableService', () => {
  it('disables a node, answering after the CC with the new state and the matrix', async () => {
    const h = await harness();
    const r = await query(h.app, { Action: 'DisableService', Type: 'node', Host: '127.0.12.21' });
    expect(r.status, r.text).toBe(200);
    const body = r.doc.DisableServiceResponse;
    expect(items(body.serviceStatuses)[0]).toMatchObject({ serviceId: { partition: 'cluster02', name: '127.0.12.21', type: 'node' }, localState: 'DISABLED' });
    expect(body.previousState).toBe('enabled');
    expect(body.node.state).toBe('DISABLED');
    // One of two 4-core nodes left schedulable: 4 of 8 m1.small.
    expect(items(body.resourceMatrix).find((m) => m.vmType === 'm1.small')).toMatchObject({ available: '4', max: '8' });
    expect(h.clusters.node('127.0.12.21')?.nodeState).toBe('disabled');
    expect(h.clusters.calls.map((c) => `${c.partition}:${c.op}`)).toEqual(['cluster01:ccDescribeNodes', 'cluster02:ccDescribeNodes', 'cluster02:ccModifyNode']);
  });

  it('enables by ServiceId, asking only the named partition', async () => {
    const h = await harness({ clusters: new FakeClusters({ cluster01: [{ host: '127.0.12.11', nodeState: 'disabled' }], cluster02: [] }) });
    const r = await query(h.app, { Action: 'EnableService', Type: 'NODE', ServiceId: 'arn:euca:eucalyptus:cluster01:node:127.0.12.11/' });
    expect(r.status, r.text).toBe(200);
    expect(items(r.doc.EnableServiceResponse.serviceStatuses)[0].localState).toBe('ENABLED');
    expect(r.doc.EnableServiceResponse.previousState).toBe('disabled');
    expect(h.clusters.calls.every((c) => c.partition === 'cluster01')).toBe(true);
  });

  it('is idempotent', async () => {
    const h = await harness();
    await query(h.app, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11' });
    const r = await query(h.app, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11' });
    expect(r.status).toBe(200);
    expect(r.doc.DisableServiceResponse.previousState).toBe('disabled');
  });
});

describe('transport', () => {
  it('accepts GET with a query string', async () => {
    const h = await harness();
    const res = await request(h.app).get(`${CLC_PATH}?Action=DescribeAvailabilityZones&Version=2013-02-01`);
    expect(res.status).toBe(200);
    expect((await parseXml(res.text)).DescribeAvailabilityZonesResponse.requestId).toBe('req-1');
  });
});

describe('restart', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('a new CLC over the same state dir still knows its reservations', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-clc-test-'));
    dirs.push(dir);
    const cloud = twoZoneCloud();
    const first = await harness({ clusters: cloud, store: await openClcStore(dir) });
    const res = await run(first, { MinCount: '2' });
    const [a, b] = items(res.instancesSet).map((i) => i.instanceId as string) as [string, string];

    cloud.dropInstance(b); // the NC forgot it while the CLC was down
    const second = await harness({ clusters: cloud, store: await openClcStore(dir) });
    const r = await query(second.app, { Action: 'DescribeInstances' });
    const reservations = items(r.doc.DescribeInstancesResponse.reservationSet);
    expect(reservations.map((x) => x.reservationId)).toEqual([res.reservationId]);
    expect(items(reservations[0].instancesSet).map((i) => [i.instanceId, i.instanceState.name, i.amiLaunchIndex]))
      .toEqual([[a, 'pending', '0'], [b, 'terminated', '1']]);
  });
});
