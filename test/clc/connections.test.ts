/**
 * The CLC as a real process under attack from the host (docs/SECURITY.md "Connections"), on
 * 127.0.52.0/24: idle and half-sent connections past its open-file limit, and floods of refused
 * requests. The CLC runs under `ulimit -n 256`, so exhausting it takes hundreds of sockets, not
 * the 20,000 of its default limit; its CC is down (describes still answer).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stopPid } from '../../scripts/daemon.js';
import { parseCredentialsFile, type Credentials } from '../../shared/auth/credentialsFile.js';
import { signQuery } from '../../shared/auth/sign.js';
import { expectClosedByHeaderTimeout, flood, logLines, spawnWithFileLimit, type HeldConnection, type LimitedDaemon } from '../helpers/floodConnections.js';
import { ensureBuilt, ROOT } from './buildOnce.js';

const CLC_HOST = '127.0.52.1';
const DEAD_CC = '127.0.52.2';
const ATTACKERS = ['127.0.52.101', '127.0.52.102', '127.0.52.103'];
const OPEN_FILES = 256;
const HEADERS_TIMEOUT_MS = 2000;

let base: string;
const daemons: LimitedDaemon[] = [];
let held: HeldConnection[] = [];

async function freePort(host: string): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, host, r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function startClc(name: string, extra: readonly string[] = []): Promise<{ d: LimitedDaemon; url: string; admin: Credentials }> {
  const port = await freePort(CLC_HOST);
  const stateDir = join(base, name);
  const d = await spawnWithFileLimit(join(ROOT, 'dist', 'clc', 'main.js'), [
    '--host', CLC_HOST, '--port', String(port), '--state-dir', stateDir, '--clusters', `cluster01=http://${DEAD_CC}:${await freePort(DEAD_CC)}`,
    '--insecure-plaintext', '--headers-timeout-ms', String(HEADERS_TIMEOUT_MS), '--request-timeout-ms', String(2 * HEADERS_TIMEOUT_MS), ...extra,
  ], OPEN_FILES, 'clc listening on');
  daemons.push(d);
  const credPath = join(stateDir, 'admin.credentials');
  return { d, url: `http://${CLC_HOST}:${port}/services/Eucalyptus`, admin: parseCredentialsFile(readFileSync(credPath, 'utf8'), credPath) };
}

/** A signed DescribeAvailabilityZones, as the CLI sends it; gives up after `limitMs`. */
async function adminRequest(url: string, admin: Credentials, limitMs: number): Promise<{ status: number | string; ms: number }> {
  const t0 = Date.now();
  const signed = signQuery({ Version: '2013-02-01', Action: 'DescribeAvailabilityZones' }, { ...admin, url, now: Date.now() });
  try {
    const res = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body, signal: AbortSignal.timeout(limitMs) });
    await res.text();
    return { status: res.status, ms: Date.now() - t0 };
  } catch (e) {
    return { status: String((e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name), ms: Date.now() - t0 };
  }
}

async function stop(d: LimitedDaemon): Promise<number | null> {
  await stopPid(d.pid);
  return d.exited;
}

beforeAll(async () => {
  await ensureBuilt();
  base = mkdtempSync(join(tmpdir(), 'ferry-clc-conns-'));
}, 120_000);

afterEach(() => {
  for (const h of held) h.socket.destroy();
  held = [];
});

afterAll(async () => {
  for (const d of daemons) await stopPid(d.pid);
  rmSync(base, { recursive: true, force: true });
});

