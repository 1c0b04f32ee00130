/**
 * DescribeServices and ModifyService in Eucalyptus 4's shapes, through the admin API over the fake
 * clusters: the requests euserv-describe-services, euserv-describe-node-controllers and
 * euserv-modify-service send, and their answers read the way those tools read them.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CLC_ORIGIN } from '../../clc/api/action.js';
import { CLC_SERVICE_PATH } from '../../clc/api/actions/describeServices.js';
import { CLC_PATH } from '../../clc/api/app.js';
import type { Clusters } from '../../clc/clusters/clusters.js';
import type { Leadership } from '../../clc/core/leadership.js';
import type { HaNodeHooks } from '../../clc/core/nodeHooks.js';
import { parseListDelimitedXml, type ToolValue } from '../clients/listDelimitedXml.js';
import { signedQuery, testAuthenticator, TEST_ADMIN, TEST_USER } from './authFixtures.js';
import { FakeClusters } from './fakeClusters.js';
import { errorCode, eventually, harness, items, query, START, type Harness } from './harness.js';

/** euserv-describe-services' LIST_TAGS: how it reads DescribeServices answers. */
const DESCRIBE_LIST_TAGS = ['serviceAccounts', 'serviceStatuses', 'statusDetails', 'uris'];
/** What euserv-describe-services sends with no argument: its store_true flags, as false. */
const EUSERV_DESCRIBE = { Action: 'DescribeServices', ListAll: 'false', ShowEvents: 'false', ShowEventStacks: 'false' };

function cloud(): FakeClusters {
  return new FakeClusters({
    cluster01: [{ host: '127.0.12.11' }, { host: '127.0.12.12', nodeState: 'disabled' }, { host: '127.0.12.13', reachable: false }],
    cluster02: [{ host: '127.0.12.21' }],
  });
}

type Rb = { [name: string]: any };

async function describeLikeTool(h: Harness, params: Record<string, string>): Promise<Rb[]> {
  const r = await query(h.app, params);
  expect(r.status, r.text).toBe(200);
  // The tools strip the root element: its one value is the response body.
  const body = Object.values(await parseListDelimitedXml(r.text, DESCRIBE_LIST_TAGS))[0] as Rb;
  return (body.serviceStatuses ?? []) as Rb[];
}

/** Rows as `type partition name state`, from the parsed answer. */
async function names(h: Harness, params: Record<string, string>): Promise<string[]> {
  const r = await query(h.app, { Action: 'DescribeServices', ...params });
  expect(r.status, r.text).toBe(200);
  return items(r.doc.DescribeServicesResponse.serviceStatuses).map((s) => `${s.serviceId.type} ${s.serviceId.name}`);
}

