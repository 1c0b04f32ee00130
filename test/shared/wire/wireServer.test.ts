/**
 * The wire server's edge, in process over plain HTTP, in both encodings: any bytes as a body give an
 * answer or one of the registry's coded Faults, in the request's encoding (and the server keeps
 * serving); what is decided from the headers is decided before the body; an mTLS server without a
 * certificate to check serves no one.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/log.js';
import { WireErrors } from '../../../shared/wire/errors.js';
import { requestLimits, type AccessTable } from '../../../shared/wire/peerAuth.js';
import { mountWireService } from '../../../shared/wire/server.js';
import { soapActionOf } from '../../../shared/wire/soapAction.js';
import { decodeMessage, encodeMessage } from '../../../shared/wire/xmlCodec.js';
import { decodeJsonMessage, encodeJsonMessage } from '../../../shared/wire/jsonCodec.js';
import { contentTypeOf, encodingOfContentType, type WireEncoding } from '../../../shared/wire/wireEncoding.js';

const PATH = '/axis2/services/Test';
const access: AccessTable = { echo: { clc: { limits: requestLimits(8192, 256) } } };
const servers: http.Server[] = [];
let plain = '';
let strict = '';

async function serve(checkPeers: boolean): Promise<string> {
  const app = express();
  mountWireService(app, { path: PATH, logger: silentLogger(), access, checkPeers, handlers: { echo: async (body) => body } });
  const srv = http.createServer(app);
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}${PATH}`;
}

beforeAll(async () => {
  plain = await serve(false);
  strict = await serve(true);
});

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** Posts `body` and decodes the answer by its Content-Type; `answeredIn` is that encoding. */
async function post(url: string, body: Uint8Array | string, headers: Record<string, string> = {}): Promise<{ status: number; root: string; code: string; answeredIn: WireEncoding | undefined }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/xml', soapaction: soapActionOf('echo'), ...headers }, body });
  const answeredIn = encodingOfContentType(res.headers.get('content-type') ?? undefined);
  const text = await res.text();
  const { operation, body: doc } = answeredIn === 'json' ? decodeJsonMessage(text) : await decodeMessage(text);
  return { status: res.status, root: operation, code: typeof doc.code === 'string' ? doc.code : '', answeredIn };
}

const JSON_HEADERS = { 'content-type': contentTypeOf('json') };

const REGISTRY = Object.keys(WireErrors.table);

