/**
 * The wire server's edge, in process over plain HTTP: any bytes as a body give an answer or one of
 * the registry's coded Faults (and the server keeps serving); what is decided from the headers is
 * decided before the body; an mTLS server without a certificate to check serves no one.
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

async function post(url: string, body: Uint8Array | string, headers: Record<string, string> = {}): Promise<{ status: number; root: string; code: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/xml', soapaction: soapActionOf('echo'), ...headers }, body });
  const { operation, body: doc } = await decodeMessage(await res.text());
  return { status: res.status, root: operation, code: typeof doc.code === 'string' ? doc.code : '' };
}

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
    expect(await post(plain, encodeMessage('echo', { ok: true }))).toEqual({ status: 200, root: 'echoResponse', code: '' });
  });
});

describe('decided from the headers', () => {
  it.each<[string, Record<string, string>, number, string]>([
    ['no SOAPAction', { soapaction: '' }, 400, 'OperationHeaderMissing'],
    ['a SOAPAction in another form', { soapaction: 'echo' }, 400, 'OperationHeaderMissing'],
    ['an operation not served', { soapaction: soapActionOf('nothing') }, 400, 'UnknownOperation'],
    ['a charset other than UTF-8', { 'content-type': 'text/xml; charset=iso-8859-1' }, 415, 'UnsupportedMediaType'],
    ['a declared length over the operation\'s', { 'content-length': '9000' }, 413, 'RequestTooLarge'],
  ])('%s → %s %s', async (_n, headers, status, code) => {
    const body = headers['content-length'] ? 'x'.repeat(9000) : encodeMessage('echo', {});
    expect(await post(plain, body, headers)).toMatchObject({ status, code });
  });

  it('refuses everyone on an mTLS server reached without a certificate (fail closed), whatever is named', async () => {
    expect(await post(strict, encodeMessage('echo', {}))).toMatchObject({ status: 403, code: 'PeerNotAuthorized' });
    expect(await post(strict, 'junk', { soapaction: 'junk' })).toMatchObject({ status: 403, code: 'PeerNotAuthorized' });
  });
});
