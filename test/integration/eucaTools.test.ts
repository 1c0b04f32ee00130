/**
 * Issue 14's real-clients suite, part two: euca2ools 3.x and the Eucalyptus 4 admin tools
 * (euserv-*) against a cloud of real processes on 127.0.44.0/24. They need Python 2, so their
 * exact requests are rebuilt from their public source (test/clients/requestbuilder.ts and
 * eucaCommands.ts say where each choice comes from) and their answers read the way they read them
 * (parse_listdelimited_aws_xml with each command's LIST_TAGS, then the command's own logic). Both
 * ways an administrator points them at a cloud are tried: the shipped config file (region
 * `localhost`, `.../services/compute/` and `.../services/Empyrean/` with their trailing slashes)
 * and the variables of a sourced admin.credentials (region `undefined-<pid>`). Each bad input gets
 * its coded error and changes nothing. boto3 and the aws CLI: realClients.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, describeNodes, placeOn, runningCopies, setNodeState } from '../helpers/cloudApi.js';
import { sourceCredentials } from '../clients/awsTools.js';
import {
  adminBootstrap, adminEc2, createdTagRows, EUCA2OOLS_USER_AGENT, EUCALYPTUS_ADMIN_USER_AGENT, euca2oolsEc2, EucalyptusAdmin, Euca2ools,
  expertServiceRows, instanceRows, serviceRows,
} from '../clients/eucaCommands.js';
import { get, list, text, type ToolDict } from '../clients/listDelimitedXml.js';
import { RequestbuilderSession, ToolServerError, type Credentials, type ToolResponse } from '../clients/requestbuilder.js';

// 256 MiB guests over 400 Mbit/s, barely dirtied: ~6 s per migration, long enough to watch one in flight.
const cloud = new TestCloud(44, 3, { simArgs: ['--bandwidth-mbps', '400', '--dirty-rate-mibps', '4'], ccArgs: ['--poll-interval-ms', '1000'] });
const [n1, n2, n3] = cloud.nodeHosts as [string, string, string];
const ORIGIN = new URL(cloud.url).origin;
const EMI = 'emi-0a1b2c3d';
const SIGNED = 'accept;accept-encoding;content-length;content-type;host;x-amz-content-sha256;x-amz-date';

/** How an administrator points the tools at the cloud. */
interface Setup {
  readonly name: string;
  readonly ec2: string;
  readonly bootstrap: string;
  /** The config file's region section; none when the URLs come from the environment. */
  readonly region?: string;
}
let setups: Setup[];
const sessions: RequestbuilderSession[] = [];
let creds: Credentials;

function euca2ools(setup: Setup): Euca2ools {
  const s = new RequestbuilderSession(creds, EUCA2OOLS_USER_AGENT);
  sessions.push(s);
  return new Euca2ools(s, euca2oolsEc2(setup.ec2, setup.region));
}
function admin(setup: Setup): EucalyptusAdmin {
  const s = new RequestbuilderSession(creds, EUCALYPTUS_ADMIN_USER_AGENT);
  sessions.push(s);
  return new EucalyptusAdmin(s, adminBootstrap(setup.bootstrap, setup.region), adminEc2(setup.ec2, setup.region));
}
const ini = (): Setup => setups[0] as Setup;

/** The tool's error for a call that must fail (a ToolServerError: its status, code and message). */
async function toolError(p: Promise<unknown>): Promise<ToolServerError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ToolServerError) return e;
    throw e;
  }
  throw new Error('the tool call succeeded but should have failed');
}

/** Node states (Ferry's own DescribeNodes) and where every instance runs (the hypervisors). */
async function cloudState(): Promise<{ nodes: Record<string, string>; running: Record<string, string[]> }> {
  const nodes = Object.fromEntries((await describeNodes(cloud)).map((n) => [n.host as string, n.state as string]));
  return { nodes, running: Object.fromEntries(await runningCopies(cloud)) };
}
async function changesNothing<T>(body: () => Promise<T>): Promise<T> {
  const before = await cloudState();
  const out = await body();
  expect(await cloudState()).toEqual(before);
  return out;
}

async function migrationOf(id: string): Promise<any> {
  const r = await adminCall(cloud, { Action: 'DescribeMigrations', 'MigrationId.1': id });
  return arr<any>(r.migrationSet?.item)[0];
}

