/**
 * The CLC as a process (dist/clc/main.js): the ready line, exit 2 on bad configuration, SIGTERM →
 * exit 0, and a restart over the same state dir. Its CC is a stub on 127.0.12.3 speaking the real
 * wire protocol, backed by the fake cloud.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCredentialsFile, type Credentials } from '../../shared/auth/credentialsFile.js';
import { signQuery } from '../../shared/auth/sign.js';
import { silentLogger } from '../../shared/log.js';
import { CC_OPS, type CcOp } from '../../shared/protocol/ccProtocol.js';
import { typedHandlers, type TypedImpl } from '../../shared/protocol/typedServer.js';
import { mountWireService } from '../../shared/wire/server.js';
import { CC_PATH } from '../../shared/wire/transport.js';
import { ensureBuilt, ROOT } from './buildOnce.js';
import { FakeClusters } from './fakeClusters.js';
import { items, parseXml } from './harness.js';

const CLC_HOST = '127.0.12.2';
const CC_HOST = '127.0.12.3';

let stateDir: string;
let cc: Server;
let ccUrl: string;
const cloud = new FakeClusters({ cluster01: [{ host: '127.0.12.31' }] });

async function freePort(host: string): Promise<number> {
  const s = await new Promise<Server>((resolve) => { const x = express().listen(0, host, () => resolve(x)); });
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

interface Started { child: ChildProcess; line: string; url: string }

function startClc(args: string[]): Promise<Started> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'clc', 'main.js'), ...args], { env: { PATH: process.env.PATH ?? '', FERRY_LOG_LEVEL: 'warn' } });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line !== undefined) resolve({ child, line, url: line.replace(/^clc listening on /, '') });
    });
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    child.on('exit', (code) => reject(new Error(`clc exited ${code}: ${err}`)));
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

/** Unsigned unless `creds` are given (then signed as the CLI signs). */
async function q(url: string, params: Record<string, string>, creds?: Credentials) {
  const all = { Version: '2013-02-01', ...params };
  const init = creds ? signQuery(all, { ...creds, url, now: Date.now() }) : { body: new URLSearchParams(all).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  const res = await fetch(url, { method: 'POST', ...init });
  return { status: res.status, doc: await parseXml(await res.text()) };
}

beforeAll(async () => {
  await ensureBuilt();
  stateDir = mkdtempSync(join(tmpdir(), 'ferry-clc-main-'));
  const impl = Object.fromEntries(Object.keys(CC_OPS).map((op) => [op, (req: never) => cloud.call('cluster01', op as CcOp, req)]));
  const app = express();
  mountWireService(app, { path: CC_PATH, handlers: typedHandlers(CC_OPS, impl as unknown as TypedImpl<typeof CC_OPS>), logger: silentLogger() });
  cc = await new Promise<Server>((resolve) => { const s = app.listen(0, CC_HOST, () => resolve(s)); });
  ccUrl = `http://${CC_HOST}:${(cc.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  cc.closeAllConnections();
  await new Promise((r) => cc.close(r));
  rmSync(stateDir, { recursive: true, force: true });
});

describe('clc/main', () => {
  it('exits 2 naming every bad field', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'clc', 'main.js'), '--host', '10.1.1.1', '--port', 'x']);
    let err = '';
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    expect(await exitOf(child)).toBe(2);
    expect(err).toContain('--host:');
    expect(err).toContain('--port:');
    expect(err).toContain('--state-dir:');
  });

  it.each([
    ['neither --tls-dir nor --insecure-plaintext', [], /--tls-dir: required unless --insecure-plaintext is given: run ferry-init/],
    ['both', ['--tls-dir', 'certs', '--insecure-plaintext'], /--insecure-plaintext: contradicts --tls-dir/],
    ['an http:// CC with --tls-dir', ['--tls-dir', 'certs', '--clusters', 'cluster01=http://127.0.12.3:8774'], /--clusters: cluster01: must be https:\/\/ with --tls-dir/],
  ])('exits 2 with %s', async (_n, extra, re) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'clc', 'main.js'), '--host', CLC_HOST, '--state-dir', join(stateDir, 'never'), ...extra]);
    let err = '';
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    expect(await exitOf(child)).toBe(2);
    expect(err).toMatch(re);
    expect(existsSync(join(stateDir, 'never'))).toBe(false);
  });

  it('stops with TlsFileMissing when --tls-dir lacks clc-HOST.pem: never a fallback to plaintext', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'clc', 'main.js'), '--host', CLC_HOST, '--state-dir', join(stateDir, 'never'),
      '--tls-dir', join(stateDir, 'no-certs'), '--clusters', `cluster01=https://${CC_HOST}:8774`]);
    let err = '';
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    expect(await exitOf(child)).toBe(1);
    expect(err).toContain('TlsFileMissing');
    expect(existsSync(join(stateDir, 'never', 'admin.credentials'))).toBe(false);
  });

  it('serves, persists before answering, stops on SIGTERM, and remembers after a restart', async () => {
    const port = await freePort(CLC_HOST);
    const args = ['--host', CLC_HOST, '--port', String(port), '--state-dir', stateDir, '--clusters', `cluster01=${ccUrl}`, '--cc-timeout-ms', '2000', '--insecure-plaintext'];
    const first = await startClc(args);
    expect(first.line).toBe(`clc listening on http://${CLC_HOST}:${port}/services/Eucalyptus`);

    // First start: the admin's keys are written 0600 in eucarc form, with this CLC's URL.
    const credPath = join(stateDir, 'admin.credentials');
    expect(statSync(credPath).mode & 0o777).toBe(0o600);
    const admin = parseCredentialsFile(readFileSync(credPath, 'utf8'), credPath);
    expect(admin.accessKey).toMatch(/^AKI[A-Z0-9]{17}$/);
    expect(admin.secretKey).toMatch(/^[A-Za-z0-9+/]{40}$/);
    expect(admin.url).toBe(first.url);

    const unsigned = await q(first.url, { Action: 'DescribeInstances' });
    expect([unsigned.status, unsigned.doc.Response.Errors.Error.Code]).toEqual([401, 'AuthFailure']);

    const run = await q(first.url, { Action: 'RunInstances', ImageId: 'emi-00000001', MinCount: '2' }, admin);
    expect(run.status).toBe(200);
    const reservationId = run.doc.RunInstancesResponse.reservationId as string;
    const file = JSON.parse(readFileSync(join(stateDir, 'clc.json'), 'utf8')) as { kind: string; schemaVersion: number; data: { instances: Record<string, { reservationId: string; phase: string }> } };
    expect([file.kind, file.schemaVersion]).toEqual(['ferry-clc', 1]);
    expect(Object.values(file.data.instances).map((r) => [r.reservationId, r.phase])).toEqual([[reservationId, 'launched'], [reservationId, 'launched']]);

    const exited = exitOf(first.child);
    first.child.kill('SIGTERM');
    expect(await exited).toBe(0);

    // A restart keeps the same keys (rotation is deleting the file, docs/SECURITY.md).
    const second = await startClc(args);
    expect(parseCredentialsFile(readFileSync(credPath, 'utf8'), credPath)).toEqual(admin);
    const d = await q(second.url, { Action: 'DescribeInstances' }, admin);
    expect(items(d.doc.DescribeInstancesResponse.reservationSet).map((r) => r.reservationId)).toEqual([reservationId]);
    const stopped = exitOf(second.child);
    second.child.kill('SIGTERM');
    expect(await stopped).toBe(0);
  });

  it('answers describes while its CC is down, with the zone unavailable (--auth none: unsigned requests act as admin)', async () => {
    const port = await freePort(CLC_HOST);
    const dead = await freePort(CC_HOST);
    const s = await startClc(['--host', CLC_HOST, '--port', String(port), '--state-dir', join(stateDir, 'other'), '--clusters', `cluster01=http://${CC_HOST}:${dead}`, '--auth', 'none', '--insecure-plaintext']);
    const r = await q(s.url, { Action: 'DescribeAvailabilityZones' });
    expect(r.status).toBe(200);
    expect(existsSync(join(stateDir, 'other', 'admin.credentials'))).toBe(false);
    expect(items(r.doc.DescribeAvailabilityZonesResponse.availabilityZoneInfo).map((z) => [z.zoneName, z.zoneState])).toEqual([['cluster01', 'unavailable']]);
    const run = await q(s.url, { Action: 'RunInstances', ImageId: 'emi-00000001' });
    expect([run.status, run.doc.Response.Errors.Error.Code]).toEqual([503, 'ServiceUnavailable']);
    const stopped = exitOf(s.child);
    s.child.kill('SIGTERM');
    expect(await stopped).toBe(0);
  });
});
