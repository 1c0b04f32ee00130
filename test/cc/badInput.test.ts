/**
 * Bad input, one test per class: each answers with the coded <Fault> and HTTP status, and leaves
 * the NCs and the CC's view exactly as they were.
 */
import request from 'supertest';
import xml2js from 'xml2js';
import { beforeEach, describe, expect, it } from 'vitest';
import { createCcApp } from '../../cc/server.js';
import { silentLogger } from '../../shared/log.js';
import { CC_PATH } from '../../shared/wire/transport.js';
import { wireHeaders } from '../helpers/wireHeaders.js';
import { encodeMessage, type WireObject } from '../../shared/wire/xmlCodec.js';
import { SMALL, slots } from './fakeNodes.js';
import { harness, id, runReq } from './harness.js';

const A = '127.0.11.1';
let h: Awaited<ReturnType<typeof harness>>;
let app: ReturnType<typeof createCcApp>;

beforeEach(async () => {
  h = await harness({ nodes: [[A, slots(4)]] });
  await h.run(runReq([id(1)]));
  await h.settle();
  h.fake.calls.length = 0;
  app = createCcApp({ service: h.service, logger: silentLogger() });
});

/** The NCs' state and the CC's view, to compare before and after. */
function snapshot(): string {
  return JSON.stringify({ ncs: [...h.fake.ncs.values()], view: h.keeper.get().entries.map((e) => e.node) });
}

async function post(body: string | Buffer, type = 'text/xml', operation?: string): Promise<{ status: number; code: string; message: string }> {
  const res = await request(app).post(CC_PATH).set(wireHeaders(body, type, operation)).send(body);
  const doc = (await xml2js.parseStringPromise(res.text, { explicitArray: false })) as { Fault?: { code: { _: string } | string; message: { _: string } | string } };
  const text = (v: unknown): string => (typeof v === 'string' ? v : (v as { _: string })._);
  expect(doc.Fault, res.text).toBeDefined();
  return { status: res.status, code: text(doc.Fault?.code), message: text(doc.Fault?.message) };
}

const op = (operation: string, body: WireObject): string => encodeMessage(operation, body);

describe('bad input to the CC', () => {
  it.each<[string, () => string | Buffer, number, string, string?]>([
    ['malformed XML', () => '<ccRunInstances><reservationId>', 400, 'MalformedXml'],
    ['unknown operation', () => op('ccRebootEverything', {}), 400, 'UnknownOperation'],
    ['missing parameter', () => op('ccTerminateInstances', {}), 400, 'InvalidParameter', 'instanceIds'],
    ['invalid parameter', () => op('ccTerminateInstances', { instanceIds: ['i-NOTHEX!'] }), 400, 'InvalidParameter', 'instanceIds'],
    ['wrongly typed parameter', () => op('ccRunInstances', { ...runReq([id(2)]), minCount: '1' } as unknown as WireObject), 400, 'InvalidParameter', 'minCount'],
    ['unknown host', () => op('ccModifyNode', { host: '127.0.11.200', stateName: 'disabled', vmTypes: [SMALL] }), 404, 'NodeNotFound', '127.0.11.200'],
    ['unknown instance', () => op('ccTerminateInstances', { instanceIds: [id(1), id(0xdead)] }), 404, 'InstanceNotFound', id(0xdead)],
    ['oversized body', () => op('ccDescribeNodes', { pad: 'x'.repeat(1024 * 1024 + 1) }), 413, 'RequestTooLarge'],
  ])('%s', async (_name, body, status, code, mention) => {
    const before = snapshot();
    const fault = await post(body());
    expect(fault).toMatchObject({ status, code });
    if (mention) expect(fault.message).toContain(mention);
    await h.settle();
    expect(snapshot()).toBe(before);
    expect(h.fake.calls.filter((c) => c.op !== 'describe')).toEqual([]);
  });

  it('a body that is not XML at all is refused by media type', async () => {
    const before = snapshot();
    expect(await post('{"op":"ccDescribeNodes"}', 'application/json', 'ccDescribeNodes')).toMatchObject({ status: 415, code: 'UnsupportedMediaType' });
    expect(snapshot()).toBe(before);
  });

  it('a good request still works after all that (the app is healthy)', async () => {
    const res = await request(app).post(CC_PATH).set(wireHeaders('<ccDescribeInstances/>')).send(op('ccDescribeInstances', {}));
    expect(res.status).toBe(200);
    expect(res.text).toContain(id(1));
  });
});
