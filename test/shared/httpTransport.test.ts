import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mountWireService } from '../../shared/wire/server.js';
import { wireHeaders } from '../helpers/wireHeaders.js';
import { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { defineErrors, client } from '../../shared/errors/registry.js';
import { silentLogger } from '../../shared/log.js';
import type { WireHandlers } from '../../shared/wire/transport.js';

const Errors = defineErrors({ Nope: client(409, 'no {thing}') });
const PATH = '/axis2/services/Test';
const handlers: WireHandlers = {
  echo: async (body) => ({ got: body }),
  refuse: async () => { throw Errors.make('Nope', { thing: 'way' }); },
  crash: async () => { throw new Error('boom'); },
  slow: async () => new Promise((r) => setTimeout(() => r({}), 2000)),
};

let server: Server;
let endpoint: string;
const transport = new HttpWireTransport({ path: PATH, defaultTimeoutMs: 2000 });

beforeAll(async () => {
  const app = express();
  mountWireService(app, { path: PATH, handlers, logger: silentLogger(), maxBodyBytes: 4096 });
  server = app.listen(0, '127.0.5.1');
  await new Promise((r) => server.once('listening', r));
  endpoint = `http://127.0.5.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  transport.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function rawPost(body: string, type = 'text/xml'): Promise<{ status: number; text: string }> {
  const res = await fetch(`${endpoint}${PATH}`, { method: 'POST', headers: wireHeaders(body, type, type === 'text/xml' ? undefined : 'echo'), body });
  return { status: res.status, text: await res.text() };
}

describe('wire transport over HTTP', () => {
  it('carries a typed body there and back', async () => {
    const body = { n: 1, list: ['a'], nested: { ok: true } };
    expect(await transport.call(endpoint, 'echo', body)).toEqual({ got: body });
  });

  it('turns a peer coded error into RemoteFault carrying the peer code', async () => {
    await expect(transport.call(endpoint, 'refuse', {})).rejects.toMatchObject({
      code: 'RemoteFault', fields: { remoteCode: 'Nope', remoteMessage: 'no way', remoteStatus: 409 },
    });
  });

  it('hides internal errors behind InternalError with status 500', async () => {
    await expect(transport.call(endpoint, 'crash', {})).rejects.toMatchObject({ fields: { remoteCode: 'InternalError', remoteStatus: 500 } });
  });

  it.each([
    ['unknown operation', '<nothing/>', 'text/xml', 400, 'UnknownOperation'],
    ['malformed XML', '<echo><a>', 'text/xml', 400, 'MalformedXml'],
    ['wrong content type', '{}', 'application/json', 415, 'UnsupportedMediaType'],
    ['oversized body', `<echo><a>${'x'.repeat(5000)}</a></echo>`, 'text/xml', 413, 'RequestTooLarge'],
  ])('answers %s with a coded Fault and status', async (_n, body, type, status, code) => {
    const res = await rawPost(body, type);
    expect(res.status).toBe(status);
    expect(res.text).toContain(`<code>${code}</code>`);
  });

  it('reports a closed port as PeerUnreachable', async () => {
    await expect(transport.call('http://127.0.5.2:9', 'echo', {})).rejects.toMatchObject({ code: 'PeerUnreachable' });
  });

  it('reports a slow peer as PeerTimeout', async () => {
    await expect(transport.call(endpoint, 'slow', {}, { timeoutMs: 200 })).rejects.toMatchObject({ code: 'PeerTimeout' });
  });
});