describe('DescribeServices as euserv-describe-services asks and reads it', () => {
  it('lists every service in the ServiceStatusType shape; the tool\'s tables come out right', async () => {
    const h = await harness({ clusters: cloud() });
    const services = await describeLikeTool(h, EUSERV_DESCRIBE);
    const clcHost = new URL(DEFAULT_CLC_ORIGIN).hostname;
    // --expert: SERVICE arn state epoch uri accounts.
    expect(services.map((s) => [s.serviceId.fullName, s.localState.toLowerCase(), s.localEpoch, s.serviceId.uri, s.serviceAccounts])).toEqual([
      ['arn:euca:eucalyptus:eucalyptus:eucalyptus:clc/', 'enabled', '0', `${DEFAULT_CLC_ORIGIN}${CLC_PATH}`, []],
      ['arn:euca:eucalyptus:cluster01:cluster:cluster01/', 'enabled', '0', 'http://127.0.12.200:8774/axis2/services/EucalyptusCC', []],
      ['arn:euca:eucalyptus:cluster01:node:127.0.12.11/', 'enabled', '0', 'https://127.0.12.11:8775/axis2/services/EucalyptusNC', []],
      ['arn:euca:eucalyptus:cluster01:node:127.0.12.12/', 'disabled', '0', 'https://127.0.12.12:8775/axis2/services/EucalyptusNC', []],
      ['arn:euca:eucalyptus:cluster01:node:127.0.12.13/', 'notready', '0', 'https://127.0.12.13:8775/axis2/services/EucalyptusNC', []],
      ['arn:euca:eucalyptus:cluster02:cluster:cluster02/', 'enabled', '0', 'http://127.0.12.201:8774/axis2/services/EucalyptusCC', []],
      ['arn:euca:eucalyptus:cluster02:node:127.0.12.21/', 'enabled', '0', 'https://127.0.12.21:8775/axis2/services/EucalyptusNC', []],
    ]);
    // --group-by-host and --group-by-zone key on the service id's host and partition.
    expect(services.map((s) => `${s.serviceId.host} ${s.serviceId.partition} ${s.serviceId.type} ${s.serviceId.name}`)).toEqual([
      `${clcHost} eucalyptus eucalyptus clc`,
      '127.0.12.200 cluster01 cluster cluster01',
      '127.0.12.11 cluster01 node 127.0.12.11',
      '127.0.12.12 cluster01 node 127.0.12.12',
      '127.0.12.13 cluster01 node 127.0.12.13',
      '127.0.12.201 cluster02 cluster cluster02',
      '127.0.12.21 cluster02 node 127.0.12.21',
    ]);
    expect(services.map((s) => s.serviceId.uris)).toEqual([
      [`${DEFAULT_CLC_ORIGIN}${CLC_PATH}`], ['http://127.0.12.200:8774/axis2/services/EucalyptusCC'],
      ...['11', '12', '13'].map((n) => [`https://127.0.12.${n}:8775/axis2/services/EucalyptusNC`]),
      ['http://127.0.12.201:8774/axis2/services/EucalyptusCC'], ['https://127.0.12.21:8775/axis2/services/EucalyptusNC'],
    ]);
    expect(services.every((s) => Array.isArray(s.statusDetails) && s.statusDetails.length === 0)).toBe(true);
  });

  it('gives each service a stable, distinct uuid', async () => {
    const h = await harness({ clusters: cloud() });
    const first = (await describeLikeTool(h, EUSERV_DESCRIBE)).map((s) => s.serviceId.uuid as string);
    const again = (await describeLikeTool(h, { Action: 'DescribeServices' })).map((s) => s.serviceId.uuid as string);
    expect(again).toEqual(first);
    expect(new Set(first).size).toBe(first.length);
    for (const u of first) expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('the CLC\'s uri is where the API is served', () => {
    expect(CLC_SERVICE_PATH).toBe(CLC_PATH);
  });

  it('as euserv-describe-node-controllers reads it (ListAll=true): each node\'s zone, host, state and details', async () => {
    const h = await harness({ clusters: cloud() });
    const services = await describeLikeTool(h, { Action: 'DescribeServices', ListAll: 'true' });
    const nodes = services.filter((s) => s.serviceId.type === 'node').map((s) => {
      // The tool joins `details` as key=value pairs: it must read as a map, never as text.
      const details = (s.details ?? {}) as Record<string, ToolValue>;
      expect(typeof details).toBe('object');
      return [s.serviceId.name, s.serviceId.partition, s.serviceId.host, s.localState.toLowerCase(), Object.entries(details).map(([k, v]) => `${k}=${String(v)}`).join(', ')];
    });
    expect(nodes).toEqual([
      ['127.0.12.11', 'cluster01', '127.0.12.11', 'enabled', ''],
      ['127.0.12.12', 'cluster01', '127.0.12.12', 'disabled', 'item=maintenance mode: takes no new instances'],
      ['127.0.12.13', 'cluster01', '127.0.12.13', 'notready', 'item=the cluster controller cannot reach this node'],
      ['127.0.12.21', 'cluster02', '127.0.12.21', 'enabled', ''],
    ]);
  });

  it('ListAll, ListInternal and ListUserServices change nothing: every service is always listed', async () => {
    const h = await harness({ clusters: cloud() });
    const all = await names(h, {});
    expect(all).toHaveLength(7);
    expect(await names(h, { ListAll: 'TRUE', ListInternal: 'false', ListUserServices: 'true' })).toEqual(all);
  });
});

describe('DescribeServices: ServiceName.N and Filter.N', () => {
  it.each([
    ['a node by name and a cluster by full name', { 'ServiceName.1': '127.0.12.21', 'ServiceName.2': 'arn:euca:eucalyptus:cluster01:cluster:cluster01/' },
      ['cluster cluster01', 'node 127.0.12.21']],
    ['the CLC by name', { 'ServiceName.1': 'clc' }, ['eucalyptus clc']],
    ['a name that matches nothing, beside one that does', { 'ServiceName.1': 'walrus', 'ServiceName.2': '127.0.12.11' }, ['node 127.0.12.11']],
    ['names that match nothing', { 'ServiceName.1': 'walrus', 'ServiceName.2': 'arn:euca:eucalyptus:cluster09:node:127.0.12.11/' }, []],
    ['values OR-ed, filters AND-ed', { 'Filter.1.Name': 'partition', 'Filter.1.Value.1': 'cluster01', 'Filter.1.Value.2': 'cluster02', 'Filter.2.Name': 'state', 'Filter.2.Value.1': 'DISABLED', 'Filter.2.Value.2': 'notready' },
      ['node 127.0.12.12', 'node 127.0.12.13']],
    ['the CLC\'s partition', { 'Filter.1.Name': 'partition', 'Filter.1.Value.1': 'eucalyptus' }, ['eucalyptus clc']],
    ['service-type', { 'Filter.1.Name': 'service-type', 'Filter.1.Value.1': 'cluster' }, ['cluster cluster01', 'cluster cluster02']],
    ['host: a cluster by its CC\'s host, a node by its address', { 'Filter.1.Name': 'host', 'Filter.1.Value.1': '127.0.12.201', 'Filter.1.Value.2': '127.0.12.11' },
      ['node 127.0.12.11', 'cluster cluster02']],
    ['host: the CLC by its origin\'s host', { 'Filter.1.Name': 'host', 'Filter.1.Value.1': new URL(DEFAULT_CLC_ORIGIN).hostname }, ['eucalyptus clc']],
    ['internal=true: clusters and nodes', { 'Filter.1.Name': 'internal', 'Filter.1.Value.1': 'true', 'Filter.2.Name': 'partition', 'Filter.2.Value.1': 'cluster02' },
      ['cluster cluster02', 'node 127.0.12.21']],
    ['public=true: the CLC', { 'Filter.1.Name': 'public', 'Filter.1.Value.1': 'TRUE' }, ['eucalyptus clc']],
    ['user-service=true: the CLC', { 'Filter.1.Name': 'user-service', 'Filter.1.Value.1': 'true' }, ['eucalyptus clc']],
    ['service-group: Ferry has none', { 'Filter.1.Name': 'service-group', 'Filter.1.Value.1': 'user-api' }, []],
    ['service-group-member=true: none', { 'Filter.1.Name': 'service-group-member', 'Filter.1.Value.1': 'true' }, []],
    ['a Eucalyptus state Ferry never shows', { 'Filter.1.Name': 'state', 'Filter.1.Value.1': 'broken' }, []],
    ['ByHost is the service\'s host', { ByHost: '127.0.12.200' }, ['cluster cluster01']],
    ['ByState and a filter together', { ByState: 'enabled', 'Filter.1.Name': 'service-type', 'Filter.1.Value.1': 'node' }, ['node 127.0.12.11', 'node 127.0.12.21']],
  ] as [string, Record<string, string>, string[]][])('%s', async (_n, params, expected) => {
    const h = await harness({ clusters: cloud() });
    expect(await names(h, params)).toEqual(expected);
  });

  it.each([
    [{ 'Filter.1.Name': 'availability-zone', 'Filter.1.Value.1': 'cluster01' }, 'InvalidParameterValue', /Filter\.1\.Name/],
    [{ 'Filter.1.Name': 'state', 'Filter.1.Value.1': 'up' }, 'InvalidParameterValue', /Filter\.1\.Value\.1/],
    [{ 'Filter.1.Name': 'internal', 'Filter.1.Value.1': 'yes' }, 'InvalidParameterValue', /Filter\.1\.Value\.1/],
    [{ ListAll: 'all' }, 'InvalidParameterValue', /ListAll/],
    [{ ShowEventStacks: '' }, 'InvalidParameterValue', /ShowEventStacks/],
  ] as [Record<string, string>, string, RegExp][])('refuses %j with its code, asking no CC', async (params, code, message) => {
    const h = await harness({ clusters: cloud() });
    const r = await query(h.app, { Action: 'DescribeServices', ...params });
    expect([r.status, errorCode(r)]).toEqual([400, code]);
    expect(r.doc.Response.Errors.Error.Message).toMatch(message);
    expect(h.clusters.calls).toEqual([]);
  });
});

describe('DescribeServices: ShowEvents', () => {
  it('lists why a service is not ENABLED as ServiceStatusDetail items; nothing for enabled ones', async () => {
    const h = await harness({ clusters: cloud() });
    h.clusters.down.add('cluster02');
    h.clock.advance(5_000);
    const services = await describeLikeTool(h, { Action: 'DescribeServices', ShowEvents: 'true', ShowEventStacks: 'false' });
    const at = new Date(START + 5_000).toISOString();
    const events = Object.fromEntries(services.map((s) => [s.serviceId.name, s.statusDetails]));
    expect(events.clc).toEqual([]);
    expect(events.cluster01).toEqual([]);
    expect(events['127.0.12.11']).toEqual([]);
    expect(events['127.0.12.12']).toEqual([expect.objectContaining({
      severity: 'INFO', message: 'maintenance mode: takes no new instances', serviceFullName: 'arn:euca:eucalyptus:cluster01:node:127.0.12.12/',
      serviceName: '127.0.12.12', serviceHost: '127.0.12.12', timestamp: at,
    })]);
    expect(events['127.0.12.13']).toEqual([expect.objectContaining({
      severity: 'ERROR', message: 'the cluster controller cannot reach this node; last heard from at 1970-01-01T00:00:01.000Z', serviceHost: '127.0.12.13', timestamp: at,
    })]);
    expect(events.cluster02).toEqual([expect.objectContaining({ severity: 'ERROR', serviceName: 'cluster02', serviceHost: '127.0.12.201', message: expect.stringMatching(/unavailable/) })]);
    for (const detail of Object.values(events).flat() as Rb[]) expect(detail.uuid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('ShowEventStacks alone implies ShowEvents (Ferry has no stack traces to add)', async () => {
    const h = await harness({ clusters: cloud() });
    const services = await describeLikeTool(h, { Action: 'DescribeServices', 'ServiceName.1': '127.0.12.12', ShowEventStacks: 'true' });
    expect(services[0]?.statusDetails).toEqual([expect.objectContaining({ severity: 'INFO', stackTrace: {} })]);
  });
});

/** What EnableService/DisableService answer, without the request id, to compare with ModifyService's. */
async function replyOf(h: Harness, params: Record<string, string>): Promise<Rb> {
  const r = await query(h.app, params);
  expect(r.status, r.text).toBe(200);
  const { requestId: _r, ...body } = r.doc[`${params.Action}Response`] as Rb;
  return body;
}

function recordingHooks(log: string[]): HaNodeHooks {
  return {
    beforeEnable: async (host, partition) => { log.push(`before ${host} ${partition}`); },
    afterEnable: async (host, partition) => { log.push(`after ${host} ${partition}`); },
    fencedHosts: () => new Set(),
  };
}

describe('ModifyService, as euserv-modify-service sends it', () => {
  it('DISABLE of a node is DisableService: the same CC calls, node state and answer, after <return>true</return>', async () => {
    const viaModify = await harness({ clusters: cloud() });
    const viaDisable = await harness({ clusters: cloud() });
    const r = await query(viaModify.app, { Action: 'ModifyService', Name: '127.0.12.21', State: 'DISABLE' });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toMatch(/<ModifyServiceResponse xmlns="http:\/\/msgs\.eucalyptus\.com\/"><requestId>req-1<\/requestId><return>true<\/return><serviceStatuses>/);
    const { requestId: _r, return: ret, ...body } = r.doc.ModifyServiceResponse as Rb;
    expect(ret).toBe('true');
    expect(body).toEqual(await replyOf(viaDisable, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.21' }));
    expect(body.previousState).toBe('enabled');
    expect(items(body.serviceStatuses)[0]).toMatchObject({ localState: 'DISABLED', serviceId: { fullName: 'arn:euca:eucalyptus:cluster02:node:127.0.12.21/' } });
    expect(viaModify.clusters.calls).toEqual(viaDisable.clusters.calls);
    expect(viaModify.clusters.node('127.0.12.21')?.nodeState).toBe('disabled');
  });

  it('ENABLED by full name is EnableService, host HA\'s hooks included', async () => {
    const modifyLog: string[] = [];
    const enableLog: string[] = [];
    const viaModify = await harness({ clusters: cloud(), haHooks: recordingHooks(modifyLog) });
    const viaEnable = await harness({ clusters: cloud(), haHooks: recordingHooks(enableLog) });
    const { requestId: _r, return: ret, ...body } = (await query(viaModify.app, {
      Action: 'ModifyService', Name: 'arn:euca:eucalyptus:cluster01:node:127.0.12.12/', State: 'enabled',
    })).doc.ModifyServiceResponse as Rb;
    expect(ret).toBe('true');
    expect(body).toEqual(await replyOf(viaEnable, { Action: 'EnableService', Type: 'NODE', ServiceId: 'arn:euca:eucalyptus:cluster01:node:127.0.12.12/' }));
    expect(body.previousState).toBe('disabled');
    expect(modifyLog).toEqual(['before 127.0.12.12 cluster01', 'after 127.0.12.12 cluster01']);
    expect(modifyLog).toEqual(enableLog);
    // Named with its partition: only that CC is asked.
    expect(viaModify.clusters.calls.map((c) => `${c.partition}:${c.op}`)).toEqual(['cluster01:ccDescribeNodes', 'cluster01:ccModifyNode']);
    expect(viaModify.clusters.node('127.0.12.12')?.nodeState).toBe('enabled');
  });

  it('DISABLE is exclusive in its partition: a RunInstances arriving meanwhile waits, then runs against it', async () => {
    const h = await harness();
    const held = h.clusters.hold('ccModifyNode');
    const disable = query(h.app, { Action: 'ModifyService', Name: '127.0.12.11', State: 'DISABLE' });
    await held.reached;
    const run = query(h.app, { Action: 'RunInstances', ImageId: 'emi-00000001', MinCount: '2', 'Placement.AvailabilityZone': 'cluster01' });
    await eventually(() => h.gate.waiting('cluster01') > 0, 'RunInstances waits in cluster01');
    expect(h.clusters.calls.filter((c) => c.op === 'ccRunInstances')).toEqual([]);
    held.release();
    expect((await disable).status).toBe(200);
    const launched = await run;
    expect(launched.status, launched.text).toBe(200);
    // Before the disable both would have gone to .11; after it, neither may.
    expect(items(launched.doc.RunInstancesResponse.instancesSet).map((i) => i.nodeHost)).toEqual(['127.0.12.12', '127.0.12.12']);
  });
});

describe('ModifyService: what Ferry does not carry out changes nothing', () => {
  it.each([
    ['STOP of a node', { Name: '127.0.12.11', State: 'STOP' }, 400, 'UnsupportedOperation', /use DISABLE to put it in maintenance mode/],
    ['STOPPED of a node by full name', { Name: 'arn:euca:eucalyptus:cluster01:node:127.0.12.11/', State: 'stopped' }, 400, 'UnsupportedOperation', /DISABLE/],
    ['START of a node', { Name: '127.0.12.12', State: 'start' }, 400, 'UnsupportedOperation', /use ENABLE to take it out of maintenance mode/],
    ['RESTART of a node', { Name: '127.0.12.11', State: 'RESTART' }, 400, 'UnsupportedOperation', /ENABLE/],
    ['BROKEN of a node', { Name: '127.0.12.11', State: 'BROKEN' }, 400, 'UnsupportedOperation', /only with ENABLE and DISABLE/],
    ['DISABLE of the CLC', { Name: 'clc', State: 'DISABLE' }, 400, 'UnsupportedOperation', /cloud controller/],
    ['STOP of the CLC by full name', { Name: 'arn:euca:eucalyptus:eucalyptus:eucalyptus:clc/', State: 'STOP' }, 400, 'UnsupportedOperation', /cloud controller/],
    ['DISABLE of a cluster', { Name: 'cluster01', State: 'DISABLE' }, 400, 'UnsupportedOperation', /cluster cluster01.*DISABLE on its nodes/],
    ['ENABLE of a cluster by full name', { Name: 'arn:euca:eucalyptus:cluster02:cluster:cluster02/', State: 'ENABLE' }, 400, 'UnsupportedOperation', /cluster cluster02/],
    ['a State that is no Eucalyptus name', { Name: '127.0.12.11', State: 'maintenance' }, 400, 'InvalidParameterValue', /START, STOP, INITIALIZE.*ENABLED/],
    ['an unknown name', { Name: 'walrus', State: 'DISABLE' }, 400, 'InvalidService.NotFound', /walrus/],
    ['a node no CC reports', { Name: '127.0.12.99', State: 'DISABLE' }, 400, 'InvalidService.NotFound', /127\.0\.12\.99/],
    ['a node no CC reports, whatever the State', { Name: '127.0.12.99', State: 'STOP' }, 400, 'InvalidService.NotFound', /127\.0\.12\.99/],
    ['a node in the wrong partition', { Name: 'arn:euca:eucalyptus:cluster02:node:127.0.12.11/', State: 'ENABLE' }, 400, 'InvalidService.NotFound', /cluster02/],
    ['a full name in an unknown partition', { Name: 'arn:euca:eucalyptus:cluster09:node:127.0.12.11/', State: 'DISABLE' }, 400, 'InvalidService.NotFound', /cluster09/],
    ['no State', { Name: '127.0.12.11' }, 400, 'MissingParameter', /State/],
  ] as [string, Record<string, string>, number, string, RegExp][])('%s', async (_n, params, status, code, message) => {
    const h = await harness({ clusters: cloud() });
    const before = h.clusters.snapshot();
    const r = await query(h.app, { Action: 'ModifyService', ...params });
    expect([r.status, errorCode(r)], r.text).toEqual([status, code]);
    expect(r.doc.Response.Errors.Error.Message).toMatch(message);
    expect(h.clusters.mutatingCalls()).toEqual([]);
    expect(h.clusters.snapshot()).toBe(before);
  });

  it('refuses a non-admin with UnauthorizedOperation, before anything else', async () => {
    const h = await harness({ clusters: cloud(), authenticator: (clock) => testAuthenticator(clock) });
    const r = await signedQuery(h.app, { Action: 'ModifyService', Name: '127.0.12.11', State: 'DISABLE' }, TEST_USER, START);
    expect([r.status, errorCode(r)]).toEqual([403, 'UnauthorizedOperation']);
    expect(h.clusters.calls).toEqual([]);
    const admin = await signedQuery(h.app, { Action: 'ModifyService', Name: '127.0.12.11', State: 'DISABLE' }, TEST_ADMIN, START);
    expect(admin.status, admin.text).toBe(200);
  });
});

describe('ModifyService while a partition does not answer', () => {
  it('a node not found in the partitions that answered is ServiceUnavailable (it may be behind the silent CC)', async () => {
    const h = await harness({ clusters: cloud() });
    h.clusters.down.add('cluster02');
    const r = await query(h.app, { Action: 'ModifyService', Name: '127.0.12.21', State: 'DISABLE' });
    expect([r.status, errorCode(r)]).toEqual([503, 'ServiceUnavailable']);
    expect(h.clusters.mutatingCalls()).toEqual([]);
  });

  it('a node of an answering partition is changed as usual', async () => {
    const h = await harness({ clusters: cloud() });
    h.clusters.down.add('cluster02');
    const r = await query(h.app, { Action: 'ModifyService', Name: '127.0.12.11', State: 'DISABLE' });
    expect(r.status, r.text).toBe(200);
    expect(h.clusters.node('127.0.12.11')?.nodeState).toBe('disabled');
  });

  it('the CLC and clusters are refused without asking any CC, even a silent one', async () => {
    const h = await harness({ clusters: cloud() });
    h.clusters.down.add('cluster02');
    const r = await query(h.app, { Action: 'ModifyService', Name: 'cluster02', State: 'STOP' });
    expect([r.status, errorCode(r)]).toEqual([400, 'UnsupportedOperation']);
    expect(h.clusters.calls).toEqual([]);
  });
});

describe('DescribeServices with replicas (issue 21)', () => {
  const A = 'http://127.0.12.200:8774';
  const B = 'http://127.0.12.200:8784';
  const CLC_A = 'http://127.0.12.250:8773';
  const CLC_B = 'http://127.0.12.250:8783';
  /** cluster01 has two CC replicas, B leading; cluster02 one CC, asked nothing more. */
  const replicated = (asked: string[]) => (fake: FakeClusters): Clusters => ({
    partitions: fake.partitions.map((p) => (p.name === 'cluster01' ? { ...p, endpoint: A, endpoints: [A, B] } : p)),
    call: (partition, op, req) => fake.call(partition, op, req),
    describeReplicas: async (partition) => {
      asked.push(partition);
      return [
        { url: A, report: { partition, self: A, leading: false, leaderUrl: B } },
        { url: B, report: { partition, self: B, leading: true, leaderUrl: B, epoch: '31' } },
      ];
    },
  });
  const follower: Leadership = { self: CLC_B, leading: () => false, leaderUrl: () => CLC_A, epoch: () => undefined, replicas: () => [CLC_A, CLC_B] };

  it('names each leader under the service\'s name, each standby beside it; what the tools read', async () => {
    const asked: string[] = [];
    const h = await harness({ clusters: cloud(), wrap: replicated(asked), leadership: follower });
    const services = await describeLikeTool(h, EUSERV_DESCRIBE);
    expect(services.filter((s) => s.serviceId.type !== 'node').map((s) => `${s.serviceId.name} ${s.localState} ${s.serviceId.uri}`)).toEqual([
      `clc ENABLED ${CLC_A}${CLC_PATH}`,
      `clc@127.0.12.250-8783 DISABLED ${CLC_B}${CLC_PATH}`,
      `cluster01 ENABLED ${B}/axis2/services/EucalyptusCC`,
      `cluster01@127.0.12.200-8774 DISABLED ${A}/axis2/services/EucalyptusCC`,
      'cluster02 ENABLED http://127.0.12.201:8774/axis2/services/EucalyptusCC',
    ]);
    expect(asked).toEqual(['cluster01']);
    const leader = services.find((s) => s.serviceId.name === 'cluster01');
    expect(leader?.details).toEqual({ item: 'the leader of 2 CC replicas (epoch 31)' }); // details is not one of the tool's list tags
    // Standbys are services like the others: by name, by state, by the tool's filters.
    expect(await names(h, { 'ServiceName.1': 'cluster01@127.0.12.200-8774' })).toEqual(['cluster cluster01@127.0.12.200-8774']);
    expect(await names(h, { ByState: 'DISABLED', ByServiceType: 'cluster' })).toEqual(['cluster cluster01@127.0.12.200-8774']);
  });

  it('asks no replica when only the CLC or the nodes are asked for', async () => {
    const asked: string[] = [];
    const h = await harness({ clusters: cloud(), wrap: replicated(asked), leadership: follower });
    expect(await names(h, { ByServiceType: 'eucalyptus' })).toEqual(['eucalyptus clc', 'eucalyptus clc@127.0.12.250-8783']);
    await names(h, { ByServiceType: 'node' });
    expect(asked).toEqual([]);
  });

  it('a standby\'s name is no service the admin actions change: ModifyService refuses it as unknown, changing nothing', async () => {
    const h = await harness({ clusters: cloud(), wrap: replicated([]) });
    const r = await query(h.app, { Action: 'ModifyService', Name: 'cluster01@127.0.12.200-8774', State: 'DISABLED' });
    expect(r.status).toBe(400);
    expect(h.clusters.calls.filter((c) => c.op !== 'ccDescribeNodes')).toEqual([]);
  });
});
