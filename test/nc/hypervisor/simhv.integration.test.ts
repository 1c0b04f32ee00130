/**
 * Two real sim daemons (separate processes on 127.0.9.1 and 127.0.9.2, temp state dirs, one shared
 * temp storage dir) driven through SimDriver on their control sockets: real HTTP, real files, real
 * kill -9. They run with --insecure-plaintext, so migrations between them need no credential and
 * stream over the plaintext port (the TLS path is test/integration/migrationCredentials.test.ts).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DomainSpec, HypervisorEvent } from '../../../nc/hypervisor/driver.js';
import { SimDriver } from '../../../nc/hypervisor/sim/simDriver.js';
import { builtEntry, runBuilt, spawnBuilt, type SpawnedProcess } from '../../helpers/spawnDaemon.js';
import { codeOf } from '../../helpers/codeOf.js';

let script: string;
let tmp: string;
const procs: SpawnedProcess[] = [];
const drivers: SimDriver[] = [];

beforeAll(async () => {
  script = builtEntry('nc/hypervisor/sim/main.ts');
}, 180_000);

afterEach(async () => {
  for (const d of drivers.splice(0)) await d.close();
  for (const p of procs.splice(0)) await p.kill('SIGKILL');
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function freshDirs(): Promise<void> {
  tmp = await mkdtemp(join(tmpdir(), 'simhv-it-'));
}

/** Host n: its control socket in the temp dir, its plaintext migration port at 127.0.9.n:16509 (`url`). */
async function startHost(n: number, extra: string[] = []): Promise<{ proc: SpawnedProcess; url: string; socket: string; driver: SimDriver }> {
  const proc = await spawnBuilt({
    script,
    args: [
      '--host', `127.0.9.${n}`, '--socket', join(tmp, `simhv${n}.sock`), '--insecure-plaintext', '--port', '16509', '--tls-port', '0',
      '--state-dir', join(tmp, `state${n}`), '--storage-dir', join(tmp, 'shared'),
      '--memory-mib', '4096', '--time-scale', '0.01', '--write-interval-ms', '100', ...extra,
    ],
    readyLine: /^simhv listening on unix:(.+)$/,
  });
  procs.push(proc);
  const driver = new SimDriver({ socketPath: proc.ready, eventRetryMs: 100 });
  drivers.push(driver);
  return { proc, url: `http://127.0.9.${n}:16509`, socket: proc.ready, driver };
}

