/**
 * Any request gives either a 200 with `<{Action}Response>` or an EC2 error document with one of our
 * registry codes and its status; never a crash, never an InternalError (every bad input is ours to name).
 */
import fc from 'fast-check';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ACTIONS } from '../../clc/api/actions/index.js';
import { CLC_PATH } from '../../clc/api/app.js';
import { ClcErrors } from '../../clc/core/errors.js';
import { harness, parseXml } from './harness.js';

const actionName = fc.oneof(fc.constantFrom(...Object.keys(ACTIONS)), fc.string({ maxLength: 12 }));
const keys = fc.oneof(
  fc.constantFrom('ImageId', 'InstanceType', 'MinCount', 'MaxCount', 'Placement.AvailabilityZone', 'InstanceId.1', 'InstanceId.2',
    'Filter.1.Name', 'Filter.1.Value.1', 'MaxResults', 'NextToken', 'ZoneName.1', 'Type', 'Host', 'ServiceId', 'Partition', 'ByServiceType', 'ByState', 'ByPartition', 'Version'),
  fc.string({ maxLength: 10 }),
);
const values = fc.oneof(
  fc.constantFrom('emi-00000001', 'i-00000001', 'm1.small', 'cluster01', 'cluster09', 'verbose', 'node', 'NODE', '127.0.12.11', '0', '1', '3', '-1',
    'instance-state-name', 'node', 'running', 'tag:euca:node', 'tag-key', 'key', '5', '1000', 'arn:euca:eucalyptus:cluster01:node:127.0.12.11/', '2013-02-01'),
  fc.string({ maxLength: 12, unit: 'binary' }),
);
const pairs = fc.tuple(actionName, fc.array(fc.tuple(keys, values), { maxLength: 6 }));

async function checkReply(status: number, text: string, action: string | undefined): Promise<void> {
  const doc = await parseXml(text);
  if (status === 200) {
    expect(action).toBeDefined();
    expect(Object.keys(doc)).toEqual([`${action}Response`]);
    return;
  }
  const code = doc.Response?.Errors?.Error?.Code as string;
  expect(ClcErrors.has(code), text).toBe(true);
  expect(ClcErrors.table[code as keyof typeof ClcErrors.table].status).toBe(status);
  expect(code, text).not.toBe('InternalError');
}

describe('the admin API under arbitrary input', () => {
  it('form posts of arbitrary parameters', async () => {
    const h = await harness();
    await fc.assert(fc.asyncProperty(pairs, async ([action, ps]) => {
      const form = new URLSearchParams([['Action', action], ...ps]);
      const res = await request(h.app).post(CLC_PATH).type('form').send(form.toString());
      await checkReply(res.status, res.text, action);
    }), { numRuns: 300 });
  });

  it('arbitrary raw bodies and query strings', async () => {
    const h = await harness();
    await fc.assert(fc.asyncProperty(fc.string({ maxLength: 100, unit: 'binary' }), fc.string({ maxLength: 60 }), async (body, q) => {
      const res = await request(h.app).post(`${CLC_PATH}?${encodeURI(q)}`).type('form').send(body);
      await checkReply(res.status, res.text, new URLSearchParams(`${q}&${body}`).get('Action') ?? undefined);
    }), { numRuns: 200 });
  });
});
