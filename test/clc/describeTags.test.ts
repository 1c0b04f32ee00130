/**
 * Eucalyptus 4's placement tags through the HTTP pipeline: `tagSet` in DescribeInstances items,
 * the tag filters, DescribeTags, and `InstanceId.1=verbose`, read the way the admin tools read them.
 */
import { describe, expect, it } from 'vitest';
import { authorize } from '../../clc/api/authorization.js';
import { FakeClusters } from './fakeClusters.js';
import { errorCode, harness, items, launchRunning, query, type Harness } from './harness.js';

/** cluster01: three 4-core nodes; cluster02: two. */
function threeNodeCloud(): FakeClusters {
  return new FakeClusters({
    cluster01: [{ host: '127.0.12.11' }, { host: '127.0.12.12' }, { host: '127.0.12.13' }],
    cluster02: [{ host: '127.0.12.21' }, { host: '127.0.12.22' }],
  });
}

function instancesOf(doc: any): any[] {
  return items(doc.DescribeInstancesResponse.reservationSet).flatMap((res) => items(res.instancesSet));
}

async function describeInstances(h: Harness, params: Record<string, string> = {}): Promise<any[]> {
  const r = await query(h.app, { Action: 'DescribeInstances', ...params });
  expect(r.status, r.text).toBe(200);
  return instancesOf(r.doc);
}

async function describeTags(h: Harness, params: Record<string, string> = {}): Promise<{ tags: string[]; body: any }> {
  const r = await query(h.app, { Action: 'DescribeTags', ...params });
  expect(r.status, r.text).toBe(200);
  const body = r.doc.DescribeTagsResponse;
  return { tags: items(body.tagSet).map((t) => `${t.resourceId} ${t.resourceType} ${t.key}=${t.value}`), body };
}

const tagsOf = (i: any): [string, string][] => items(i.tagSet).map((t) => [t.key, t.value]);

/** One instance on .11 moving to .12 (preparing), one staying on .11, one on cluster02's .21. */
async function movingCloud(): Promise<{ h: Harness; moving: string; staying: string; other: string }> {
  const h = await harness({ clusters: threeNodeCloud() });
  const [moving, staying] = await launchRunning(h, 'cluster01', 'm1.small', 2) as [string, string];
  const [other] = await launchRunning(h, 'cluster02') as [string];
  const m = await query(h.app, { Action: 'MigrateInstances', InstanceId: moving, 'DestinationHost.1': '127.0.12.12' });
  expect(m.status, m.text).toBe(200);
  h.clusters.advanceMigrations(); // preparing
  return { h, moving, staying, other };
}

describe('tagSet in DescribeInstances', () => {
  it('every instance says where it runs; a moving one also from where, to where, and its state', async () => {
    const { h, moving, staying, other } = await movingCloud();
    const byId = new Map((await describeInstances(h)).map((i) => [i.instanceId, i]));
    expect(tagsOf(byId.get(staying))).toEqual([['euca:node', '127.0.12.11']]);
    expect(tagsOf(byId.get(other))).toEqual([['euca:node', '127.0.12.21']]);
    expect(tagsOf(byId.get(moving))).toEqual([
      ['euca:node', '127.0.12.11'], ['euca:node:migration:destination', '127.0.12.12'],
      ['euca:node:migration:source', '127.0.12.11'], ['euca:node:migration:state', 'preparing'],
    ]);
    // The tag agrees with Ferry's own column.
    for (const i of byId.values()) expect(tagsOf(i)[0]).toEqual(['euca:node', i.nodeHost]);
  });

  it('once the migration has finished, only the new host', async () => {
    const { h, moving } = await movingCloud();
    for (let n = 0; n < 5; n++) h.clusters.advanceMigrations();
    const [i] = await describeInstances(h, { 'InstanceId.1': moving });
    expect(tagsOf(i)).toEqual([['euca:node', '127.0.12.12']]);
  });

  it('an instance no node reports any more has an empty tagSet', async () => {
    const h = await harness();
    const [id] = await launchRunning(h, 'cluster01') as [string];
    h.clusters.dropInstance(id);
    const r = await query(h.app, { Action: 'DescribeInstances', 'InstanceId.1': id });
    expect(r.text).toContain('<tagSet/>');
    expect(tagsOf(instancesOf(r.doc)[0])).toEqual([]);
  });

  it('filters: tag:euca:node, tag-key and tag-value', async () => {
    const { h, moving, staying, other } = await movingCloud();
    const ids = async (name: string, value: string) => (await describeInstances(h, { 'Filter.1.Name': name, 'Filter.1.Value.1': value })).map((i) => i.instanceId);
    expect(await ids('tag:euca:node', '127.0.12.11')).toEqual([moving, staying]);
    expect(await ids('tag:euca:node', '127.0.12.2*')).toEqual([other]);
    expect(await ids('tag:euca:node:migration:destination', '127.0.12.12')).toEqual([moving]);
    expect(await ids('tag-key', 'euca:node:migration:*')).toEqual([moving]);
    expect(await ids('tag-value', 'preparing')).toEqual([moving]);
    expect(await ids('tag:Name', '*')).toEqual([]);
  });
});

