import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mountWireService } from '../../shared/wire/server.js';
import { wireHeaders } from '../helpers/wireHeaders.js';
import { HttpWireTransport, XML_ONLY_RETRY_MS } from '../../shared/wire/httpTransport.js';
import { WireErrors } from '../../shared/wire/errors.js';
import { encodingOfContentType } from '../../shared/wire/wireEncoding.js';
import { decodeMessage, encodeMessage } from '../../shared/wire/xmlCodec.js';
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
/** Content-Types of the requests the current server received, in order. */
const seen: string[] = [];
const transport = new HttpWireTransport({ path: PATH, defaultTimeoutMs: 2000 });
const xmlTransport = new HttpWireTransport({ path: PATH, defaultTimeoutMs: 2000, encoding: 'xml' });

/**
 * A Ferry from before the JSON encoding, as its server answered: XML only, any other media type
 * refused with 415 UnsupportedMediaType (in XML) before the body is read.
 */
function xmlOnlyPeer(): express.Express {
  const app = express();
  app.use(PATH, (req, res, next) => {
    if (encodingOfContentType(req.headers['content-type']) === 'xml') return next();
    const err = WireErrors.make('UnsupportedMediaType');
    res.status(415).type('text/xml').send(encodeMessage('Fault', { code: err.code, message: err.message, retryable: false }));
  });
  mountWireService(app, { path: PATH, handlers, logger: silentLogger() });
  return app;
}
let oldServer: Server;
let oldEndpoint: string;

async function listen(app: express.Express, host: string): Promise<[Server, string]> {
  const srv = app.listen(0, host);
  await new Promise((r) => srv.once('listening', r));
  return [srv, `http://${host}:${(srv.address() as AddressInfo).port}`];
}

beforeAll(async () => {
  const app = express();
  app.use((req, _res, next) => { seen.push(req.headers['content-type'] ?? ''); next(); });
  mountWireService(app, { path: PATH, handlers, logger: silentLogger(), maxBodyBytes: 4096 });
  [server, endpoint] = await listen(app, '127.0.5.1');
  const old = xmlOnlyPeer();
  [oldServer, oldEndpoint] = await listen(old, '127.0.5.3');
});
afterAll(async () => {
  transport.close();
  xmlTransport.close();
  for (const s of [server, oldServer]) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
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

  it('sends compact JSON by default and typed XML when told to, and reads either answer', async () => {
    seen.length = 0;
    const body = { s: '5', n: 5, one: ['x'], empty: [], z: null, deep: { b: false } };
    expect(await transport.call(endpoint, 'echo', body)).toEqual({ got: body });
    expect(await xmlTransport.call(endpoint, 'echo', body)).toEqual({ got: body });
    expect(seen).toEqual(['application/x-ferry+json; charset=utf-8', 'text/xml; charset=utf-8']);
  });

  it('answers each request in its own encoding, Faults included', async () => {
    const json = await fetch(`${endpoint}${PATH}`, { method: 'POST', headers: { 'content-type': 'application/x-ferry+json', soapaction: '"urn:ferry:wire:1#refuse"' }, body: '{"refuse":{}}' });
    expect(json.headers.get('content-type')).toMatch(/^application\/x-ferry\+json/);
    expect(await json.json()).toEqual({ Fault: { code: 'Nope', message: 'no way', retryable: false } });
    const xml = await rawPost(encodeMessage('refuse', {}));
    expect((await decodeMessage(xml.text)).body).toMatchObject({ code: 'Nope' });
  });

  it('calls an XML-only peer (an older Ferry) in XML: once refused, it stays XML for a while, then JSON is tried again', async () => {
    let now = 1_000_000;
    const t = new HttpWireTransport({ path: PATH, defaultTimeoutMs: 2000, now: () => now });
    const types: string[] = [];
    oldServer.on('request', (req: { headers: Record<string, string> }) => types.push(req.headers['content-type'] ?? ''));
    try {
      expect(await t.call(oldEndpoint, 'echo', { a: 1 })).toEqual({ got: { a: 1 } });
      expect(await t.call(oldEndpoint, 'echo', { a: 2 })).toEqual({ got: { a: 2 } });
      // Another peer is not held to it.
      seen.length = 0;
      await t.call(endpoint, 'echo', {});
      expect(seen).toEqual(['application/x-ferry+json; charset=utf-8']);
      now += XML_ONLY_RETRY_MS;
      expect(await t.call(oldEndpoint, 'echo', { a: 3 })).toEqual({ got: { a: 3 } });
      expect(types.map(encodingOfContentType)).toEqual(['json', 'xml', 'xml', 'json', 'xml']);
      // A refusal that is not about the media type is not retried.
      await expect(t.call(oldEndpoint, 'refuse', {})).rejects.toMatchObject({ fields: { remoteCode: 'Nope' } });
      expect(types.slice(5).map(encodingOfContentType)).toEqual(['xml']);
    } finally {
      t.close();
    }
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
    ['a JSON body sent as generic JSON, not Ferry\'s', '{"echo":{}}', 'application/json', 415, 'UnsupportedMediaType'],
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

describe('a kept-alive socket the peer closes as a call goes out', () => {
  /** A peer that resets the next request arriving on an already used connection, once armed. */
  async function resettingPeer() {
    const received: string[] = [];
    const state = { armed: false, resets: 0 };
    const app = express();
    app.use((req, _res, next) => {
      const op = String(req.headers.soapaction ?? '');
      received.push(op);
      const used = (req.socket as { ferryUsed?: boolean }).ferryUsed === true;
      (req.socket as { ferryUsed?: boolean }).ferryUsed = true;
      if (state.armed && used) {
        state.armed = false;
        state.resets++;
        req.socket.destroy();
        return;
      }
      next();
    });
    mountWireService(app, {
      path: PATH, logger: silentLogger(),
      handlers: { ncDescribeThing: async (b) => ({ got: b }), ncChangeThing: async (b) => ({ got: b }) },
    });
    const [srv, url] = await listen(app, '127.0.5.5');
    return { srv, url, received, state };
  }

  it('a read is sent again on another socket and answered', async () => {
    const peer = await resettingPeer();
    const t = new HttpWireTransport({ path: PATH, defaultTimeoutMs: 5000 });
    try {
      await t.call(peer.url, 'ncDescribeThing', { n: 1 });
      peer.state.armed = true;
      await expect(t.call(peer.url, 'ncDescribeThing', { n: 2 })).resolves.toEqual({ got: { n: 2 } });
      expect(peer.state.resets).toBe(1);
      expect(peer.received.filter((op) => op.includes('ncDescribeThing'))).toHaveLength(3);
    } finally {
      t.close();
      peer.srv.close();
    }
  });

  it('a change is not sent again: the caller gets PeerUnreachable and judges', async () => {
    const peer = await resettingPeer();
    const t = new HttpWireTransport({ path: PATH, defaultTimeoutMs: 5000 });
    try {
      await t.call(peer.url, 'ncChangeThing', { n: 1 });
      peer.state.armed = true;
      await expect(t.call(peer.url, 'ncChangeThing', { n: 2 })).rejects.toMatchObject({ code: 'PeerUnreachable' });
      expect(peer.state.resets).toBe(1);
      expect(peer.received.filter((op) => op.includes('ncChangeThing'))).toHaveLength(2);
    } finally {
      t.close();
      peer.srv.close();
    }
  });
});
