/**
 * The guard on real in-process servers over loopback (127.0.52.0/24, this file's and the
 * connection tests'): caps, timeouts and peer names with real sockets, plain and mutual TLS.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { certsDirOf, ensureCloudPki } from '../../../scripts/cloudLayout.js';
import { systemClock } from '../../../shared/clock.js';
import {
  fitToOpenFileLimit, guardConnections, httpServerOptions, httpsServerOptions, KEEP_ALIVE_IDLE_MS, NODE_KEEP_ALIVE_IDLE_MS, readOpenFileLimit, type ConnectionLimits,
} from '../../../shared/net/connectionGuard.js';
import { loadTlsIdentity } from '../../../shared/pki/tlsIdentity.js';
import { RefusalLog } from '../../../shared/refusalLog.js';
import { clientTlsOptions, serverTlsOptions } from '../../../shared/wire/tls.js';

const SERVER = '127.0.52.200';
const LIMITS: ConnectionLimits = { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, maxPending: 4, maxPendingPerPeer: 3 };

describe('fitToOpenFileLimit', () => {
  it.each([
    ['unknown limit: as asked, no backstop', 1024, 256, undefined, { maxPending: 1024, maxPendingPerPeer: 256 }, undefined, false],
    ['a large limit keeps the caps and leaves a reserve of 256', 1024, 256, 20_000, { maxPending: 1024, maxPendingPerPeer: 256 }, 19_744, false],
    ['1024 handles: 768 connections, half of them pending', 1024, 256, 1024, { maxPending: 384, maxPendingPerPeer: 256 }, 768, true],
    ['256 handles: a quarter kept back', 1024, 256, 256, { maxPending: 96, maxPendingPerPeer: 96 }, 192, true],
  ] as const)('%s', (_n, maxPending, maxPendingPerPeer, nofile, pending, maxConnections, lowered) => {
    const f = fitToOpenFileLimit({ ...LIMITS, maxPending, maxPendingPerPeer }, nofile);
    expect([f.pending, f.maxConnections, f.lowered]).toEqual([pending, maxConnections, lowered]);
  });
});

describe('readOpenFileLimit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-limits-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['Max open files            1024                 4096                 files     \n', 1024],
    ['Max open files            unlimited            unlimited            files     \n', undefined],
    ['nothing here\n', undefined],
  ])('reads the soft limit of %j', (text, want) => {
    const file = join(dir, 'limits');
    writeFileSync(file, `Limit                     Soft Limit           Hard Limit           Units     \n${text}`);
    expect(readOpenFileLimit(file)).toBe(want);
  });

  it('reads this process\'s own limit, or says it does not know', () => {
    expect(readOpenFileLimit(join(dir, 'missing'))).toBeUndefined();
    const own = readOpenFileLimit();
    if (own !== undefined) expect(own).toBeGreaterThan(0);
  });
});

interface Started { server: http.Server | https.Server; port: number; lines: Record<string, unknown>[]; refusals: RefusalLog }

const servers: Started[] = [];
const sockets: net.Socket[] = [];

async function start(limits: ConnectionLimits, tlsOptions?: https.ServerOptions, guard: { keepAliveIdleMs?: number } = {}): Promise<Started> {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => { lines.push(JSON.parse(s) as Record<string, unknown>); } });
  const refusals = new RefusalLog({ logger, clock: systemClock });
  const app = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    req.resume();
    req.on('end', () => res.writeHead(req.url === '/refuse' ? 401 : 200).end('ok'));
  };
  const server = tlsOptions ? https.createServer({ ...tlsOptions, ...httpsServerOptions(limits) }, app) : http.createServer(httpServerOptions(limits), app);
  guardConnections(server, { limits, refusals, openFileLimit: undefined, ...guard });
  await new Promise<void>((resolve) => server.listen(0, SERVER, resolve));
  const s = { server, port: (server.address() as net.AddressInfo).port, lines, refusals };
  servers.push(s);
  return s;
}

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) {
    s.server.closeAllConnections();
    await new Promise((r) => s.server.close(r));
  }
});

/** A connection from `from` that sends `bytes` and stays; `closed` resolves when the server closes it. */
async function hold(port: number, from: string, bytes: string, connect: (o: net.NetConnectOpts) => net.Socket = net.connect): Promise<{ sock: net.Socket; closed: Promise<string> }> {
  const sock = connect({ host: SERVER, port, localAddress: from });
  sockets.push(sock);
  let got = '';
  sock.on('data', (d: Buffer) => { got += d.toString(); });
  sock.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => sock.once('close', () => resolve(got)));
  await new Promise<void>((resolve, reject) => {
    sock.once(sock instanceof tls.TLSSocket ? 'secureConnect' : 'connect', () => resolve());
    sock.once('error', reject);
  });
  sock.write(bytes);
  return { sock, closed };
}

const HALF = 'POST / HTTP/1.1\r\nHost: x\r\n';