describe('InstanceId.N=verbose', () => {
  it('alone, every instance (what euserv-describe-node-controllers sends), read as that tool reads it', async () => {
    const { h, moving, staying, other } = await movingCloud();
    const all = await describeInstances(h);
    const r = await query(h.app, { Action: 'DescribeInstances', 'InstanceId.1': 'verbose' });
    expect(r.status, r.text).toBe(200);
    expect(instancesOf(r.doc).map((i) => i.instanceId)).toEqual(all.map((i) => i.instanceId));
    // admin-tools describenodecontrollers.py: nodes are DescribeServices' node names; an instance belongs to the node its
    // euca:node names, and MIGRATING-TO is its euca:node:migration:destination.
    const services = await query(h.app, { Action: 'DescribeServices', ByServiceType: 'node' });
    const nodes = new Map<string, Map<string, { migrationDest?: string }>>(
      items(services.doc.DescribeServicesResponse.serviceStatuses).map((s) => [s.serviceId.name as string, new Map()]),
    );
    for (const i of instancesOf(r.doc)) {
      const info: { migrationDest?: string } = {};
      for (const t of items(i.tagSet)) {
        if (t.key === 'euca:node' && nodes.has(t.value)) nodes.get(t.value)?.set(i.instanceId, info);
        else if (t.key === 'euca:node:migration:destination') info.migrationDest = t.value;
      }
    }
    expect([...nodes].filter(([, m]) => m.size > 0).map(([host, m]) => [host, [...m]])).toEqual([
      ['127.0.12.11', [[moving, { migrationDest: '127.0.12.12' }], [staying, {}]]],
      ['127.0.12.21', [[other, {}]]],
    ]);
  });

  it('in any case, beside ids: the ids still restrict (the instance_running waiter\'s request)', async () => {
    const h = await harness();
    const [a] = await launchRunning(h, 'cluster01', 'm1.small', 2) as [string, string];
    expect((await describeInstances(h, { 'InstanceId.1': 'VERBOSE', 'InstanceId.2': a })).map((i) => i.instanceId)).toEqual([a]);
    expect((await describeInstances(h, { 'InstanceId.1': a })).map((i) => i.instanceId)).toEqual([a]);
  });

  it('beside an unknown id: InvalidInstanceID.NotFound, as without it', async () => {
    const h = await harness();
    const r = await query(h.app, { Action: 'DescribeInstances', 'InstanceId.1': 'verbose', 'InstanceId.2': 'i-0000dead' });
    expect(errorCode(r)).toBe('InvalidInstanceID.NotFound');
  });
});

describe('DescribeTags', () => {
  it('lists every tag of every visible instance, by resource id then key', async () => {
    const { h, moving, staying, other } = await movingCloud();
    const { tags, body } = await describeTags(h);
    const expected = [
      `${moving} instance euca:node=127.0.12.11`,
      `${moving} instance euca:node:migration:destination=127.0.12.12`,
      `${moving} instance euca:node:migration:source=127.0.12.11`,
      `${moving} instance euca:node:migration:state=preparing`,
      `${staying} instance euca:node=127.0.12.11`,
      `${other} instance euca:node=127.0.12.21`,
    ];
    expect([moving, staying, other]).toEqual([moving, staying, other].sort());
    expect(tags).toEqual(expected);
    expect(body).not.toHaveProperty('nextToken');
  });

  it('filters by key, value, resource-id, resource-type and tag:<key>', async () => {
    const { h, moving, staying } = await movingCloud();
    const f = async (name: string, value: string) => (await describeTags(h, { 'Filter.1.Name': name, 'Filter.1.Value.1': value })).tags;
    expect(await f('key', 'euca:node:migration:destination')).toEqual([`${moving} instance euca:node:migration:destination=127.0.12.12`]);
    expect(await f('value', '127.0.12.11')).toEqual([`${moving} instance euca:node=127.0.12.11`, `${moving} instance euca:node:migration:source=127.0.12.11`, `${staying} instance euca:node=127.0.12.11`]);
    expect(await f('resource-id', staying)).toEqual([`${staying} instance euca:node=127.0.12.11`]);
    expect(await f('resource-type', 'volume')).toEqual([]);
    expect((await f('tag:euca:node:migration:state', '*')).every((t) => t.startsWith(moving))).toBe(true);
    expect(await f('tag:euca:node:migration:state', '*')).toHaveLength(4);
  });

  it('names the partitions that did not answer, and lists the others\' tags', async () => {
    const { h, other } = await movingCloud();
    h.clusters.down.add('cluster01');
    const { tags, body } = await describeTags(h);
    expect(tags).toEqual([`${other} instance euca:node=127.0.12.21`]);
    expect(items(body.unavailablePartitionSet).map((u) => u.partition)).toEqual(['cluster01']);
  });

  it('DryRun=true: DryRunOperation, nothing asked of the CCs', async () => {
    const h = await harness();
    const r = await query(h.app, { Action: 'DescribeTags', DryRun: 'true' });
    expect([r.status, errorCode(r)]).toEqual([412, 'DryRunOperation']);
    expect(h.clusters.calls).toEqual([]);
  });

  it('is a read: open to identities other than the admin', () => {
    expect(() => authorize('DescribeTags', { accountId: '111111111111', isAdmin: false } as never)).not.toThrow();
  });
});
