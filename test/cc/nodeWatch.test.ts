/**
 * The node watch over real sockets (issue 19): an NC's serveNodeWatch on an HTTPS server with mutual
 * TLS, the CC's WsNodeWatch dialing it with a `cc` certificate. Timeouts and retries run on a manual
 * clock; the connections are real. Loopback 127.0.113.0/24.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import forge from 'node-forge';
import WebSocket, { WebSocketServer } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WsNodeWatch, type WatchOutcome } from '../../cc/nodeWatch.js';
import { serveNodeWatch, type WatchEndpoint } from '../../nc/watchEndpoint.js';
import { ManualClock } from '../../shared/clock.js';
import { silentLogger } from '../../shared/log.js';
import { generateRsaKeys } from '../../shared/pki/certificates.js';
import type { PeerRole } from '../../shared/pki/spec.js';
import type { NcNode } from '../../shared/protocol/ncProtocol.js';
import { NC_WATCH_PATH } from '../../shared/protocol/nodeWatch.js';
import { issue, makeCa } from '../shared/pki/fixtures.js';

const NC = '127.0.113.2';
const OLD_NC = '127.0.113.3';
const CC = '127.0.113.1';

const keys = generateRsaKeys();
const now = new Date(); // the TLS stack checks validity against the real clock
const ca = makeCa('watch', keys, now);
const caPem = forge.pki.certificateToPem(ca.cert);
const tlsAs = (role: PeerRole, host: string) => {
  const c = issue(ca, { role, host }, keys, now);
  return { key: c.keyPem, cert: c.certPem, ca: caPem };
};

/** What the NC's describe answers next: a version, or a promise the test settles. */
let nextVersion: () => Promise<string> = async () => 'boot-1';
const NO_RESOURCES = { cores: 0, memoryMiB: 0, diskGiB: 0 };
/** The NC's report of version `v`. */
const reportOf = (host: string, v: string): NcNode => ({
  host, nodeState: 'enabled', healthy: true, hypervisor: 'sim', capacity: { cores: 4, memoryMiB: 4096, diskGiB: 40 }, used: NO_RESOURCES, instances: [], version: v,
});
const ncDescribe = async (): Promise<NcNode> => { versionCalls++; return reportOf(NC, await nextVersion()); };
let versionCalls = 0;
let ncServer: https.Server;
let oldServer: https.Server;
let endpoint: WatchEndpoint;
let ncPort = 0;
let oldPort = 0;
const watches: WsNodeWatch[] = [];

function listen(server: https.Server | http.Server, host: string): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));
}

function ccWatch(clock = new ManualClock(1_000), role: PeerRole = 'cc'): { watch: WsNodeWatch; clock: ManualClock } {
  const watch = new WsNodeWatch({
    urlOf: (host) => `wss://${host}:${host === NC ? ncPort : oldPort}${NC_WATCH_PATH}`,
    tls: tlsAs(role, CC), clock, logger: silentLogger(), retryMs: 60_000,
  });
  watches.push(watch);
  return { watch, clock };
}

beforeAll(async () => {
  const server = (host: string) => {
    const id = issue(ca, { role: 'nc', host }, keys, now);
    return https.createServer({ key: id.keyPem, cert: id.certPem, ca: caPem, requestCert: true, rejectUnauthorized: true }, (_req, res) => res.end());
  };
  ncServer = server(NC);
  endpoint = serveNodeWatch(ncServer, { describe: ncDescribe, checkPeers: true, logger: silentLogger() });
  ncPort = await listen(ncServer, NC);
  // An NC from before the watch: its server has no upgrade handler.
  oldServer = server(OLD_NC);
  oldPort = await listen(oldServer, OLD_NC);
});

afterEach(() => {
  for (const w of watches.splice(0)) w.close();
  nextVersion = async () => 'boot-1';
});