/** One raw request on a Unix socket: status and parsed body. */
function rawRequest(socketPath: string, method: string, path: string, text?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, headers: text === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let out = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (out += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: out ? JSON.parse(out) : undefined }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

function spec(id: string, memoryMiB = 512): DomainSpec {
  return { id, imageId: 'emi-00000001', resources: { cores: 1, memoryMiB, diskGiB: 10 } };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Resolves at a progress event of the migration with bytes still to send: the stream runs (a witness
 * instead of a sleep that may land before the hypervisor even has the migration).
 */
function midStream(driver: SimDriver, migrationId: string, timeoutMs = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`no progress of ${migrationId} within ${timeoutMs} ms`)); }, timeoutMs);
    const off = driver.onEvent((e) => {
      if (e.kind !== 'migration-progress' || e.progress.migrationId !== migrationId || e.progress.bytesRemaining <= 0) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

async function counterOf(path: string): Promise<number> {
  return (JSON.parse(await readFile(path, 'utf8')) as { counter: number }).counter;
}


describe('simhv daemons (two real processes)', () => {
  it('runs a domain that writes its disk, live-migrates it, and loses it to a power cycle', async () => {
    await freshDirs();
    const h1 = await startHost(1);
    const h2 = await startHost(2);
    expect(await h1.driver.connect()).toEqual({ host: '127.0.9.1', capacity: { cores: 8, memoryMiB: 4096, diskGiB: 200 }, hypervisor: 'sim' });

    const events: HypervisorEvent[] = [];
    h1.driver.onEvent((e) => events.push(e));
    await h1.driver.eventsReady();

    const s = spec('i-00000001');
    const info = await h1.driver.create(s);
    expect(info).toMatchObject({ id: s.id, state: 'running', diskPath: join(tmp, 'shared', '127.0.9.1', 'i-00000001.disk') });
    const m0 = (await stat(info.diskPath)).mtimeMs;
    await waitFor('disk mtime to advance', async () => ((await stat(info.diskPath)).mtimeMs > m0 ? true : undefined));
    await stat(join(tmp, 'shared', '127.0.9.1', 'heartbeat'));

    await h2.driver.prepareIncoming(s, 'm-1');
    expect((await h2.driver.info(s.id))?.state).toBe('paused');
    const counterBefore = await counterOf(info.diskPath);
    const stats = await h1.driver.migrateOut(s.id, { migrationId: 'm-1', destinationUri: h2.url });
    expect(stats.migrationId).toBe('m-1');
    expect(stats.bytesTransferred).toBeGreaterThanOrEqual(512 * 1024 * 1024);
    expect(stats.iterations).toBeGreaterThanOrEqual(2);
    expect(stats.downtimeMs).toBeLessThanOrEqual(300);

    expect(await h1.driver.info(s.id)).toBeUndefined();
    expect(await h1.driver.list()).toEqual([]);
    const moved = await h2.driver.info(s.id);
    expect(moved).toMatchObject({ state: 'running', diskPath: join(tmp, 'shared', '127.0.9.2', 'i-00000001.disk') });
    await expect(stat(info.diskPath)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await counterOf(moved!.diskPath)).toBeGreaterThan(counterBefore); // the guest's counter carried over
    await waitFor('the stopped event', async () => (events.some((e) => e.kind === 'stopped') ? true : undefined));
    expect(events.filter((e) => e.kind === 'migration-progress')).toHaveLength(stats.iterations);
    expect(events.find((e) => e.kind === 'stopped')).toEqual({ kind: 'stopped', id: s.id, reason: 'migrated' });

    // Power-cycle host 2: kill -9, start again on the same state dir.
    await h2.proc.kill('SIGKILL');
    expect(await codeOf(h2.driver.list())).toBe('HypervisorUnavailable');
    const again = await startHost(2);
    const [after] = await again.driver.list();
    expect(after).toMatchObject({ id: s.id, state: 'shutoff' });
    const frozen = (await stat(after!.diskPath)).mtimeMs;
    // A running domain on the same host shows the writer at work: once it has been written twice,
    // the shut-off one would have been too, were it written at all.
    const witness = await again.driver.create(spec('i-0000000a', 256));
    const w0 = await waitFor('the running domain\'s first write', () => counterOf(witness.diskPath));
    await waitFor('two more writes of the running domain', async () => ((await counterOf(witness.diskPath)) >= w0 + 2 ? true : undefined));
    expect((await stat(after!.diskPath)).mtimeMs).toBe(frozen);
    await again.driver.destroy(witness.id);
    await again.driver.destroy(s.id);
    expect(await again.driver.list()).toEqual([]);

    // SIGTERM closes cleanly even with an event stream open.
    expect(await h1.proc.kill('SIGTERM')).toBe(0);
  });

  it('an aborted migration leaves the domain running on the source and nothing on the destination', async () => {
    await freshDirs();
    // A guest dirtying 100 MiB/s over 1 Gbit/s: rounds of ≈0.86, 0.72, 0.61 s … (≈5 s of rounds left
    // after the first), so an abort sent at the first progress event lands mid-stream even under load.
    const h1 = await startHost(1, ['--time-scale', '0.1', '--dirty-rate-mibps', '100']);
    const h2 = await startHost(2);
    const s = spec('i-00000002', 1024);
    await h1.driver.create(s);
    await h2.driver.prepareIncoming(s, 'm-2');
    const streaming = midStream(h1.driver, 'm-2');
    await h1.driver.eventsReady();
    const migration = codeOf(h1.driver.migrateOut(s.id, { migrationId: 'm-2', destinationUri: h2.url }));
    await streaming;
    await h1.driver.abortMigration(s.id, 'm-2');
    expect(await migration).toBe('MigrationAborted');
    expect((await h1.driver.info(s.id))?.state).toBe('running');
    await waitFor('destination to drop the incoming domain', async () => ((await h2.driver.list()).length === 0 ? true : undefined));
    // The source keeps writing its disk after the abort.
    const c = await counterOf((await h1.driver.info(s.id))!.diskPath);
    await waitFor('disk counter to advance', async () => ((await counterOf((await h1.driver.info(s.id))!.diskPath)) > c ? true : undefined));

    // The destination giving up mid-stream is a failed migration, and the source keeps the guest.
    await h2.driver.prepareIncoming(s, 'm-3');
    const streamingAgain = midStream(h1.driver, 'm-3');
    const second = codeOf(h1.driver.migrateOut(s.id, { migrationId: 'm-3', destinationUri: h2.url }));
    await streamingAgain;
    await h2.driver.abortIncoming(s.id, 'm-3');
    expect(await second).toBe('MigrationFailed');
    expect((await h1.driver.info(s.id))?.state).toBe('running');
    expect(await h2.driver.list()).toEqual([]);
  });

  it('bad input gets a coded error across the wire and changes nothing', async () => {
    await freshDirs();
    const h1 = await startHost(1);
    const h2 = await startHost(2);
    const s = spec('i-00000003');
    await h1.driver.create(s);

    expect(await codeOf(h1.driver.create({ ...s, imageId: 'emi-other' }))).toBe('DomainExists');
    expect(await codeOf(h1.driver.create(spec('i-00000004', 8192)))).toBe('InsufficientHostResources');
    expect(await h1.driver.info('i-0000dead')).toBeUndefined();
    await h1.driver.destroy('i-0000dead');
    expect(await codeOf(h1.driver.migrateOut('i-0000dead', { migrationId: 'm-x', destinationUri: h2.url }))).toBe('DomainNotFound');

    // Host 2 never prepared: the stream is refused and the domain stays put.
    expect(await codeOf(h1.driver.migrateOut(s.id, { migrationId: 'm-3', destinationUri: h2.url }))).toBe('IncomingNotPrepared');
    // Nobody listens there at all.
    expect(await codeOf(h1.driver.migrateOut(s.id, { migrationId: 'm-4', destinationUri: 'http://127.0.9.3:9' }))).toBe('MigrationFailed');
    expect((await h1.driver.info(s.id))?.state).toBe('running');
    expect(await h2.driver.list()).toEqual([]);

    const res = await rawRequest(h1.socket, 'POST', '/v1/domains', '{"id": "i-1",');
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'HypervisorBadRequest' } } });
    // The plaintext migration port takes incoming streams and nothing else.
    const viaPort = await fetch(`${h1.url}/v1/domains`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec('i-00000005')) });
    expect(viaPort.status).toBe(404);
    expect(((await viaPort.json()) as { error: { code: string } }).error.code).toBe('HypervisorUnknownEndpoint');
    expect((await h1.driver.list()).map((d) => d.id)).toEqual([s.id]);
  });

  it('the driver translates refused connections and off-protocol answers', async () => {
    await freshDirs();
    const dead = new SimDriver({ socketPath: join(tmp, 'nobody-here.sock'), requestTimeoutMs: 2_000 });
    drivers.push(dead);
    expect(await codeOf(dead.connect())).toBe('HypervisorUnavailable');

    const junk: Server = createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end('<h1>oops</h1>');
    });
    await new Promise<void>((r) => junk.listen(join(tmp, 'junk.sock'), r));
    try {
      const d = new SimDriver({ socketPath: join(tmp, 'junk.sock') });
      drivers.push(d);
      expect(await codeOf(d.list())).toBe('HypervisorProtocolError');
    } finally {
      await new Promise((r) => junk.close(r));
    }

    const silent: Server = createServer(() => undefined); // accepts, never answers
    await new Promise<void>((r) => silent.listen(join(tmp, 'silent.sock'), r));
    try {
      const d = new SimDriver({ socketPath: join(tmp, 'silent.sock'), requestTimeoutMs: 300 });
      drivers.push(d);
      expect(await codeOf(d.connect())).toBe('HypervisorUnavailable');
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });

  it('exits 2 naming the field on bad configuration', async () => {
    const { code, stderr } = await runBuilt(script, ['--host', '10.0.0.1', '--state-dir', '/tmp/x', '--storage-dir', '/tmp/y']);
    expect(code).toBe(2);
    expect(stderr).toContain('--host (SIMHV_HOST)');
    // A plaintext port is opened only on purpose.
    const port = await runBuilt(script, ['--host', '127.0.9.1', '--port', '16509', '--state-dir', '/tmp/x', '--storage-dir', '/tmp/y']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port (SIMHV_PORT): needs --insecure-plaintext');
  });

  it('exits 1 with HypervisorSocketUnusable when another daemon listens on its socket, which keeps serving', async () => {
    await freshDirs();
    const h1 = await startHost(1);
    await h1.driver.create(spec('i-00000006'));
    const second = await runBuilt(script, [
      '--host', '127.0.9.2', '--socket', h1.socket, '--tls-port', '0', '--state-dir', join(tmp, 'state2'), '--storage-dir', join(tmp, 'shared'),
    ]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('HypervisorSocketUnusable');
    expect((await h1.driver.list()).map((d) => d.id)).toEqual(['i-00000006']);
  });
});
