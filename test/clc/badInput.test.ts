/**
 * One test per class of bad input, through the whole HTTP pipeline with a fake Clusters. Each checks
 * the EC2 error code, the HTTP status, the error document, and that nothing changed: no mutating
 * call reached a CC, the fake CCs hold what they held, and the CLC's store is as it was.
 */
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { CLC_PATH } from '../../clc/api/app.js';
import { ClcErrors } from '../../clc/core/errors.js';
import { harness, parseXml, query, type Harness, type QueryReply } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await harness();
});

interface Before { mutating: number; cloud: string; store: string }
const before = (): Before => ({ mutating: h.clusters.mutatingCalls().length, cloud: h.clusters.snapshot(), store: JSON.stringify(h.store.read()) });

function expectRefusal(r: QueryReply, snap: Before, code: string, status: number): void {
  expect(r.status).toBe(status);
  expect(ClcErrors.has(code)).toBe(true);
  expect(ClcErrors.table[code as keyof typeof ClcErrors.table].status).toBe(status);
  expect(r.doc.Response?.Errors?.Error?.Code).toBe(code);
  expect(typeof r.doc.Response?.Errors?.Error?.Message).toBe('string');
  expect(r.doc.Response?.RequestID).toBe('req-1');
  expect(h.clusters.mutatingCalls().length).toBe(snap.mutating);
  expect(h.clusters.snapshot()).toBe(snap.cloud);
  expect(JSON.stringify(h.store.read())).toBe(snap.store);
}

async function refused(params: Record<string, string>, code: string, status = 400): Promise<QueryReply> {
  const snap = before();
  const r = await query(h.app, params);
  expectRefusal(r, snap, code, status);
  return r;
}

async function launchOne(zone = 'cluster01'): Promise<string> {
  const r = await query(h.app, { Action: 'RunInstances', ImageId: 'emi-00000001', 'Placement.AvailabilityZone': zone });
  expect(r.status).toBe(200);
  return r.doc.RunInstancesResponse.instancesSet.item.instanceId as string;
}

describe('envelope', () => {
  it('unknown action', async () => {
    const r = await refused({ Action: 'MonitorInstances' }, 'InvalidAction');
    expect(r.doc.Response.Errors.Error.Message).toContain('MonitorInstances');
  });

  it('missing Action', async () => {
    const r = await refused({}, 'MissingParameter');
    expect(r.doc.Response.Errors.Error.Message).toContain('Action');
  });

  it('malformed query string', async () => {
    await refused({ Action: 'DescribeInstances', 'InstanceId.2': 'i-00000001' }, 'MalformedQueryString');
  });

  it('unknown parameter', async () => {
    await refused({ Action: 'DescribeNodes', Bogus: '1' }, 'UnknownParameter');
  });

  it('oversized body (413)', async () => {
    const small = await harness({ maxBodyBytes: 2048 });
    h = small;
    const snap = before();
    const res = await request(small.app).post(CLC_PATH).type('form')
      .send(`Action=DescribeInstances&Pad=${'x'.repeat(4096)}`);
    expectRefusal({ status: res.status, text: res.text, doc: await parseXml(res.text) }, snap, 'RequestEntityTooLarge', 413);
    expect(small.clusters.calls).toEqual([]);
  });

  it('a body that is not a form', async () => {
    const snap = before();
    const res = await request(h.app).post(CLC_PATH).type('application/json').send('{"Action":"DescribeInstances"}');
    expectRefusal({ status: res.status, text: res.text, doc: await parseXml(res.text) }, snap, 'Unsupported', 400);
  });

  it('a gzip body that is not gzip: a client error, not an InternalError', async () => {
    const snap = before();
    const res = await request(h.app).post(CLC_PATH).type('form').set('content-encoding', 'gzip').send('Action=DescribeInstances');
    expectRefusal({ status: res.status, text: res.text, doc: await parseXml(res.text) }, snap, 'MalformedQueryString', 400);
  });

  it('an HTTP method other than GET and POST', async () => {
    const snap = before();
    const res = await request(h.app).put(`${CLC_PATH}?Action=DescribeInstances`);
    expectRefusal({ status: res.status, text: res.text, doc: await parseXml(res.text) }, snap, 'Unsupported', 400);
  });
});