describe('the CLC under a connection flood', () => {
  it('serves the administrator past its open-file limit, and closes half-sent connections at the header timeout', async () => {
    const { d, url, admin } = await startClc('flood');
    // The limit the test relies on is in force, and the caps were fitted under it (stderr may trail the ready line).
    await expect.poll(() => logLines(d.stderr()).find((l) => l.msg === 'clc started')?.connections)
      .toMatchObject({ openFileLimit: OPEN_FILES, maxConnections: 192, maxPending: 96 });

    // 3 × the CLC's handles: a third idle, the rest with half a request head.
    held = await flood({
      host: CLC_HOST, port: Number(new URL(url).port), from: ATTACKERS, count: 3 * OPEN_FILES,
      send: (i) => (i % 3 === 0 ? '' : 'POST /services/Eucalyptus HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n'),
    });
    const served = await adminRequest(url, admin, 10_000);
    expect(served.status).toBe(200);

    // Every attacker connection closes: the oldest were closed to make room, the rest got 408 once
    // the header timeout passed (Node checks every tenth of it).
    const { timedOut, closed } = await expectClosedByHeaderTimeout(held, HEADERS_TIMEOUT_MS);

    // Nothing is left pending, and the next request is as quick as ever.
    expect((await adminRequest(url, admin, 10_000)).status).toBe(200);
    expect(await stop(d)).toBe(0);
    const lines = logLines(d.stderr());
    // Aggregated: per code and attacker at most the first line and one count at shutdown.
    for (const code of ['ConnectionEvicted', 'RequestTimeout']) {
      for (const peer of ATTACKERS) expect(lines.filter((l) => l.code === code && l.peer === peer).length).toBeLessThanOrEqual(2);
    }
    const evicted = lines.filter((l) => l.code === 'ConnectionEvicted');
    const counted = evicted.reduce((n, l) => n + (typeof l.repeats === 'number' ? l.repeats : 1), 0);
    expect(counted).toBe(closed - timedOut);
  });
});

describe('the CLC under a flood of refused requests', () => {
  it('writes a bounded number of lines, keeps the counts, and answers a bad gzip body with a client error', async () => {
    const { d, url } = await startClc('refusals');
    const send = async (i: number): Promise<number> => {
      const from = ATTACKERS[i % 2] ?? '';
      const form = 'Action=DescribeInstances&Version=2013-02-01';
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      let body: Buffer = Buffer.from(form);
      if (i % 3 === 1) headers.authorization = `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/x/ec2/aws4_request, SignedHeaders=host, Signature=${'0'.repeat(64)}`;
      if (i % 3 === 2) {
        headers['content-encoding'] = 'gzip';
        body = i % 2 === 0 ? Buffer.from('not gzip at all') : gzipSync(form);
      }
      return new Promise((resolve, reject) => {
        const r = http.request(url, { method: 'POST', headers, localAddress: from }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        r.on('error', reject);
        r.end(body);
      });
    };
    const statuses: number[] = [];
    for (let i = 0; i < 600; i += 20) statuses.push(...await Promise.all(Array.from({ length: 20 }, (_, k) => send(i + k))));
    // Refused with client errors: nothing reached an action, nothing was our own failure.
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => ![400, 401, 403].includes(s))).toEqual([]);

    expect(await stop(d)).toBe(0);
    const lines = logLines(d.stderr()).filter((l) => l.msg?.toString().startsWith('request failed'));
    // At most the first line and the count per (code, peer), however many were sent.
    const byKey = new Map<string, Record<string, unknown>[]>();
    for (const l of lines) byKey.set(`${String(l.code)} ${String(l.peer)}`, [...(byKey.get(`${String(l.code)} ${String(l.peer)}`) ?? []), l]);
    for (const group of byKey.values()) expect(group.length).toBeLessThanOrEqual(2);
    expect(lines.length).toBeLessThanOrEqual(2 * 3 * ATTACKERS.length);
    // The counts are kept: every refused credential is in a line or a count.
    const authRefused = statuses.filter((s) => s === 401 || s === 403).length;
    const logged = lines.filter((l) => l.code === 'AuthFailure' || l.code === 'SignatureDoesNotMatch' || l.code === 'IncompleteSignature')
      .reduce((n, l) => n + (typeof l.repeats === 'number' ? l.repeats : 1), 0);
    expect(authRefused).toBeGreaterThan(0);
    expect(logged).toBe(authRefused);
    expect(lines.some((l) => l.code === 'InternalError')).toBe(false);
  });
});
