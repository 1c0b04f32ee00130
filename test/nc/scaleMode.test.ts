/**
 * The scale mode (nc/scale/main.ts) as real processes: 20 simulated hosts in one process, each on
 * its own 127.64.0.x with its own certificate, polled by a real CC over mutual TLS; a host failed
 * on command stops answering and the CC marks it unreachable while the others stay up; revived, it
 * answers again. Asked of
 * the CC itself (ccDescribeNodes with the CLC's certificate), by polling with a generous deadline.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CC_OPS } from '../../shared/protocol/ccProtocol.js';
import { TypedClient } from '../../shared/protocol/typedClient.js';
import { loadTlsIdentity } from '../../shared/pki/tlsIdentity.js';
import { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { clientTlsOptions } from '../../shared/wire/tls.js';
import { CC_PATH } from '../../shared/wire/transport.js';
import { spawnDaemon, stopPid, type RunningDaemon } from '../../scripts/daemon.js';
import { ensureScalePki, scaleHosts, startScaleProcess, type ScaleProcess } from '../../scripts/scaleFarm.js';
import { REPO } from '../helpers/spawnDaemon.js';

const CONTROLLER = '127.0.90.2';
const CC_PORT = 19660;
const NC_PORT = 19661;
const HOSTS = scaleHosts(20);

describe('scale mode: many simulated hosts in one process, supervised by a real CC', () => {
  let baseDir = '';
  let farm: ScaleProcess | undefined;
  let cc: RunningDaemon | undefined;
  let transport: HttpWireTransport | undefined;
  let client: TypedClient<typeof CC_OPS>;

  beforeAll(async () => {
    baseDir = mkdtempSync(join(tmpdir(), 'ferry-scale-test-'));
    ensureScalePki(baseDir, CONTROLLER, HOSTS);
    const ccUrl = `https://${CONTROLLER}:${CC_PORT}`;
    cc = await spawnDaemon({
      name: 'cc', entry: 'dist/cc/main.js', ready: 'cc listening on https://',
      args: ['--host', CONTROLLER, '--port', String(CC_PORT), '--nodes', HOSTS.join(','), '--nc-port', String(NC_PORT), '--state-dir', join(baseDir, 'cc'),
        '--tls-dir', join(baseDir, 'certs'), '--poll-interval-ms', '500'],
    }, { root: REPO, logFile: join(baseDir, 'logs', 'cc.log') });
    farm = await startScaleProcess({ root: REPO, baseDir, name: 'scale', hosts: HOSTS, port: NC_PORT, ccUrl, storageDir: join(baseDir, 'storage') });
    transport = new HttpWireTransport({ path: CC_PATH, tls: clientTlsOptions(loadTlsIdentity(join(baseDir, 'certs'), 'clc', CONTROLLER)) });
    client = new TypedClient(transport, CC_OPS);
  }, 120_000);

  afterAll(async () => {
    transport?.close();
    if (cc) await stopPid(cc.pid);
    await farm?.stop();
    if (baseDir) rmSync(baseDir, { recursive: true, force: true });
  }, 60_000);

  const reachable = async (): Promise<Map<string, boolean>> => {
    const { nodes } = await client.call(`https://${CONTROLLER}:${CC_PORT}`, 'ccDescribeNodes', { cached: true });
    return new Map(nodes.map((n) => [n.host, n.reachable && n.healthy]));
  };
  const until = async (what: string, ok: (m: Map<string, boolean>) => boolean): Promise<Map<string, boolean>> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const m = await reachable();
      if (ok(m)) return m;
      if (Date.now() > deadline) throw new Error(`${what} within 60 s: ${JSON.stringify([...m])}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  it('the CC reaches every host over mutual TLS, each at its own address', async () => {
    const m = await until('every host reachable', (x) => HOSTS.every((h) => x.get(h) === true));
    expect([...m.keys()].sort()).toEqual([...HOSTS].sort());
  }, 90_000);

  it('a failed host stops answering and becomes unreachable; the others stay up', async () => {
    const dead = HOSTS[7]!;
    const at = await farm!.fail([dead]);
    expect(at).toBeLessThanOrEqual(Date.now());
    const m = await until(`${dead} unreachable`, (x) => x.get(dead) === false);
    expect(HOSTS.filter((h) => h !== dead).every((h) => m.get(h) === true)).toBe(true);
    // An unknown host is refused by name, and nothing else fails with it.
    await expect(farm!.fail(['127.64.9.9'])).rejects.toThrow('unknown host 127.64.9.9');
    // Failing it twice, or reviving a live host, is refused whole: the live host named with it stays up.
    await expect(farm!.fail([dead])).rejects.toThrow(`${dead} is already failed`);
    await expect(farm!.revive([dead, HOSTS[8]!])).rejects.toThrow(`${HOSTS[8]!} is not failed`);
    expect((await reachable()).get(HOSTS[8]!)).toBe(true);
  }, 90_000);

  it('a failed host revived boots again on its address and the CC reaches it again', async () => {
    const dead = HOSTS[7]!;
    await until(`${dead} unreachable`, (x) => x.get(dead) === false);
    await farm!.revive([dead]);
    const m = await until(`${dead} reachable again`, (x) => x.get(dead) === true);
    expect(HOSTS.every((h) => m.get(h) === true)).toBe(true);
    // Revived, it can fail again.
    await farm!.fail([dead]);
    await until(`${dead} unreachable once more`, (x) => x.get(dead) === false);
  }, 90_000);
});
