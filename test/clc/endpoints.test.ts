/**
 * What real clients reach first (issue 14): the three paths the admin API answers at, an EC2 error
 * document (never HTML) anywhere else, the Version values the tools send, DescribeRegions, DryRun.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ACTIONS } from '../../clc/api/actions/index.js';
import { errorCode, harness, items, parseXml, query } from './harness.js';

async function post(app: Parameters<typeof request>[0], path: string, params: Record<string, string>) {
  const res = await request(app).post(path).type('form').send(new URLSearchParams(params).toString());
  return { status: res.status, type: String(res.headers['content-type']), text: res.text, doc: await parseXml(res.text) };
}

describe('admin API paths', () => {
  it.each([
    '/services/Eucalyptus', '/services/Eucalyptus/', '/services/compute', '/services/compute/', '/services/Empyrean', '/services/Empyrean/',
  ])('%s serves the actions', async (path) => {
    const h = await harness();
    const r = await post(h.app, path, { Action: 'DescribeAvailabilityZones', Version: '2015-10-01' });
    expect(r.status, r.text).toBe(200);
    expect(items(r.doc.DescribeAvailabilityZonesResponse.availabilityZoneInfo).map((z) => z.zoneName)).toEqual(['cluster01', 'cluster02']);
  });

  it.each([
    ['POST', '/'], ['POST', '/services/Other'], ['GET', '/services/compute/extra?Action=DescribeInstances'], ['GET', '/favicon.ico'], ['PUT', '/nothing'],
  ])('%s %s gets UnknownEndpoint as an EC2 error document, and nothing runs', async (method, path) => {
    const h = await harness();
    const res = await request(h.app)[method === 'GET' ? 'get' : method === 'PUT' ? 'put' : 'post'](path).type('form').send('Action=RunInstances&ImageId=emi-00000001');
    expect(res.status).toBe(404);
    expect(String(res.headers['content-type'])).toMatch(/^text\/xml/);
    expect(res.text).not.toMatch(/<html/i);
    const doc = await parseXml(res.text);
    expect(doc.Response.Errors.Error.Code).toBe('UnknownEndpoint');
    expect(doc.Response.Errors.Error.Message).toContain('/services/compute');
    expect(doc.Response.RequestID).toBeTruthy();
    expect(h.clusters.calls).toEqual([]);
  });
});

describe('Version', () => {
  it.each(['2013-02-01', '2014-10-01', '2015-10-01', '2016-11-15', 'eucalyptus'])('accepts %s', async (version) => {
    const h = await harness();
    expect((await query(h.app, { Action: 'DescribeRegions', Version: version })).status).toBe(200);
  });

  it.each(['2013-2-1', 'latest', 'eucalyptus4', ''])('refuses %j with InvalidParameterValue', async (version) => {
    const h = await harness();
    const r = await query(h.app, { Action: 'DescribeRegions', Version: version });
    expect([r.status, errorCode(r)], r.text).toEqual([400, 'InvalidParameterValue']);
  });
});

describe('DescribeRegions', () => {
  it('lists the one region with the CLC\'s EC2 endpoint', async () => {
    const h = await harness();
    const r = await query(h.app, { Action: 'DescribeRegions' });
    expect(r.status, r.text).toBe(200);
    expect(items(r.doc.DescribeRegionsResponse.regionInfo)).toEqual([
      { regionName: 'eucalyptus', regionEndpoint: 'http://127.0.0.1:8773/services/compute', optInStatus: 'opt-in-not-required' },
    ]);
  });

  it.each([
    [{ 'RegionName.1': 'eucalyptus' }, 1],
    [{ 'Filter.1.Name': 'region-name', 'Filter.1.Value.1': 'euca*' }, 1],
    [{ 'Filter.1.Name': 'endpoint', 'Filter.1.Value.1': '*:8773/services/compute' }, 1],
    [{ 'Filter.1.Name': 'endpoint', 'Filter.1.Value.1': 'https://*' }, 0],
    [{ AllRegions: 'true' }, 1],
  ])('%j lists %d region(s)', async (params, n) => {
    const h = await harness();
    const r = await query(h.app, { Action: 'DescribeRegions', ...params });
    expect(r.status, r.text).toBe(200);
    expect(items(r.doc.DescribeRegionsResponse.regionInfo)).toHaveLength(n);
  });

  it.each([
    [{ 'RegionName.1': 'us-east-1' }, 'InvalidParameterValue'],
    [{ 'Filter.1.Name': 'zone', 'Filter.1.Value.1': 'x' }, 'InvalidParameterValue'],
    [{ AllRegions: 'maybe' }, 'InvalidParameterValue'],
    [{ Region: 'x' }, 'UnknownParameter'],
  ])('%j gets %s', async (params, code) => {
    const h = await harness();
    const r = await query(h.app, { Action: 'DescribeRegions', ...params });
    expect([r.status, errorCode(r)], r.text).toEqual([400, code]);
  });
});

describe('DryRun', () => {
  const ec2 = Object.entries(ACTIONS).filter(([, a]) => a.acceptsDryRun).map(([name]) => name);

  it('is taken by the EC2 actions only', () => {
    expect(ec2.sort()).toEqual(expect.arrayContaining(['DescribeAvailabilityZones', 'DescribeInstances', 'DescribeRegions', 'RunInstances', 'TerminateInstances']));
    expect(ec2).not.toContain('MigrateInstances');
  });

  it.each([['true', 412, 'DryRunOperation'], ['TRUE', 412, 'DryRunOperation'], ['yes', 400, 'InvalidParameterValue']])(
    'DryRun=%s on TerminateInstances answers %d %s and terminates nothing', async (flag, status, code) => {
      const h = await harness();
      const run = await query(h.app, { Action: 'RunInstances', ImageId: 'emi-00000001', 'Placement.AvailabilityZone': 'cluster01' });
      const id = items(run.doc.RunInstancesResponse.instancesSet)[0].instanceId as string;
      const before = h.clusters.mutatingCalls().length;
      const r = await query(h.app, { Action: 'TerminateInstances', 'InstanceId.1': id, DryRun: flag });
      expect([r.status, errorCode(r)], r.text).toEqual([status, code]);
      expect(h.clusters.mutatingCalls()).toHaveLength(before);
    },
  );

  it('DryRun=false runs the action', async () => {
    const h = await harness();
    expect((await query(h.app, { Action: 'DescribeRegions', DryRun: 'false' })).status).toBe(200);
  });

  it('a bad request with DryRun=true still gets its own code', async () => {
    const h = await harness();
    const r = await query(h.app, { Action: 'TerminateInstances', 'InstanceId.1': 'i-xyz', DryRun: 'true' });
    expect(errorCode(r)).toBe('InvalidInstanceID.Malformed');
  });

  it('an action that does not take it answers UnknownParameter DryRun, doing nothing', async () => {
    const h = await harness();
    const r = await query(h.app, { Action: 'DisableService', Type: 'node', Host: '127.0.12.11', DryRun: 'true' });
    expect([r.status, errorCode(r)], r.text).toEqual([400, 'UnknownParameter']);
    expect(r.text).toContain('DryRun');
    expect(h.clusters.mutatingCalls()).toEqual([]);
  });
});
