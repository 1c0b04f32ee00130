/**
 * dist/cc/main.js as a process, without NCs: the ready line, exit 2 on bad flags, answering while
 * every NC is down, and a clean exit 0 on SIGTERM. Addresses 127.0.11.x only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CC_OPS } from '../../shared/protocol/ccProtocol.js';
import { TypedClient } from '../../shared/protocol/typedClient.js';
import { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { CC_PATH } from '../../shared/wire/transport.js';
import { ROOT } from '../helpers/cloud.js';

const MAIN = join(ROOT, 'dist', 'cc', 'main.js');
const HOST = '127.0.11.253';
const DEAD_NC = '127.0.11.60';
const stateDir = mkdtempSync(join(tmpdir(), 'ferry-cc-main-'));
const children: ChildProcess[] = [];

function start(args: string[]): { child: ChildProcess; out: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr?.on('data', (c: Buffer) => { out += c.toString(); });
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out: () => out, exit };
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null && c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
  rmSync(stateDir, { recursive: true, force: true });
});

describe.skipIf(!existsSync(MAIN))('cc/main.js as a process', () => {
  it('exits 2 naming every bad flag', async () => {
    const p = start(['--host', '10.1.1.1', '--nodes', `${DEAD_NC},${DEAD_NC}`, '--state-dir', stateDir, '--insecure-plaintext']);
    expect(await p.exit).toBe(2);
    expect(p.out()).toContain('--host:');
    expect(p.out()).toContain(`--nodes: ${DEAD_NC} is registered twice`);
  });

  it('exits 2 without --tls-dir or --insecure-plaintext, naming both and ferry-init', async () => {
    const p = start(['--host', HOST, '--state-dir', stateDir]);
    expect(await p.exit).toBe(2);
    expect(p.out()).toMatch(/--tls-dir: required unless --insecure-plaintext is given: run ferry-init/);
    expect(p.out()).not.toContain('cc listening');
  });

  it('stops with TlsFileMissing when --tls-dir lacks its files: never a fallback to plaintext', async () => {
    const p = start(['--host', HOST, '--state-dir', stateDir, '--tls-dir', join(stateDir, 'no-certs')]);
    expect(await p.exit).toBe(1);
    expect(p.out()).toContain('TlsFileMissing');
    expect(p.out()).not.toContain('cc listening');
  });

  it('prints one ready line, answers while its NC is down, caches the view, and exits 0 on SIGTERM', async () => {
    const p = start(['--host', HOST, '--port', '8774', '--partition', 'cluster11', '--nodes', DEAD_NC, '--state-dir', stateDir, '--nc-timeout-ms', '300', '--insecure-plaintext']);
    await until(() => p.out().includes('cc listening on'));
    expect(p.out()).toMatch(/ferry-cc: WARNING: .*PLAINTEXT.*--insecure-plaintext given/);
    expect(p.out().split('\n').filter((l) => l.startsWith('cc listening on'))).toEqual([`cc listening on http://${HOST}:8774`]);

    const transport = new HttpWireTransport({ path: CC_PATH });
    const cc = new TypedClient(transport, CC_OPS);
    const { partition, nodes } = await cc.call(`http://${HOST}:8774`, 'ccDescribeNodes', {});
    transport.close();
    expect(partition).toBe('cluster11');
    expect(nodes).toEqual([expect.objectContaining({ host: DEAD_NC, reachable: false, nodeState: 'unknown', lastSeen: 0 })]);

    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
    const cache = JSON.parse(readFileSync(join(stateDir, 'cc.json'), 'utf8')) as { kind: string; data: { partition: string } };
    expect(cache).toMatchObject({ kind: 'ferry-cc', data: { partition: 'cluster11' } });
  });
});