describe('RunInstances', () => {
  it('missing ImageId', async () => {
    await refused({ Action: 'RunInstances' }, 'MissingParameter');
    expect(h.clusters.calls).toEqual([]);
  });

  it('malformed MinCount', async () => {
    await refused({ Action: 'RunInstances', ImageId: 'emi-00000001', MinCount: '1e3' }, 'InvalidParameterValue');
    expect(h.clusters.calls).toEqual([]);
  });

  it('MinCount > MaxCount', async () => {
    await refused({ Action: 'RunInstances', ImageId: 'emi-00000001', MinCount: '3', MaxCount: '2' }, 'InvalidParameterCombination');
    expect(h.clusters.calls).toEqual([]);
  });

  it('unknown InstanceType', async () => {
    const r = await refused({ Action: 'RunInstances', ImageId: 'emi-00000001', InstanceType: 'm9.huge' }, 'InvalidParameterValue');
    expect(r.doc.Response.Errors.Error.Message).toContain('m1.small');
    expect(h.clusters.calls).toEqual([]);
  });

  it('unknown zone', async () => {
    const r = await refused({ Action: 'RunInstances', ImageId: 'emi-00000001', 'Placement.AvailabilityZone': 'cluster09' }, 'InvalidAvailabilityZone');
    expect(r.doc.Response.Errors.Error.Message).toContain('cluster01, cluster02');
    expect(h.clusters.calls).toEqual([]);
  });

  it('malformed ImageId', async () => {
    await refused({ Action: 'RunInstances', ImageId: 'ami-1' }, 'InvalidAMIID.Malformed');
  });

  it('CC of the chosen zone unreachable (503)', async () => {
    h.clusters.down.add('cluster02');
    await refused({ Action: 'RunInstances', ImageId: 'emi-00000001', 'Placement.AvailabilityZone': 'cluster02' }, 'ServiceUnavailable', 503);
  });

  it('every CC unreachable (503)', async () => {
    h.clusters.down.add('cluster01');
    h.clusters.down.add('cluster02');
    await refused({ Action: 'RunInstances', ImageId: 'emi-00000001' }, 'ServiceUnavailable', 503);
  });

  it('not enough capacity in the named zone', async () => {
    await refused({ Action: 'RunInstances', ImageId: 'emi-00000001', MinCount: '9', 'Placement.AvailabilityZone': 'cluster01' }, 'InsufficientInstanceCapacity', 503);
  });
});

describe('DescribeInstances and TerminateInstances', () => {
  it('malformed instance id (describe)', async () => {
    await refused({ Action: 'DescribeInstances', 'InstanceId.1': 'i-nothex00' }, 'InvalidInstanceID.Malformed');
  });

  it('malformed instance id (terminate): none terminated', async () => {
    const id = await launchOne();
    await refused({ Action: 'TerminateInstances', 'InstanceId.1': id, 'InstanceId.2': 'x' }, 'InvalidInstanceID.Malformed');
  });

  it('unknown instance id (describe)', async () => {
    const r = await refused({ Action: 'DescribeInstances', 'InstanceId.1': 'i-0000dead' }, 'InvalidInstanceID.NotFound');
    expect(r.doc.Response.Errors.Error.Message).toBe("The instance ID 'i-0000dead' does not exist");
    const two = await refused({ Action: 'DescribeInstances', 'InstanceId.1': 'i-0000dead', 'InstanceId.2': 'i-0000beef' }, 'InvalidInstanceID.NotFound');
    expect(two.doc.Response.Errors.Error.Message).toBe("The instance IDs 'i-0000dead, i-0000beef' do not exist");
  });

  it('unknown instance id (terminate): the known one is not terminated either', async () => {
    const id = await launchOne();
    const r = await refused({ Action: 'TerminateInstances', 'InstanceId.1': id, 'InstanceId.2': 'i-0000dead' }, 'InvalidInstanceID.NotFound');
    expect(r.doc.Response.Errors.Error.Message).toContain('i-0000dead');
    expect(r.doc.Response.Errors.Error.Message).not.toContain(id);
  });

  it('unknown filter', async () => {
    await refused({ Action: 'DescribeInstances', 'Filter.1.Name': 'vpc-id', 'Filter.1.Value.1': 'vpc-1' }, 'InvalidParameterValue');
  });

  it('terminate in a partition whose CC is unreachable (503): none terminated', async () => {
    const a = await launchOne('cluster01');
    const b = await launchOne('cluster02');
    h.clusters.down.add('cluster02');
    await refused({ Action: 'TerminateInstances', 'InstanceId.1': a, 'InstanceId.2': b }, 'ServiceUnavailable', 503);
  });

  it('describe of an instance whose CC is unreachable (503)', async () => {
    const b = await launchOne('cluster02');
    h.clusters.down.add('cluster02');
    await refused({ Action: 'DescribeInstances', 'InstanceId.1': b }, 'ServiceUnavailable', 503);
  });
});