describe('any body', () => {
  it('gets an echo or a coded Fault from the registry with its status, and the server stays up', async () => {
    const bodies = fc.oneof(
      fc.uint8Array({ maxLength: 12_000 }),
      fc.string({ maxLength: 500 }),
      fc.tuple(fc.nat({ max: 200 }), fc.uint8Array({ maxLength: 30 })).map(([at, junk]) => {
        const doc = Buffer.from(encodeMessage('echo', { a: 'x', b: [1, 2], c: { d: true } }));
        return Buffer.concat([doc.subarray(0, at), junk, doc.subarray(at)]);
      }),
    );
    await fc.assert(fc.asyncProperty(bodies, async (body) => {
      const r = await post(plain, body);
      if (r.status === 200) expect(r.root).toBe('echoResponse');
      else {
        expect(r.root).toBe('Fault');
        expect(REGISTRY).toContain(r.code);
        expect(r.status).toBe(WireErrors.table[r.code as keyof typeof WireErrors.table].status);
      }
    }), { numRuns: 300 });
    expect(await post(plain, encodeMessage('echo', { ok: true }))).toEqual({ status: 200, root: 'echoResponse', code: '', answeredIn: 'xml' });
  });

  it('in JSON too: an echo or a coded Fault from the registry with its status, answered in JSON', async () => {
    const doc = Buffer.from(encodeJsonMessage('echo', { a: 'x', b: [1, 2], c: { d: true } }));
    const bodies = fc.oneof(
      fc.uint8Array({ maxLength: 12_000 }),
      fc.string({ maxLength: 500 }),
      fc.tuple(fc.nat({ max: 60 }), fc.oneof(fc.uint8Array({ maxLength: 30 }), fc.constantFrom('"__proto__":{},', '{', ']', '1e999', '"a":1,"a":2,').map((t) => Buffer.from(t))))
        .map(([at, junk]) => Buffer.concat([doc.subarray(0, at), junk, doc.subarray(at)])),
    );
    await fc.assert(fc.asyncProperty(bodies, async (body) => {
      const r = await post(plain, body, JSON_HEADERS);
      expect(r.answeredIn).toBe('json');
      if (r.status === 200) expect(r.root).toBe('echoResponse');
      else {
        expect(r.root).toBe('Fault');
        expect(REGISTRY).toContain(r.code);
        expect(r.status).toBe(WireErrors.table[r.code as keyof typeof WireErrors.table].status);
      }
    }), { numRuns: 300 });
    expect(await post(plain, encodeJsonMessage('echo', { ok: true }), JSON_HEADERS)).toEqual({ status: 200, root: 'echoResponse', code: '', answeredIn: 'json' });
  });

  it.each<[string, string, number, string]>([
    ['a __proto__ name', '{"echo":{"__proto__":{"admin":true}}}', 400, 'MalformedJson'],
    ['a constructor name', '{"echo":{"a":{"constructor":1}}}', 400, 'MalformedJson'],
    ['a repeated name', '{"echo":{"a":1,"a":2}}', 400, 'MalformedJson'],
    ['another operation than SOAPAction\'s', '{"other":{}}', 400, 'OperationMismatch'],
    ['more values than the operation\'s', `{"echo":{"a":[${Array(300).fill(0).join(',')}]}}`, 413, 'JsonLimitExceeded'],
    ['deeper than 32 levels', `{"echo":{"a":${'['.repeat(40)}${']'.repeat(40)}}}`, 413, 'JsonLimitExceeded'],
    ['a string over 8 KiB', `{"echo":{"a":"${'x'.repeat(9000)}"}}`, 413, 'RequestTooLarge'],
  ])('refuses a JSON body with %s: %s %s, in JSON, and changes nothing', async (_n, body, status, code) => {
    expect(await post(plain, body, JSON_HEADERS)).toMatchObject({ status, code, answeredIn: 'json' });
  });
});

describe('decided from the headers', () => {
  it.each<[string, Record<string, string>, number, string]>([
    ['no SOAPAction', { soapaction: '' }, 400, 'OperationHeaderMissing'],
    ['a SOAPAction in another form', { soapaction: 'echo' }, 400, 'OperationHeaderMissing'],
    ['an operation not served', { soapaction: soapActionOf('nothing') }, 400, 'UnknownOperation'],
    ['a charset other than UTF-8', { 'content-type': 'text/xml; charset=iso-8859-1' }, 415, 'UnsupportedMediaType'],
    ['JSON in a charset other than UTF-8', { 'content-type': 'application/x-ferry+json; charset=utf-16' }, 415, 'UnsupportedMediaType'],
    ['generic JSON, not Ferry\'s envelope', { 'content-type': 'application/json' }, 415, 'UnsupportedMediaType'],
    ['JSON: no SOAPAction', { ...JSON_HEADERS, soapaction: '' }, 400, 'OperationHeaderMissing'],
    ['JSON: an operation not served', { ...JSON_HEADERS, soapaction: soapActionOf('nothing') }, 400, 'UnknownOperation'],
    ['JSON: a declared length over the operation\'s', { ...JSON_HEADERS, 'content-length': '9000' }, 413, 'RequestTooLarge'],
    ['a declared length over the operation\'s', { 'content-length': '9000' }, 413, 'RequestTooLarge'],
  ])('%s → %s %s', async (_n, headers, status, code) => {
    const body = headers['content-length'] ? 'x'.repeat(9000) : encodeMessage('echo', {});
    expect(await post(plain, body, headers)).toMatchObject({ status, code });
  });

  it('refuses everyone on an mTLS server reached without a certificate (fail closed), whatever is named', async () => {
    expect(await post(strict, encodeMessage('echo', {}))).toMatchObject({ status: 403, code: 'PeerNotAuthorized' });
    expect(await post(strict, 'junk', { soapaction: 'junk' })).toMatchObject({ status: 403, code: 'PeerNotAuthorized' });
    expect(await post(strict, encodeJsonMessage('echo', {}), JSON_HEADERS)).toMatchObject({ status: 403, code: 'PeerNotAuthorized', answeredIn: 'json' });
  });
});