/** One request on an open connection; resolves with the status line. */
function ask(sock: net.Socket, path = '/'): Promise<string> {
  return new Promise((resolve) => {
    sock.once('data', (d: Buffer) => resolve(d.toString().split('\r\n')[0] ?? ''));
    sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

describe('guardConnections (plain HTTP)', () => {
  it.each([
    ['any server', undefined, KEEP_ALIVE_IDLE_MS, 9_000],
    ['an NC: past its CC\'s poll interval', NODE_KEEP_ALIVE_IDLE_MS, NODE_KEEP_ALIVE_IDLE_MS, 60_000],
  ] as const)('%s advertises a whole-second keep-alive shorter than it keeps an idle connection, so a Node client closes first', async (_who, option, kept, atLeast) => {
    const s = await start(LIMITS, undefined, option === undefined ? {} : { keepAliveIdleMs: option });
    expect(s.server.keepAliveTimeout).toBe(kept);
    const sock = (await hold(s.port, '127.0.52.19', '')).sock;
    const head = await new Promise<string>((resolve) => {
      sock.once('data', (d: Buffer) => resolve(d.toString()));
      sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    const advertised = Number(/keep-alive: timeout=(\d+)/i.exec(head)?.[1]) * 1000;
    expect(advertised).toBeGreaterThanOrEqual(atLeast);
    expect(kept - advertised).toBeGreaterThanOrEqual(500);
  });

  it('closes the oldest half-sent connections of the flooding peer, and serves a newcomer', async () => {
    const s = await start(LIMITS);
    const flood = [];
    for (let i = 0; i < 8; i++) flood.push(await hold(s.port, '127.0.52.10', HALF));
    // The peer cap (3) keeps its newest three; the first five were closed, oldest first, without an answer.
    await Promise.all(flood.slice(0, 5).map((f) => f.closed));
    expect(flood.slice(5).every((f) => !f.sock.destroyed)).toBe(true);
    const admin = await hold(s.port, '127.0.52.11', '');
    expect(await ask(admin.sock)).toBe('HTTP/1.1 200 OK');
    expect(s.lines.filter((l) => l.code === 'ConnectionEvicted')).toHaveLength(1);
    s.refusals.close();
    expect(s.lines.filter((l) => l.code === 'ConnectionEvicted').at(-1)).toMatchObject({ peer: '127.0.52.10', repeats: 4 });
  });

  it('keeps a connection that was answered with a success while strangers flood the same address', async () => {
    const s = await start(LIMITS);
    const admin = await hold(s.port, '127.0.52.12', '');
    expect(await ask(admin.sock)).toBe('HTTP/1.1 200 OK');
    const refused = await hold(s.port, '127.0.52.12', '');
    expect(await ask(refused.sock, '/refuse')).toBe('HTTP/1.1 401 Unauthorized');
    const flood = [];
    for (let i = 0; i < 6; i++) flood.push(await hold(s.port, '127.0.52.12', HALF));
    // Cap 3 per peer: the refused connection and the four oldest strangers went, the regular stayed.
    await refused.closed;
    await Promise.all(flood.slice(0, 4).map((f) => f.closed));
    expect(admin.sock.destroyed).toBe(false);
    expect(await ask(admin.sock)).toBe('HTTP/1.1 200 OK');
  });

  it('closes a half-sent request head with 408 once the header timeout passes, and logs it once', async () => {
    const s = await start({ ...LIMITS, headersTimeoutMs: 300, requestTimeoutMs: 600, maxPending: 50, maxPendingPerPeer: 50 });
    const t0 = Date.now();
    const conns = await Promise.all(Array.from({ length: 5 }, () => hold(s.port, '127.0.52.13', HALF)));
    const answers = await Promise.all(conns.map((c) => c.closed));
    expect(answers.every((a) => a.startsWith('HTTP/1.1 408 Request Timeout'))).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    // A body that never completes is cut by the request timeout.
    const body = await hold(s.port, '127.0.52.13', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab');
    await body.closed;
    expect(s.lines.filter((l) => l.code === 'RequestTimeout')).toHaveLength(1);
  });
});

describe('guardConnections (mutual TLS)', () => {
  let dir: string;
  let certs: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ferry-guard-tls-'));
    ensureCloudPki({ baseDir: dir, controllerHost: SERVER, nodeHosts: ['127.0.52.21'] });
    certs = certsDirOf({ baseDir: dir });
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('caps a certificate\'s pending connections whatever address they come from, not the CLC\'s', async () => {
    const s = await start(LIMITS, serverTlsOptions(loadTlsIdentity(certs, 'cc', SERVER)));
    const nc = clientTlsOptions(loadTlsIdentity(certs, 'nc', '127.0.52.21'));
    const clc = clientTlsOptions(loadTlsIdentity(certs, 'clc', SERVER));
    const viaTls = (opts: https.AgentOptions) => (o: net.NetConnectOpts) => tls.connect({ ...(o as tls.ConnectionOptions), ...opts, servername: undefined, checkServerIdentity: () => undefined });
    const flood = [];
    // One stolen node key from five addresses: one peer, "nc 127.0.52.21".
    for (let i = 0; i < 5; i++) flood.push(await hold(s.port, `127.0.52.${30 + i}`, HALF, viaTls(nc)));
    await Promise.all(flood.slice(0, 2).map((f) => f.closed));
    const caller = await hold(s.port, '127.0.52.40', '', viaTls(clc));
    expect(await ask(caller.sock)).toBe('HTTP/1.1 200 OK');
    s.refusals.close();
    expect(s.lines.filter((l) => l.code === 'ConnectionEvicted').map((l) => l.peer)).toContain('nc 127.0.52.21');
  });

  it('closes a connection that does not finish its handshake within the header timeout', async () => {
    const s = await start({ ...LIMITS, headersTimeoutMs: 300, requestTimeoutMs: 600 }, serverTlsOptions(loadTlsIdentity(certs, 'cc', SERVER)));
    const silent = await hold(s.port, '127.0.52.41', '');
    await silent.closed;
    await expect.poll(() => s.lines.some((l) => l.code === 'TlsHandshakeFailed')).toBe(true);
  });
});