describe('EnableService and DisableService', () => {
  it.each(['EnableService', 'DisableService'])('%s with a wrong Type', async (Action) => {
    await refused({ Action, Type: 'cluster', Host: '127.0.12.11' }, 'InvalidServiceType');
    expect(h.clusters.calls).toEqual([]);
  });

  it('unknown host', async () => {
    const r = await refused({ Action: 'DisableService', Type: 'NODE', Host: '127.0.12.99' }, 'InvalidHost.NotFound');
    expect(r.doc.Response.Errors.Error.Message).toContain('127.0.12.99');
  });

  it('host not in the given partition', async () => {
    await refused({ Action: 'DisableService', Type: 'NODE', Host: '127.0.12.21', Partition: 'cluster01' }, 'InvalidHost.NotFound');
  });

  it('unknown partition', async () => {
    await refused({ Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11', Partition: 'cluster09' }, 'InvalidAvailabilityZone');
    expect(h.clusters.calls).toEqual([]);
  });

  it('CC unreachable (503)', async () => {
    h.clusters.down.add('cluster01');
    await refused({ Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11', Partition: 'cluster01' }, 'ServiceUnavailable', 503);
  });

  it('host not found while a partition is unreachable is not a NotFound (503)', async () => {
    h.clusters.down.add('cluster02');
    await refused({ Action: 'EnableService', Type: 'NODE', Host: '127.0.12.21' }, 'ServiceUnavailable', 503);
  });
});

describe('describes of unknown partitions', () => {
  it.each([
    [{ Action: 'DescribeAvailabilityZones', 'ZoneName.1': 'cluster09' }],
    [{ Action: 'DescribeNodes', ByPartition: 'cluster09' }],
    [{ Action: 'DescribeServices', ByPartition: 'cluster09' }],
  ])('%j', async (params) => {
    await refused(params, 'InvalidAvailabilityZone');
  });
});

describe('paging (DescribeInstances, DescribeTags)', () => {
  /** A real token: the first of two pages of six instances (its key is made here, before the snapshots). */
  async function firstPageToken(action = 'DescribeInstances', extra: Record<string, string> = {}): Promise<string> {
    for (let i = 0; i < 6; i++) await launchOne();
    const r = await query(h.app, { Action: action, MaxResults: '5', ...extra });
    expect(r.status).toBe(200);
    const token = r.doc[`${action}Response`].nextToken as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    return token;
  }

  async function refusedToken(params: Record<string, string>, why: RegExp): Promise<void> {
    const calls = h.clusters.calls.length;
    const r = await refused(params, 'InvalidPaginationToken');
    expect(r.doc.Response.Errors.Error.Message).toMatch(why);
    // Read before the CCs are asked: a bad token costs nothing.
    expect(h.clusters.calls.length).toBe(calls);
  }

  it('MaxResults out of EC2\'s 5..1000', async () => {
    await refused({ Action: 'DescribeInstances', MaxResults: '4' }, 'InvalidParameterValue');
    await refused({ Action: 'DescribeTags', MaxResults: '1001' }, 'InvalidParameterValue');
    expect(h.clusters.calls).toEqual([]);
  });

  it('MaxResults with InstanceId.N', async () => {
    const id = await launchOne();
    await refused({ Action: 'DescribeInstances', 'InstanceId.1': id, MaxResults: '5' }, 'InvalidParameterCombination');
  });

  it.each([['DescribeInstances', 'bm90IGEgdG9rZW4'], ['DescribeTags', `eyJ2IjoxfQ.${'A'.repeat(43)}`]])(
    '%s with a token before any was issued (%s); no key is made for it', async (Action, NextToken) => {
      await refusedToken({ Action, NextToken }, /not issued by this cloud/);
      expect(h.store.read().pagingKey).toBeUndefined();
    },
  );

  it('a token that is not one', async () => {
    await firstPageToken();
    await refusedToken({ Action: 'DescribeInstances', NextToken: 'bm90IGEgdG9rZW4' }, /not a token/);
  });

  it('an altered token', async () => {
    const token = await firstPageToken();
    const altered = `${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`;
    await refusedToken({ Action: 'DescribeInstances', MaxResults: '5', NextToken: altered }, /altered/);
  });

  it('a token sent with other filters', async () => {
    const token = await firstPageToken();
    await refusedToken({ Action: 'DescribeInstances', MaxResults: '5', NextToken: token, 'Filter.1.Name': 'instance-state-name', 'Filter.1.Value.1': 'pending' }, /other filters/);
  });

  it('a token sent to another action', async () => {
    const token = await firstPageToken('DescribeTags');
    await refusedToken({ Action: 'DescribeInstances', NextToken: token }, /DescribeTags, not DescribeInstances/);
  });

  it('an expired token', async () => {
    const token = await firstPageToken();
    h.clock.advance(24 * 3600 * 1000 + 1);
    await refusedToken({ Action: 'DescribeInstances', MaxResults: '5', NextToken: token }, /expired/);
  });
});