afterAll(async () => {
  endpoint.close();
  for (const s of [ncServer, oldServer]) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('the node watch', () => {
  it('answers same while the NC\'s report is the one the CC holds, and the report once it moved on; one connection for all', async () => {
    const { watch } = ccWatch();
    const opened = endpoint.connections();
    expect(await watch.check(NC, undefined, 10_000)).toEqual({ kind: 'report', report: reportOf(NC, 'boot-1') });
    expect(await watch.check(NC, 'boot-1', 10_000)).toEqual({ kind: 'same' });
    expect(await watch.check(NC, 'boot-1', 10_000)).toEqual({ kind: 'same' });
    nextVersion = async () => 'boot-2';
    expect(await watch.check(NC, 'boot-1', 10_000)).toEqual({ kind: 'report', report: reportOf(NC, 'boot-2') });
    expect(endpoint.connections()).toBe(opened + 1);
  });

  it('runs the NC\'s describe for every check (the poll\'s reconcile still happens)', async () => {
    const { watch } = ccWatch();
    const before = versionCalls;
    await watch.check(NC, 'boot-1', 10_000);
    await watch.check(NC, 'boot-1', 10_000);
    expect(versionCalls - before).toBe(2);
  });

  it('an NC without the watch: unavailable (the CC describes it), and not tried again before retryMs', async () => {
    const { watch, clock } = ccWatch();
    const first = await watch.check(OLD_NC, 'boot-1', 10_000);
    expect(first.kind).toBe('unavailable');
    const again = await watch.check(OLD_NC, 'boot-1', 10_000);
    expect(again).toEqual({ kind: 'unavailable', detail: 'no watch connection to this NC' });
    clock.advance(60_000);
    // Tried again: still refused by the old NC, so unavailable with the reason of a new attempt.
    expect((await watch.check(OLD_NC, 'boot-1', 10_000)).kind).toBe('unavailable');
  });

  it('nothing listening (the NC not started yet): unavailable, and tried again at the next check', async () => {
    const idle = http.createServer();
    const port = await listen(idle, '127.0.113.6');
    await new Promise((r) => idle.close(r));
    const refused = new WsNodeWatch({ urlOf: (h) => `ws://${h}:${port}${NC_WATCH_PATH}`, clock: new ManualClock(0), logger: silentLogger(), retryMs: 60_000 });
    watches.push(refused);
    const first = await refused.check('127.0.113.6', undefined, 10_000);
    expect(first.kind === 'unavailable' && first.detail).toBe('no watch connection to this NC');
    // Listening now (the NC started): the very next check gets through, no 60 s wait on the same clock.
    const server = http.createServer();
    serveNodeWatch(server, { describe: async () => reportOf('127.0.113.6', 'n-1'), checkPeers: false, logger: silentLogger() });
    await new Promise<void>((r) => server.listen(port, '127.0.113.6', r));
    try {
      expect((await refused.check('127.0.113.6', 'n-1', 10_000)).kind).toBe('same');
    } finally {
      refused.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('no answer within the bound: timeout, and the connection is dropped (a late answer cannot count)', async () => {
    const { watch, clock } = ccWatch();
    const lost: string[] = [];
    watch.onLost((h) => lost.push(h));
    expect(await watch.check(NC, 'boot-1', 10_000)).toEqual({ kind: 'same' });
    let release: (v: string) => void = () => undefined;
    nextVersion = () => new Promise<string>((r) => { release = r; });
    const pending = watch.check(NC, 'boot-1', 5_000);
    await expect.poll(() => versionCalls > 0 && release !== undefined).toBe(true);
    const open = endpoint.connections();
    clock.advance(5_000);
    expect(await pending).toEqual({ kind: 'timeout' });
    release('boot-1');
    await expect.poll(() => endpoint.connections()).toBe(open - 1);
    // The next check opens a new connection at once (a timeout is not a refusal).
    nextVersion = async () => 'boot-1';
    expect(await watch.check(NC, 'boot-1', 10_000)).toEqual({ kind: 'same' });
    // Dropped by the CC itself: not an NC hanging up.
    expect(lost).toEqual([]);
  });

  it('the NC closing the connection under a check: unavailable, and the CC describes', async () => {
    const { watch } = ccWatch();
    expect(await watch.check(NC, 'boot-1', 10_000)).toEqual({ kind: 'same' });
    const lost: string[] = [];
    watch.onLost((h) => lost.push(h));
    nextVersion = async () => { endpoint.close(); return 'boot-1'; };
    const o: WatchOutcome = await watch.check(NC, 'boot-1', 10_000);
    expect(o.kind).toBe('unavailable');
    expect(lost).toEqual([NC]);
    // Reopen the endpoint for the cases after this one.
    endpoint = serveNodeWatch(ncServer.removeAllListeners('upgrade'), { describe: ncDescribe, checkPeers: true, logger: silentLogger() });
  });
});

describe('an NC answering outside the contract', () => {
  it.each([
    ['a report with the version the CC holds', (seq: number) => ({ seq, version: 'v-1', report: reportOf('127.0.113.5', 'v-1') })],
    ['a new version without its report', (seq: number) => ({ seq, version: 'v-2' })],
    ['another sequence number', (seq: number) => ({ seq: seq + 7, version: 'v-1' })],
    ['a report that breaks the schema', (seq: number) => ({ seq, version: 'v-2', report: { host: '127.0.113.5' } })],
  ])('%s: unavailable (the CC describes instead) and the connection closed', async (_what, answer) => {
    const server = http.createServer((_req, res) => res.end());
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => ws.on('message', (m) => ws.send(JSON.stringify(answer((JSON.parse(String(m)) as { check: number }).check)))));
    const port = await listen(server, '127.0.113.5');
    const watch = new WsNodeWatch({ urlOf: (h) => `ws://${h}:${port}${NC_WATCH_PATH}`, clock: new ManualClock(0), logger: silentLogger(), retryMs: 1000 });
    try {
      expect((await watch.check('127.0.113.5', 'v-1', 10_000)).kind).toBe('unavailable');
      await expect.poll(() => wss.clients.size).toBe(0);
    } finally {
      watch.close();
      wss.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('the NC refuses', () => {
  /** Dials the watch as `role` and returns how it ended: the HTTP refusal, or the close code and reason. */
  function dial(role: PeerRole, path = NC_WATCH_PATH, send?: string[]): Promise<string> {
    return new Promise((resolve) => {
      const ws = new WebSocket(`wss://${NC}:${ncPort}${path}`, { ...tlsAs(role, CC) });
      ws.once('unexpected-response', (_req, res) => { resolve(`${res.statusCode} ${String(res.headers['x-ferry-error'])}`); ws.terminate(); });
      ws.once('open', () => { for (const m of send ?? []) ws.send(m); });
      ws.once('close', (code, reason) => resolve(`closed ${code} ${reason.toString()}`));
      ws.on('error', () => undefined);
    });
  }

  it.each([
    ['a CLC certificate', 'clc', NC_WATCH_PATH, '403 PeerNotAuthorized'],
    ['an NC certificate', 'nc', NC_WATCH_PATH, '403 PeerNotAuthorized'],
    ['another path', 'cc', '/axis2/services/EucalyptusNC/other', '404 UnknownOperation'],
  ] as const)('%s or %s: an HTTP refusal naming the code, no WebSocket', async (_what, role, path, expected) => {
    const before = versionCalls;
    expect(await dial(role, path)).toBe(expected);
    expect(versionCalls).toBe(before);
  });

  it.each([
    ['not JSON', ['{check']],
    ['an unknown field', [JSON.stringify({ check: 1, known: 'v', more: 1 })]],
    ['without a sequence number', [JSON.stringify({ known: 'v' })]],
    ['a negative sequence', [JSON.stringify({ check: -1, known: 'v' })]],
    ['a version too long', [JSON.stringify({ check: 1, known: 'v'.repeat(129) })]],
  ])('a check that is %s: closed 1008 WatchBadMessage, nothing described', async (_what, send) => {
    const before = versionCalls;
    expect(await dial('cc', NC_WATCH_PATH, send)).toBe('closed 1008 WatchBadMessage');
    expect(versionCalls).toBe(before);
  });

  it('a message over 512 bytes: closed by the WebSocket layer (1009), nothing described', async () => {
    const before = versionCalls;
    expect(await dial('cc', NC_WATCH_PATH, [JSON.stringify({ check: 1, known: 'v', pad: 'x'.repeat(600) })])).toMatch(/^closed 1009/);
    expect(versionCalls).toBe(before);
  });

  it('a second check before the first is answered: closed 1008 WatchCheckOverlaps', async () => {
    let release: (v: string) => void = () => undefined;
    nextVersion = () => new Promise<string>((r) => { release = r; });
    const outcome = dial('cc', NC_WATCH_PATH, [JSON.stringify({ check: 1, known: 'v' }), JSON.stringify({ check: 2, known: 'v' })]);
    expect(await outcome).toBe('closed 1008 WatchCheckOverlaps');
    release('v');
  });

  it('plaintext (--insecure-plaintext): the watch serves without certificates', async () => {
    const server = http.createServer((_req, res) => res.end());
    const plain = serveNodeWatch(server, { describe: async () => reportOf('127.0.113.4', 'p-1'), checkPeers: false, logger: silentLogger() });
    const port = await listen(server, '127.0.113.4');
    const watch = new WsNodeWatch({ urlOf: (h) => `ws://${h}:${port}${NC_WATCH_PATH}`, clock: new ManualClock(0), logger: silentLogger(), retryMs: 1000 });
    try {
      expect(await watch.check('127.0.113.4', 'p-1', 10_000)).toEqual({ kind: 'same' });
      expect(await watch.check('127.0.113.4', 'p-0', 10_000)).toEqual({ kind: 'report', report: reportOf('127.0.113.4', 'p-1') });
    } finally {
      watch.close();
      plain.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