/**
 * Follows a migration the admin tool started until it is final, watching it through
 * euserv-describe-node-controllers: returns the final migration and the MIGRATING-TO rows seen.
 */
async function followWithNodeControllers(tool: EucalyptusAdmin, response: ToolResponse): Promise<{ final: any; seen: string[][] }> {
  const id = text(response.result.migrationId);
  expect(id, JSON.stringify(response.result)).toMatch(/^mig-[0-9a-f]{8}$/);
  const seen: string[][] = [];
  const deadline = Date.now() + 90_000;
  for (;;) {
    const { rows } = await tool.describeNodeControllers();
    let node = '';
    for (const row of rows) {
      if (row[0] === 'NODE') node = row[2] ?? '';
      else if (row[2] === 'MIGRATING-TO') seen.push([node, row[1] ?? '', row[3] ?? '']);
    }
    const m = await migrationOf(id as string);
    if (m.state !== 'active') return { final: m, seen };
    if (Date.now() > deadline) throw new Error(`migration ${id} still active: ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Node host → the instance ids euserv-describe-node-controllers lists beneath it. */
async function nodeControllerView(tool: EucalyptusAdmin): Promise<Record<string, string[]>> {
  const { nodes } = await tool.describeNodeControllers();
  return Object.fromEntries([...nodes.values()].map((n) => [n.host, [...n.instances.keys()].sort()]));
}

/** The hypervisors' view in the same shape. */
async function hypervisorView(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = Object.fromEntries(cloud.nodeHosts.map((h) => [h, [] as string[]]));
  for (const [id, at] of await runningCopies(cloud)) for (const h of at) out[h]?.push(id);
  for (const h of Object.keys(out)) out[h]?.sort();
  return out;
}

beforeAll(async () => {
  await cloud.start();
  const sourced = await sourceCredentials(cloud.credentialsFile());
  // The tools read AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (RB auth/aws.py:110-114); EC2_* only as a fallback here.
  creds = { accessKey: sourced.AWS_ACCESS_KEY_ID ?? sourced.EC2_ACCESS_KEY ?? '', secretKey: sourced.AWS_SECRET_ACCESS_KEY ?? sourced.EC2_SECRET_KEY ?? '' };
  setups = [
    { name: 'the shipped eucalyptus-admin config (region localhost, trailing slashes)', ec2: `${ORIGIN}/services/compute/`, bootstrap: `${ORIGIN}/services/Empyrean/`, region: 'localhost' },
    { name: 'a sourced admin.credentials (EC2_URL, EUCA_BOOTSTRAP_URL, region undefined-<pid>)', ec2: sourced.EC2_URL ?? cloud.url, bootstrap: sourced.EUCA_BOOTSTRAP_URL ?? `${ORIGIN}/services/Empyrean` },
    { name: 'eucarc-style URLs without the slash', ec2: `${ORIGIN}/services/compute`, bootstrap: `${ORIGIN}/services/Empyrean` },
  ];
  await adminCall(cloud, { Action: 'RunInstances', ImageId: EMI, MinCount: '3', MaxCount: '3' });
});
afterAll(async () => {
  for (const s of sessions) s.close();
  await cloud.destroy();
});

describe('euca2ools 3.x', () => {
  it.each([0, 1, 2])('describes regions, zones (verbose) and instances (verbose) — setup %i', async (k) => {
    const setup = setups[k] as Setup;
    const tool = euca2ools(setup);
    const regions = await tool.describeRegions();
    const regionInfo = list(regions.result.regionInfo);
    expect(regionInfo, setup.name).toHaveLength(1);
    expect(new URL(text(get(regionInfo[0], 'regionEndpoint')) ?? '').origin).toBe(ORIGIN);
    const zones = list((await tool.describeAvailabilityZones(['verbose'])).result.availabilityZoneInfo);
    const zoneRows = zones.map((z) => `${text(get(z, 'zoneName'))}\t${text(get(z, 'zoneState'))}`);
    expect(zoneRows[0]).toBe('cluster01\tavailable');
    expect(zoneRows.some((r) => /^\|- m1\.small\t\d{4} \/ \d{4}\t1\t256\t5$/.test(r)), zoneRows.join('\n')).toBe(true);
    const all = await tool.describeInstances();
    const verbose = await tool.describeInstances(['verbose']);
    const ids = (r: ToolResponse): string[] => instanceRows(r.result).filter((row) => row[0] === 'INSTANCE').map((row) => row[1] as string).sort();
    expect(ids(all).length).toBeGreaterThanOrEqual(3);
    expect(ids(verbose)).toEqual(ids(all));
    // What went on the wire, as requestbuilder sends it.
    const wire = all.sent[0];
    expect(wire?.url).toBe(setup.ec2);
    expect(wire?.params.Version).toBe('2015-10-01');
    expect(wire?.headers.Authorization).toContain(`/${setup.region ?? `undefined-${process.pid}`}/ec2/aws4_request, SignedHeaders=${SIGNED}, `);
  });

  it('euca-run-instances -n 2, then euca-describe-instances shows them with their euca:node TAG rows', async () => {
    const tool = euca2ools(ini());
    const run = await tool.runInstances({ imageId: EMI, count: '2', instanceType: 'm1.small' });
    expect(run.sent[0]?.params).toMatchObject({ ImageId: EMI, MinCount: '2', MaxCount: '2', InstanceType: 'm1.small', Action: 'RunInstances' });
    const rows = instanceRows({ reservationSet: [run.result] } as ToolDict);
    const launched = rows.filter((r) => r[0] === 'INSTANCE').map((r) => r[1] as string);
    expect(launched).toHaveLength(2);
    const where = await runningCopies(cloud);
    const described = instanceRows((await tool.describeInstances(launched)).result);
    for (const id of launched) expect(described).toContainEqual(['TAG', 'instance', id, 'euca:node', where.get(id)?.[0]]);
    const onN1 = [...where].filter(([, at]) => at[0] === n1).map(([id]) => id).sort();
    const filtered = instanceRows((await tool.describeInstances([], [['tag:euca:node', n1]])).result);
    expect(filtered.filter((r) => r[0] === 'INSTANCE').map((r) => r[1]).sort()).toEqual(onN1);
  });

  it('euca-run-instances --client-token twice: one reservation, one launch', async () => {
    const tool = euca2ools(ini());
    const before = await runningCopies(cloud);
    const first = await tool.runInstances({ imageId: EMI, clientToken: `euca2ools-${process.pid}` });
    const again = await tool.runInstances({ imageId: EMI, clientToken: `euca2ools-${process.pid}` });
    expect(text(again.result.reservationId)).toBe(text(first.result.reservationId));
    expect((await runningCopies(cloud)).size).toBe(before.size + 1);
  });

  it('euca-describe-tags, plain and filtered by key and resource-id', async () => {
    const tool = euca2ools(ini());
    const where = await runningCopies(cloud);
    const tagRows = (r: ToolResponse): string[][] => list(r.result.tagSet)
      .map((t) => ['TAG', text(get(t, 'resourceType')) ?? '', text(get(t, 'resourceId')) ?? '', text(get(t, 'key')) ?? '', text(get(t, 'value')) ?? '']);
    const expected = [...where].map(([id, at]) => ['TAG', 'instance', id, 'euca:node', at[0] as string]);
    const all = tagRows(await tool.describeTags());
    for (const row of expected) expect(all).toContainEqual(row);
    expect(tagRows(await tool.describeTags([['key', 'euca:node']])).sort()).toEqual(expected.sort());
    const [someId] = [...where.keys()];
    expect(tagRows(await tool.describeTags([['resource-id', someId as string]]))).toEqual([expected.find((r) => r[2] === someId)]);
  });

  it('euca-create-tags and euca-delete-tags send what the tools send; the tags show in euca-describe-instances and euca-describe-tags', async () => {
    const tool = euca2ools(ini());
    const where = await runningCopies(cloud);
    const [a, b] = [...where.keys()].sort() as [string, string];
    const tagRows = (r: ToolResponse): string[][] => list(r.result.tagSet)
      .map((t) => ['TAG', text(get(t, 'resourceType')) ?? '', text(get(t, 'resourceId')) ?? '', text(get(t, 'key')) ?? '', text(get(t, 'value')) ?? '']);
    const userRows = async (id: string): Promise<string[][]> => tagRows(await tool.describeTags([['resource-id', id]])).filter((r) => !r[3]?.startsWith('euca:'));

    // euca-create-tags A B --tag Owner=alice --tag Role --tag Note=
    const tags = ['Owner=alice', 'Role', 'Note='];
    const created = await tool.createTags([a, b], tags);
    expect(created.sent[0]?.params).toEqual({
      'ResourceId.1': a, 'ResourceId.2': b, 'Tag.1.Key': 'Owner', 'Tag.1.Value': 'alice', 'Tag.2.Key': 'Role', 'Tag.2.Value': '',
      'Tag.3.Key': 'Note', 'Tag.3.Value': '', Action: 'CreateTags', Version: '2015-10-01',
    });
    expect(created.sent[0]?.headers.Authorization).toContain(`/localhost/ec2/aws4_request, SignedHeaders=${SIGNED}, `);
    expect(text(created.result.return)).toBe('true');
    expect(createdTagRows([a, b], tags)).toEqual([a, b].flatMap((id) => [['TAG', 'instance', id, 'Owner', 'alice'], ['TAG', 'instance', id, 'Role', ''], ['TAG', 'instance', id, 'Note', '']]));

    // euca-describe-instances A: the TAG rows print_instance prints, user tags beside euca:node.
    const described = instanceRows((await tool.describeInstances([a])).result).filter((r) => r[0] === 'TAG');
    expect(described).toEqual([
      ['TAG', 'instance', a, 'Note', ''], ['TAG', 'instance', a, 'Owner', 'alice'], ['TAG', 'instance', a, 'Role', ''], ['TAG', 'instance', a, 'euca:node', where.get(a)?.[0]],
    ]);
    const byOwner = instanceRows((await tool.describeInstances([], [['tag:Owner', 'alice']])).result).filter((r) => r[0] === 'INSTANCE').map((r) => r[1]);
    expect(byOwner.sort()).toEqual([a, b]);
    expect(tagRows(await tool.describeTags([['key', 'Owner']])).sort()).toEqual([['TAG', 'instance', a, 'Owner', 'alice'], ['TAG', 'instance', b, 'Owner', 'alice']]);

    // euca-delete-tags A --tag Owner=bob --tag Role --tag Note=: a value that differs keeps the tag; no value, any; `=`, an empty one.
    const deleted = await tool.deleteTags([a], ['Owner=bob', 'Role', 'Note=']);
    expect(deleted.sent[0]?.params).toEqual({
      'ResourceId.1': a, 'Tag.1.Key': 'Owner', 'Tag.1.Value': 'bob', 'Tag.2.Key': 'Role', 'Tag.3.Key': 'Note', 'Tag.3.Value': '', Action: 'DeleteTags', Version: '2015-10-01',
    });
    expect(text(deleted.result.return)).toBe('true');
    expect(await userRows(a)).toEqual([['TAG', 'instance', a, 'Owner', 'alice']]);
    expect(await userRows(b)).toHaveLength(3);
    await tool.deleteTags([a, b], ['Owner', 'Role', 'Note']);
    expect([...(await userRows(a)), ...(await userRows(b))]).toEqual([]);
    expect(tagRows(await tool.describeTags([['resource-id', a]]))).toEqual([['TAG', 'instance', a, 'euca:node', where.get(a)?.[0]]]);
  });

  it('euca-create-tags / euca-delete-tags errors read as `error (CODE): message` and change no tag', async () => {
    const tool = euca2ools(ini());
    const [a] = [...(await runningCopies(cloud)).keys()].sort() as [string];
    await tool.createTags([a], ['Keep=me']);
    const tagsNow = async () => JSON.stringify((await adminCall(cloud, { Action: 'DescribeTags' })).tagSet);
    const before = await tagsNow();
    await changesNothing(async () => {
      const snapshot = await toolError(tool.createTags([a, 'snap-0a1b2c3d'], ['Owner=alice']));
      expect(snapshot.message).toMatch(/^error \(InvalidID\): The ID 'snap-0a1b2c3d' is not valid: Ferry tags instances .* and volumes .* only/);
      const volume = await toolError(tool.createTags([a, 'vol-0a1b2c3d'], ['Owner=alice']));
      expect(volume.message).toMatch(/^error \(InvalidVolume\.NotFound\): .*vol-0a1b2c3d/);
      const reserved = await toolError(tool.createTags([a], ['euca:node=127.0.44.99']));
      expect(reserved.code).toBe('InvalidParameterValue');
      const system = await toolError(tool.deleteTags([a], ['euca:node']));
      expect(system.code).toBe('InvalidParameterValue');
      const unknown = await toolError(tool.deleteTags([a, 'i-00000000'], ['Keep']));
      expect(unknown.message).toMatch(/^error \(InvalidInstanceID\.NotFound\): .*i-00000000/);
    });
    expect(await tagsNow()).toBe(before);
    await tool.deleteTags([a], ['Keep']);
  });

  it('euca-terminate-instances prints INSTANCE id previous current, and the instance goes', async () => {
    const tool = euca2ools(ini());
    const [victim] = [...(await runningCopies(cloud)).keys()];
    const r = await tool.terminateInstances([victim as string]);
    const rows = list(r.result.instancesSet).map((i) => ['INSTANCE', text(get(i, 'instanceId')), text(get(get(i, 'previousState'), 'name')), text(get(get(i, 'currentState'), 'name'))]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.slice(0, 3)).toEqual(['INSTANCE', victim, 'running']);
    expect(['shutting-down', 'terminated']).toContain(rows[0]?.[3]);
    const deadline = Date.now() + 30_000;
    while ((await runningCopies(cloud)).has(victim as string) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
    expect((await runningCopies(cloud)).has(victim as string)).toBe(false);
  });

  it('an error reads as `error (CODE): message` and changes nothing', async () => {
    const tool = euca2ools(ini());
    await changesNothing(async () => {
      const notFound = await toolError(tool.describeInstances(['i-00000000']));
      expect(notFound.message).toMatch(/^error \(InvalidInstanceID\.NotFound\): /);
      const badRun = await toolError(tool.runInstances({ imageId: 'emi-nothex!' }));
      expect(badRun.code).toBe('InvalidAMIID.Malformed');
      const reused = await toolError(tool.runInstances({ imageId: EMI, count: '2', clientToken: `euca2ools-${process.pid}` }));
      expect(reused.code).toBe('IdempotentParameterMismatch');
    });
  });
});

describe('Eucalyptus 4 admin tools: euserv-describe-services', () => {
  it.each([0, 1, 2])('answers the default request (ListAll, ShowEvents, ShowEventStacks all false) — setup %i', async (k) => {
    const setup = setups[k] as Setup;
    const tool = admin(setup);
    const r = await tool.describeServices();
    expect(r.sent[0]?.params).toEqual({ ListAll: 'false', ShowEvents: 'false', ShowEventStacks: 'false', Action: 'DescribeServices', Version: 'eucalyptus' });
    expect(r.sent[0]?.headers.Authorization).toContain(`/${setup.region ?? `undefined-${process.pid}`}/bootstrap/aws4_request, SignedHeaders=${SIGNED}, `);
    const rows = serviceRows(r.result);
    expect(rows.length).toBeGreaterThan(0);
    const everything = serviceRows((await tool.describeServices({ all: true })).result);
    for (const row of rows) expect(everything).toContainEqual(row);
  });

  it('-a lists the CLC, the cluster and every node, enabled', async () => {
    const rows = serviceRows((await admin(ini()).describeServices({ all: true })).result);
    const nodes = rows.filter((r) => r[1] === 'node').sort((a, b) => ((a[3] ?? '') < (b[3] ?? '') ? -1 : 1));
    expect(nodes).toEqual([n1, n2, n3].map((h) => ['SERVICE', 'node', 'cluster01', h, 'enabled']));
    expect(rows.some((r) => r[1] === 'cluster' && r[2] === 'cluster01')).toBe(true);
    expect(rows.filter((r) => r[1] !== 'node' && r[1] !== 'cluster').length).toBeGreaterThan(0);
  });

  it('--filter service-type, availability-zone (sent as partition), host and state', async () => {
    const tool = admin(ini());
    const names = async (filters: [string, string][]): Promise<string[]> =>
      serviceRows((await tool.describeServices({ all: true, filters })).result).map((r) => `${r[1]} ${r[3]}`).sort();
    const byType = await tool.describeServices({ all: true, filters: [['service-type', 'node']] });
    expect(byType.sent[0]?.params).toMatchObject({ 'Filter.1.Name': 'service-type', 'Filter.1.Value.1': 'node', ListAll: 'true' });
    expect(serviceRows(byType.result).map((r) => r[3]).sort()).toEqual([n1, n2, n3]);
    const inZone = await names([['availability-zone', 'cluster01']]);
    expect(inZone).toEqual(expect.arrayContaining([`node ${n1}`, `node ${n2}`, `node ${n3}`]));
    expect(await names([['host', n2]])).toEqual([`node ${n2}`]);
    expect(await names([['service-type', 'node'], ['state', 'enabled']])).toEqual([n1, n2, n3].map((h) => `node ${h}`));
    expect(await names([['service-type', 'node'], ['state', 'disabled']])).toEqual([]);
  });

  it('names services by name and by full name (ServiceName.N)', async () => {
    const tool = admin(ini());
    const r = await tool.describeServices({ names: [n1, n3] });
    expect(r.sent[0]?.params).toMatchObject({ 'ServiceName.1': n1, 'ServiceName.2': n3 });
    expect(serviceRows(r.result).map((row) => row[3]).sort()).toEqual([n1, n3]);
    const fullName = text(get(get(list(r.result.serviceStatuses)[0], 'serviceId'), 'fullName')) as string;
    expect(serviceRows((await tool.describeServices({ names: [fullName] })).result).map((row) => row[3])).toEqual([n1]);
  });

  it('--expert: fullName, state, localEpoch and uri of every service; each node\'s host is its address', async () => {
    const r = await admin(ini()).describeServices({ all: true });
    const rows = expertServiceRows(r.result);
    expect(rows.length).toBeGreaterThanOrEqual(5);
    for (const [, fullName, state, epoch, uri] of rows) {
      expect(fullName).not.toBe('');
      expect(state).toMatch(/^[a-z]+$/);
      expect(epoch).toMatch(/^\d+$/);
      expect(uri, `uri of ${fullName}`).not.toBe('');
    }
    expect(new Set(rows.map((row) => row[1])).size).toBe(rows.length);
    for (const s of list(r.result.serviceStatuses).filter((x) => text(get(get(x, 'serviceId'), 'type')) === 'node')) {
      expect(text(get(get(s, 'serviceId'), 'host'))).toBe(text(get(get(s, 'serviceId'), 'name')));
    }
  });

  it('--expert: a node\'s uri is its NC\'s URL, as Eucalyptus 4 gives it (http://HOST:8775/axis2/services/EucalyptusNC)', async () => {
    // Eucalyptus 4: ProxyNodeConfiguration (clc/modules/cluster/.../proxy/node/ProxyNodeConfiguration.java:67-81)
    // gives every node the uri of its NC; `none` is only for a service without one (EmpyreanMessages.groovy:94-96).
    const r = await admin(ini()).describeServices({ all: true, filters: [['service-type', 'node']] });
    for (const row of expertServiceRows(r.result)) {
      const host = /:node:(.+)\/$/.exec(row[1] ?? '')?.[1];
      expect(row[4], `uri of ${row[1]}`).toMatch(/^https?:\/\//);
      expect(new URL(row[4] as string).hostname).toBe(host);
    }
  });
});

describe('Eucalyptus 4 admin tools: euserv-modify-service', () => {
  it('-s DISABLE makes the node DISABLED for real (persisted on the NC, no new instances); -s ENABLE by full name brings it back', async () => {
    const tool = admin(ini());
    await tool.modifyService(n2, 'DISABLE');
    expect((await cloudState()).nodes[n2]).toBe('DISABLED');
    expect(serviceRows((await tool.describeServices({ names: [n2] })).result)).toEqual([['SERVICE', 'node', 'cluster01', n2, 'disabled']]);
    // Persisted on the NC: killed and restarted, it comes back DISABLED (as its CC hears it afresh).
    const restarted = Date.now();
    await cloud.restart(`nc-${n2}`);
    const deadline = Date.now() + 30_000;
    let heard: any;
    do {
      await new Promise((r) => setTimeout(r, 200));
      heard = (await describeNodes(cloud)).find((n) => n.host === n2);
    } while (!(String(heard?.reachable) === 'true' && Date.parse(heard?.lastSeen) > restarted) && Date.now() < deadline);
    expect(Date.parse(heard?.lastSeen), JSON.stringify(heard)).toBeGreaterThan(restarted);
    expect(heard?.state).toBe('DISABLED');
    const launched = await euca2ools(ini()).runInstances({ imageId: EMI, count: '3' });
    const ids = list(launched.result.instancesSet).map((i) => text(get(i, 'instanceId')) as string);
    const where = await runningCopies(cloud);
    for (const id of ids) expect(where.get(id)?.[0]).not.toBe(n2);
    const fullName = text(get(get(list((await tool.describeServices({ names: [n2] })).result.serviceStatuses)[0], 'serviceId'), 'fullName')) as string;
    await tool.modifyService(fullName, 'ENABLE');
    expect((await cloudState()).nodes[n2]).toBe('ENABLED');
  }, 90_000);

  it.each([
    ['-s STOP of a node', n2, 'STOP', 'UnsupportedOperation'],
    ['-s START of a node', n2, 'START', 'UnsupportedOperation'],
    ['-s DISABLE of the cluster', 'cluster01', 'DISABLE', 'UnsupportedOperation'],
    ['-s STOP of the CLC', 'clc', 'STOP', 'UnsupportedOperation'],
    ['a service the cloud does not have', '127.0.44.99', 'DISABLE', 'InvalidService.NotFound'],
    ['a state that is no Eucalyptus transition or state', n1, 'EXPLODE', 'InvalidParameterValue'],
  ])('%s is a coded error and changes nothing', async (_name, name, state, code) => {
    const tool = admin(ini());
    const services = serviceRows((await tool.describeServices({ all: true })).result);
    await changesNothing(async () => {
      const e = await toolError(tool.modifyService(name, state));
      expect(e.code, e.body).toBe(code);
      expect(e.status).toBe(400);
    });
    expect(serviceRows((await tool.describeServices({ all: true })).result)).toEqual(services);
  });
});

describe('Eucalyptus 4 admin tools: euserv-describe-node-controllers and euserv-migrate-instances', () => {
  // A clean slate: every node enabled, no instance left by the tests above (each test places its own).
  beforeAll(async () => {
    for (const h of cloud.nodeHosts) await setNodeState(cloud, h, true);
    const ids = [...(await runningCopies(cloud)).keys()];
    if (ids.length > 0) await adminCall(cloud, { Action: 'TerminateInstances', ...Object.fromEntries(ids.map((id, k) => [`InstanceId.${k + 1}`, id])) });
    const deadline = Date.now() + 30_000;
    while ((await runningCopies(cloud)).size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await placeOn(cloud, n3, 1);
  });

  it('lists every node with the instances the hypervisors run on it', async () => {
    const tool = admin(ini());
    const { rows } = await tool.describeNodeControllers();
    expect(rows.filter((r) => r[0] === 'NODE')).toEqual([n1, n2, n3].map((h) => ['NODE', 'cluster01', h, 'enabled', '']));
    // The two requests the tool sends, each to its own service (read before the next call adds to the history).
    expect(tool.session.history.map((s) => s.params)).toEqual([
      { ListAll: 'true', Action: 'DescribeServices', Version: 'eucalyptus' },
      { 'InstanceId.1': 'verbose', Action: 'DescribeInstances', Version: '2014-10-01' },
    ]);
    expect(await nodeControllerView(tool)).toEqual(await hypervisorView());
  });

  it('-i INSTANCE: the instance moves, shown MIGRATING-TO its destination under its source while it does', async () => {
    const tool = admin(ini());
    const [id] = await placeOn(cloud, n1, 1);
    const r = await tool.migrateInstances({ instance: id as string });
    expect(r.sent[0]?.params).toEqual({ InstanceId: id, Action: 'MigrateInstances', Version: '2014-10-01' });
    const { final, seen } = await followWithNodeControllers(tool, r);
    expect(final.state).toBe('completed');
    const dest = arr<any>(final.itemSet?.item)[0]?.destination as string;
    expect(dest).not.toBe(n1);
    expect(seen).toContainEqual([n1, id, dest]);
    expect((await runningCopies(cloud)).get(id as string)).toEqual([dest]);
    const view = await tool.describeNodeControllers();
    expect(view.rows).not.toContainEqual(expect.arrayContaining(['MIGRATING-TO']));
    expect(await nodeControllerView(tool)).toEqual(await hypervisorView());
  }, 120_000);

  it('-i INSTANCE --exclude-dest HOST: AllowHosts=false, and it lands elsewhere', async () => {
    const tool = admin(ini());
    const [id] = await placeOn(cloud, n1, 1);
    const r = await tool.migrateInstances({ instance: id as string, excludeDest: [n2] });
    expect(r.sent[0]?.params).toEqual({ InstanceId: id, AllowHosts: 'false', 'DestinationHost.1': n2, Action: 'MigrateInstances', Version: '2014-10-01' });
    const { final } = await followWithNodeControllers(tool, r);
    expect(final.state).toBe('completed');
    expect((await runningCopies(cloud)).get(id as string)).toEqual([n3]);
  }, 120_000);

  it('-s HOST drains the node', async () => {
    const tool = admin(ini());
    await placeOn(cloud, n2, 2);
    const onN2 = (await hypervisorView())[n2] ?? [];
    expect(onN2.length).toBeGreaterThanOrEqual(2);
    const r = await tool.migrateInstances({ source: n2 });
    expect(r.sent[0]?.params).toEqual({ SourceHost: n2, Action: 'MigrateInstances', Version: '2014-10-01' });
    const { final, seen } = await followWithNodeControllers(tool, r);
    expect(final.state).toBe('completed');
    expect(seen.length).toBeGreaterThan(0);
    for (const [from] of seen) expect(from).toBe(n2);
    const after = await hypervisorView();
    expect(after[n2]).toEqual([]);
    for (const id of onN2) expect([...(after[n1] ?? []), ...(after[n3] ?? [])]).toContain(id);
    expect(await nodeControllerView(tool)).toEqual(after);
  }, 120_000);

  it('-s HOST --include-dest HOST: AllowHosts=true, everything lands there', async () => {
    const tool = admin(ini());
    await placeOn(cloud, n1, 2);
    const onN1 = (await hypervisorView())[n1] ?? [];
    expect(onN1.length).toBeGreaterThanOrEqual(2);
    const r = await tool.migrateInstances({ source: n1, includeDest: [n2] });
    expect(r.sent[0]?.params).toEqual({ SourceHost: n1, AllowHosts: 'true', 'DestinationHost.1': n2, Action: 'MigrateInstances', Version: '2014-10-01' });
    const { final } = await followWithNodeControllers(tool, r);
    expect(final.state).toBe('completed');
    const after = await hypervisorView();
    expect(after[n1]).toEqual([]);
    for (const id of onN1) expect(after[n2]).toContain(id);
  }, 120_000);

  it.each([
    ['an unknown source host', { source: '127.0.44.99' }, 'InvalidHost.NotFound'],
    ['an unknown instance', { instance: 'i-00000000' }, 'InvalidInstanceID.NotFound'],
    ['the source among the allowed destinations', { source: n3, includeDest: [n3] }, 'InvalidParameterCombination'],
  ])('%s is a coded error and changes nothing', async (_name, o, code) => {
    const tool = admin(ini());
    await changesNothing(async () => {
      const e = await toolError(tool.migrateInstances(o));
      expect(e.code, e.body).toBe(code);
    });
  });
});

describe('unknown paths, as the tools see them', () => {
  it('a wrong service URL is a coded XML error (the tool prints its code, not an HTML page) and changes nothing', async () => {
    const wrong: Setup = { name: 'wrong', ec2: `${ORIGIN}/services/nowhere/`, bootstrap: `${ORIGIN}/services/Empyrean/nowhere`, region: 'localhost' };
    await changesNothing(async () => {
      const run = await toolError(euca2ools(wrong).runInstances({ imageId: EMI }));
      expect(run.status).toBe(404);
      expect(run.code, run.body).toBe('UnknownEndpoint');
      const modify = await toolError(admin(wrong).modifyService(n1, 'DISABLE'));
      expect(modify.code, modify.body).toBe('UnknownEndpoint');
    });
  });
});
