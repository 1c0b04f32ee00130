import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import xml2js from 'xml2js';
import { instanceItem, reservationItems } from '../../clc/api/render/instanceItems.js';
import { EC2_NAMESPACE, EUCA_NAMESPACE, renderError, renderResponse } from '../../clc/api/xmlResponse.js';
import { ClcErrors } from '../../clc/core/errors.js';
import type { InstanceView } from '../../clc/core/instanceView.js';
import { items, parseXml } from './harness.js';

const view = (over: Partial<InstanceView> = {}): InstanceView => ({
  instanceId: 'i-00000001', reservationId: 'r-00000001', ownerId: '000000000000', imageId: 'emi-00000001',
  instanceType: 'm1.small', state: 'running', partition: 'cluster01', host: '127.0.12.11',
  launchTime: Date.UTC(2013, 5, 1), launchIndex: 0, migration: { state: 'none' }, reported: true, ...over,
});

describe('renderResponse', () => {
  it('writes <{Action}Response xmlns> with requestId first and lists as <item>', async () => {
    const xml = renderResponse('DescribeThings', EC2_NAMESPACE, 'req-9', { thingSet: ['a', 'b'], empty: [], skipped: undefined, n: 3, flag: true });
    const withAttrs = await xml2js.parseStringPromise(xml);
    expect(Object.keys(withAttrs)).toEqual(['DescribeThingsResponse']);
    expect(withAttrs.DescribeThingsResponse.$.xmlns).toBe(EC2_NAMESPACE);
    expect(xml).toMatch(/<DescribeThingsResponse xmlns="[^"]+"><requestId>req-9<\/requestId>/);
    const doc = await parseXml(xml);
    const r = doc.DescribeThingsResponse;
    expect(items(r.thingSet)).toEqual(['a', 'b']);
    expect(r.empty).toBe('');
    expect(r).not.toHaveProperty('skipped');
    expect(r.n).toBe('3');
    expect(r.flag).toBe('true');
  });

  it('keeps one-element lists as lists (an <item> inside)', () => {
    expect(renderResponse('X', EUCA_NAMESPACE, 'r', { set: [{ a: '1' }] })).toContain('<set><item><a>1</a></item></set>');
  });

  it('scrubs characters XML cannot carry', async () => {
    const xml = renderResponse('X', EC2_NAMESPACE, 'r', { v: 'a\u0000b\u001bc' });
    expect((await parseXml(xml)).XResponse.v).toBe('a\uFFFDb\uFFFDc');
  });
});

describe('instances in EC2 shape', () => {
  it('instance item has EC2 fields, state code, ISO launch time and Ferry extras', async () => {
    const doc = await parseXml(renderResponse('DescribeInstances', EC2_NAMESPACE, 'r', { reservationSet: reservationItems([view()]) }));
    const res = items(doc.DescribeInstancesResponse.reservationSet);
    expect(res).toHaveLength(1);
    expect(res[0].reservationId).toBe('r-00000001');
    expect(res[0].ownerId).toBe('000000000000');
    const inst = items(res[0].instancesSet)[0];
    expect(inst).toMatchObject({
      instanceId: 'i-00000001', imageId: 'emi-00000001', instanceState: { code: '16', name: 'running' },
      instanceType: 'm1.small', launchTime: '2013-06-01T00:00:00.000Z', placement: { availabilityZone: 'cluster01' },
      nodeHost: '127.0.12.11', migrationState: 'none',
    });
    expect(inst).not.toHaveProperty('migrationSource');
  });

  it.each([
    ['pending', 0], ['running', 16], ['shutting-down', 32], ['terminated', 48], ['stopped', 80],
  ] as const)('state %s has code %d', (state, code) => {
    expect(instanceItem(view({ state })).instanceState).toEqual({ code, name: state });
  });

  it('groups by reservation in order of first appearance', () => {
    const groups = reservationItems([
      view({ instanceId: 'i-00000001', reservationId: 'r-0000000b' }),
      view({ instanceId: 'i-00000002', reservationId: 'r-0000000a' }),
      view({ instanceId: 'i-00000003', reservationId: 'r-0000000b' }),
    ]);
    expect(groups.map((g) => g.reservationId)).toEqual(['r-0000000b', 'r-0000000a']);
    expect((groups[0]?.instancesSet as unknown[]).length).toBe(2);
  });

  it('migration source and destination are carried when present', () => {
    const item = instanceItem(view({ migration: { state: 'migrating', source: '127.0.12.11', destination: '127.0.12.12' } }));
    expect(item).toMatchObject({ migrationState: 'migrating', migrationSource: '127.0.12.11', migrationDestination: '127.0.12.12' });
  });
});

describe('renderError', () => {
  it('is EC2\'s <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>', async () => {
    const err = ClcErrors.make('InvalidInstanceID.NotFound', { ids: 'i-00000009', idsDo: "ID 'i-00000009' does" });
    const doc = await parseXml(renderError(err, 'req-3'));
    expect(doc).toEqual({
      Response: { Errors: { Error: { Code: 'InvalidInstanceID.NotFound', Message: "The instance ID 'i-00000009' does not exist" } }, RequestID: 'req-3' },
    });
  });

  it('every registry code is a failure status with a parseable document', async () => {
    for (const [code, spec] of Object.entries(ClcErrors.table)) {
      expect(spec.status, code).toBeGreaterThanOrEqual(400);
      expect(spec.status, code).toBeLessThan(600);
      expect(spec.clientFault, code).toBe(spec.status < 500);
      const doc = await parseXml(renderError(ClcErrors.make(code as keyof typeof ClcErrors.table), 'r'));
      expect(doc.Response.Errors.Error.Code).toBe(code);
    }
  });

  it('any message text still yields a parseable document with the same code', async () => {
    await fc.assert(fc.asyncProperty(fc.string({ maxLength: 80, unit: 'binary' }), async (s) => {
      const doc = await parseXml(renderError(ClcErrors.withMessage('InternalError', s), 'r'));
      expect(doc.Response.Errors.Error.Code).toBe('InternalError');
    }), { numRuns: 300 });
  });
});
