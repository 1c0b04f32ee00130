/**
 * The simhv control socket on real Unix sockets in a temp dir: born 0600 whatever the umask, a
 * stale one (its daemon killed) replaced, a live one or anything else at the path left alone with a
 * coded refusal, and directories others could write to refused. The refusal of another uid is
 * test/integration/simhvAccess.test.ts (real processes, another user).
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { directoryProblem, listenOnControlSocket } from '../../../nc/hypervisor/sim/controlSocket.js';
import { SimDriver } from '../../../nc/hypervisor/sim/simDriver.js';
import { codeOf } from '../../helpers/codeOf.js';

const base = mkdtempSync(join(tmpdir(), 'simhv-sock-'));
const isRoot = process.getuid?.() === 0;
const STRANGER = 65534;
const servers: Server[] = [];
let n = 0;

afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

function freshDir(mode = 0o755): string {
  const d = join(base, `d${n++}`);
  mkdirSync(d);
  chmodSync(d, mode);
  return d;
}

function server(): Server {
  const s = createHttpServer((_req, res) => res.end('{"domains":[]}'));
  servers.push(s);
  return s;
}

/** A socket whose daemon was killed: the file stays, nobody answers. */
async function staleSocket(path: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const gone = new Promise((r) => child.once('exit', r));
  if (child.pid) process.kill(child.pid, 'SIGKILL');
  await gone;
}

describe('listenOnControlSocket', () => {
  it('binds mode 0600 even under umask 0, and a driver of the same user talks through it', async () => {
    const path = join(freshDir(), 'simhv.sock');
    const previous = process.umask(0);
    try {
      await listenOnControlSocket(server(), path);
    } finally {
      process.umask(previous);
    }
    const s = lstatSync(path);
    expect(s.isSocket()).toBe(true);
    expect(s.mode & 0o777).toBe(0o600);
    const driver = new SimDriver({ socketPath: path });
    await expect(driver.list()).resolves.toEqual([]);
    await driver.close();
  });

  it('creates a missing directory for it', async () => {
    const path = join(freshDir(), 'run', 'ferry', 'simhv.sock');
    await listenOnControlSocket(server(), path);
    expect(lstatSync(path).isSocket()).toBe(true);
  });

  it('replaces a socket left by a killed daemon', async () => {
    const path = join(freshDir(), 'simhv.sock');
    await staleSocket(path);
    expect(lstatSync(path).isSocket()).toBe(true);
    await listenOnControlSocket(server(), path);
    await expect(new SimDriver({ socketPath: path }).list()).resolves.toEqual([]);
  });

  it('refuses a socket another process listens on, and leaves that one serving', async () => {
    const path = join(freshDir(), 'simhv.sock');
    const first = createServer((c) => c.end());
    servers.push(first);
    await new Promise<void>((r) => first.listen(path, r));
    const err = await listenOnControlSocket(server(), path).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'HypervisorSocketUnusable', fields: { path } });
    expect((err as Error).message).toContain('another process listens on it');
    expect(first.listening).toBe(true);
    expect(lstatSync(path).isSocket()).toBe(true);
  });

  it.runIf(isRoot)('leaves a stale socket of another user alone and does not start', async () => {
    const path = join(freshDir(), 'simhv.sock');
    await staleSocket(path);
    chownSync(path, STRANGER, STRANGER);
    const err = await listenOnControlSocket(server(), path).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'HypervisorSocketUnusable' });
    expect((err as Error).message).toContain(`a socket of uid ${STRANGER} is there`);
    expect(lstatSync(path).uid).toBe(STRANGER);
  });

  it('refuses a path that holds something else, and leaves it as it is', async () => {
    const path = join(freshDir(), 'simhv.sock');
    writeFileSync(path, 'not a socket');
    expect(await codeOf(listenOnControlSocket(server(), path))).toBe('HypervisorSocketUnusable');
    expect(readFileSync(path, 'utf8')).toBe('not a socket');
  });

  it.each([
    ['group-writable', 0o775, 'writable by group or others'],
    ['world-writable', 0o777, 'writable by group or others'],
  ])('refuses a %s directory (others could swap the socket)', async (_name, mode, message) => {
    const path = join(freshDir(mode), 'simhv.sock');
    const err = await listenOnControlSocket(server(), path).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'HypervisorSocketUnusable' });
    expect((err as Error).message).toContain(message);
    expect(() => lstatSync(path)).toThrow();
  });

  it('accepts a sticky world-writable directory such as /tmp (others cannot remove our file there)', async () => {
    const path = join(freshDir(0o1777), 'simhv.sock');
    await listenOnControlSocket(server(), path);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
  });
});

describe('SimDriver', () => {
  it.runIf(isRoot)('will not talk to a socket another user put at the path (it could be handed credentials)', async () => {
    const path = join(freshDir(), 'simhv.sock');
    let requests = 0;
    const impostor = createHttpServer((_req, res) => {
      requests++;
      res.end('{"domains":[]}');
    });
    servers.push(impostor);
    await new Promise<void>((r) => impostor.listen(path, r));
    chownSync(path, STRANGER, STRANGER);
    const driver = new SimDriver({ socketPath: path });
    const err = await driver.prepareIncoming({ id: 'i-1', imageId: 'emi-1', resources: { cores: 1, memoryMiB: 1, diskGiB: 1 } }, 'm-1').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'HypervisorUnavailable' });
    expect((err as Error).message).toContain(`belongs to uid ${STRANGER}`);
    expect(requests).toBe(0);
  });
});

describe('directoryProblem', () => {
  const dir = (mode: number, uid = 0) => ({ mode, uid, isDirectory: () => true });
  it.each<[string, ReturnType<typeof dir>, string | undefined]>([
    ['root\'s 0755', dir(0o40755), undefined],
    ['root\'s sticky 1777', dir(0o41777), undefined],
    ['a group-writable 0775', dir(0o40775), 'writable by group or others'],
    ['a stranger\'s 0755', dir(0o40755, 4242), 'belongs to uid 4242'],
    ['not a directory', { mode: 0o100644, uid: 0, isDirectory: () => false }, 'is not a directory'],
  ])('%s', (_name, stats, problem) => {
    const p = directoryProblem('/run/ferry', stats);
    if (problem === undefined) expect(p).toBeUndefined();
    else expect(p).toContain(problem);
  });
});
