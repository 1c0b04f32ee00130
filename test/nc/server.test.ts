/**
 * The NC's HTTP edge, in process over loopback: each class of bad input gets its coded <Fault>
 * and leaves the node exactly as it was (store snapshot and hypervisor calls).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNcApp } from '../../nc/server.js';
import { wireHeaders } from '../helpers/wireHeaders.js';
import { silentLogger } from '../../shared/log.js';
import { NC_PATH } from '../../shared/wire/transport.js';
import { encodeMessage, type WireObject } from '../../shared/wire/xmlCodec.js';
import { FakeDriver } from './fakeDriver.js';
import { harness, HOST, runRequest, type Harness } from './fixtures.js';

const A = 'i-0000000a';
let h: Harness;
let server: Server;
let url: string;

beforeEach(async () => {
  // Room for exactly two m1.small: one is taken below, so one more fits.
  h = await harness({ driver: new FakeDriver(HOST, { cores: 2, memoryMiB: 512, diskGiB: 10 }) });
  await h.controller.run(runRequest(A));
  server = createNcApp({ controller: h.controller, logger: silentLogger(), maxBodyBytes: 4096 }).listen(0, '127.0.10.200');
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.10.200:${(server.address() as AddressInfo).port}${NC_PATH}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function post(body: string, type = 'text/xml'): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: wireHeaders(body, type, type === 'text/xml' ? undefined : 'ncRunInstance'), body });
  return { status: res.status, text: await res.text() };
}

const msg = (op: string, body: WireObject) => encodeMessage(op, body);
const runBody = (over: WireObject = {}): WireObject => ({ ...runRequest('i-0000000b'), ...over });
const { imageId: _dropped, ...runWithoutImage } = runBody();

describe('NC HTTP edge', () => {
  it('serves the contract', async () => {
    const res = await post(msg('ncDescribeResource', {}));
    expect(res.status).toBe(200);
    expect(res.text).toContain('<ncDescribeResourceResponse');
    expect(res.text).toContain(`<instanceId>${A}</instanceId>`);
  });

  const bad: [string, () => Promise<void> | void, string, string, number, string][] = [
    ['malformed XML', () => undefined, '<ncRunInstance><instanceId>', 'text/xml', 400, 'MalformedXml'],
    ['an unknown operation', () => undefined, msg('ncReformatHost', { instanceId: A }), 'text/xml', 400, 'UnknownOperation'],
    ['a missing parameter', () => undefined, msg('ncRunInstance', runWithoutImage), 'text/xml', 400, 'InvalidParameter'],
    ['a malformed instance id', () => undefined, msg('ncTerminateInstance', { instanceId: 'i-NOTHEX!' }), 'text/xml', 400, 'InvalidParameter'],
    ['a wrong stateName', () => undefined, msg('ncModifyNode', { stateName: 'maintenance' }), 'text/xml', 400, 'InvalidParameter'],
    ['an oversized body', () => undefined, msg('ncRunInstance', runBody({ imageId: 'e'.repeat(5000) })), 'text/xml', 413, 'RequestTooLarge'],
    ['a wrong content type', () => undefined, JSON.stringify(runBody()), 'application/json', 415, 'UnsupportedMediaType'],
    ['a run on a disabled node', () => h.controller.modify('disabled').then(() => undefined), msg('ncRunInstance', runBody()), 'text/xml', 409, 'NodeDisabled'],
    ['a run beyond capacity', () => h.controller.run(runRequest('i-0000000c')).then(() => undefined), msg('ncRunInstance', runBody()), 'text/xml', 409, 'InsufficientCapacity'],
  ];
  it.each(bad)('answers %s with a coded Fault and changes nothing', async (_n, setup, body, type, status, code) => {
    await setup();
    const before = structuredClone(h.store.read());
    const calls = h.driver.calls.length;
    const domains = [...h.driver.domains.keys()];
    const res = await post(body, type);
    expect(res.status).toBe(status);
    expect(res.text).toContain('<Fault');
    expect(res.text).toContain(`<code>${code}</code>`);
    expect(h.store.read()).toEqual(before);
    expect(h.driver.calls.slice(calls).filter((c) => c !== 'list')).toEqual([]);
    expect([...h.driver.domains.keys()]).toEqual(domains);
  });

  it('answers a terminate of an unknown instance with a coded Fault, only fencing the id (runInstances race)', async () => {
    const before = structuredClone(h.store.read());
    const calls = h.driver.calls.length;
    const res = await post(msg('ncTerminateInstance', { instanceId: 'i-000000ff' }), 'text/xml');
    expect(res.status).toBe(404);
    expect(res.text).toContain('<code>InstanceNotFound</code>');
    const { fenced, ...rest } = h.store.read();
    const { fenced: _none, ...unchanged } = before;
    expect(rest).toEqual(unchanged);
    expect(Object.keys(fenced ?? {})).toEqual(['i-000000ff']);
    // No hypervisor call: the log holds only the fence's store write.
    expect(h.driver.calls.slice(calls).filter((c) => c !== 'list' && !c.startsWith('persist'))).toEqual([]);
  });

  it('answers any body with a result or a coded Fault, never a crash (property)', async () => {
    const before = structuredClone(h.store.read());
    await fc.assert(fc.asyncProperty(fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom(
      '<ncModifyNode/>', '<ncRunInstance t="a"/>', '<ncTerminateInstance><instanceId t="n">1</instanceId></ncTerminateInstance>',
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><ncDescribeResource>&a;</ncDescribeResource>',
    )), async (body) => {
      const res = await post(body);
      expect([200, 400, 404, 409, 413]).toContain(res.status);
      if (res.status !== 200) expect(res.text).toMatch(/<code>[A-Za-z]+<\/code>/);
    }), { numRuns: 60 });
    expect(h.store.read()).toEqual(before);
  });
});
