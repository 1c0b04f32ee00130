/**
 * The NC as a real process next to a real simhv daemon, on 127.0.10.1 only (other suites use other
 * /24s), called over mutual TLS as its CC would (the cloud layout's PKI in the temp dir). Runs against the BUILT entry points: `npx tsc -p tsconfig.json` first. The steps build on
 * each other in order, like an operator's session: run, disable, crash the NC, crash the host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnDaemon, stopPid, isAlive, type RunningDaemon } from '../../scripts/daemon.js';
import { certsDirOf, ensureCloudPki, type ProcessSpec } from '../../scripts/cloudLayout.js';
import { NC_OPS, type NcNode } from '../../shared/protocol/ncProtocol.js';
import { TypedClient } from '../../shared/protocol/typedClient.js';
import type { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { NC_PATH } from '../../shared/wire/transport.js';
import { tierClient } from '../helpers/tierClient.js';
import { runRequest } from './fixtures.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const HOST = '127.0.10.1';
/** Only named in the CC certificate this test calls with: no CC runs. */
const CC_HOST = '127.0.10.254';
const NC_URL = `https://${HOST}:8775`;
const A = 'i-000000a1';
const B = 'i-000000b2';

let base: string;
const running = new Map<string, RunningDaemon>();
let transport: HttpWireTransport | undefined;
let nc: TypedClient<typeof NC_OPS>;

function simSpec(): ProcessSpec {
  return {
    name: 'simhv', entry: 'dist/nc/hypervisor/sim/main.js', ready: 'simhv listening on',
    args: ['--host', HOST, '--socket', join(base, 'simhv.sock'), '--state-dir', join(base, 'simhv'), '--storage-dir', join(base, 'storage')],
  };
}

function ncSpec(): ProcessSpec {
  return {
    name: 'nc', entry: 'dist/nc/main.js', ready: `nc listening on ${NC_URL}`,
    args: ['--host', HOST, '--state-dir', join(base, 'nc'), '--sim-socket', join(base, 'simhv.sock'), '--tls-dir', certsDirOf({ baseDir: base })],
  };
}

async function start(spec: ProcessSpec): Promise<RunningDaemon> {
  const d = await spawnDaemon(spec, { root: ROOT, logFile: join(base, 'logs', `${spec.name}.log`) });
  running.set(spec.name, d);
  return d;
}

async function crash(name: string): Promise<void> {
  const d = running.get(name);
  if (!d) return;
  await stopPid(d.pid, 0, 'SIGKILL');
  running.delete(name);
}

async function describeUntil(pred: (n: NcNode) => boolean, timeoutMs = 15_000): Promise<NcNode> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const node = await nc.call(NC_URL, 'ncDescribeResource', {});
    if (pred(node) || Date.now() > deadline) return node;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const states = (n: NcNode) => n.instances.map((i) => [i.instanceId, i.state, i.hypervisorState]);

beforeAll(async () => {
  for (const f of ['dist/nc/main.js', 'dist/nc/hypervisor/sim/main.js']) {
    if (!existsSync(join(ROOT, f))) throw new Error(`${f} is missing: run npx tsc -p tsconfig.json first`);
  }
  base = mkdtempSync(join(tmpdir(), 'ferry-nc-it-'));
  ensureCloudPki({ baseDir: base, controllerHost: CC_HOST, nodeHosts: [HOST] });
  transport = tierClient({ certsDir: certsDirOf({ baseDir: base }), role: 'cc', host: CC_HOST, path: NC_PATH, timeoutMs: 5000 });
  nc = new TypedClient(transport, NC_OPS);
  await start(simSpec());
  await start(ncSpec());
});

afterAll(async () => {
  transport?.close();
  for (const d of running.values()) await stopPid(d.pid);
  running.clear();
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('NC process with a simulated hypervisor', () => {
  it('runs two instances', async () => {
    const a = await nc.call(NC_URL, 'ncRunInstance', runRequest(A));
    const b = await nc.call(NC_URL, 'ncRunInstance', runRequest(B, { reservationId: 'r-00000002' }));
    expect([a.instance.state, b.instance.state]).toEqual(['running', 'running']);
    const node = await nc.call(NC_URL, 'ncDescribeResource', {});
    expect(node).toMatchObject({ host: HOST, nodeState: 'enabled', healthy: true, hypervisor: 'sim', used: { cores: 2 } });
    expect(node.capacity.cores).toBeGreaterThanOrEqual(2);
    expect(states(node)).toEqual([[A, 'running', 'running'], [B, 'running', 'running']]);
  });

  it('disables the node and then refuses new instances', async () => {
    const res = await nc.call(NC_URL, 'ncModifyNode', { stateName: 'disabled' });
    expect(res).toMatchObject({ previousState: 'enabled', node: { nodeState: 'disabled' } });
    await expect(nc.call(NC_URL, 'ncRunInstance', runRequest('i-000000c3'))).rejects.toMatchObject({
      code: 'RemoteFault', fields: { remoteCode: 'NodeDisabled', remoteStatus: 409 },
    });
  });

  it('comes back from kill -9 still disabled, with both instances re-adopted', async () => {
    await crash('nc');
    await start(ncSpec());
    const node = await nc.call(NC_URL, 'ncDescribeResource', {});
    expect(node).toMatchObject({ nodeState: 'disabled', healthy: true });
    expect(states(node)).toEqual([[A, 'running', 'running'], [B, 'running', 'running']]);
  });

  it('reports healthy=false with last-known states while the hypervisor is dead', async () => {
    await crash('simhv');
    const node = await describeUntil((n) => !n.healthy);
    expect(node.healthy).toBe(false);
    expect(node.instances.map((i) => i.instanceId)).toEqual([A, B]);
    await expect(nc.call(NC_URL, 'ncTerminateInstance', { instanceId: A })).rejects.toMatchObject({
      fields: { remoteCode: 'HypervisorUnavailable', remoteStatus: 503 },
    });
  });

  it('sees the instances stopped once the power-cycled host is back, and finishes the terminate', async () => {
    await start(simSpec());
    const node = await describeUntil((n) => n.healthy);
    expect(node.healthy).toBe(true);
    // The terminate that failed above was recorded first, so re-adoption finished it.
    expect(states(node)).toEqual([[A, 'terminated', 'missing'], [B, 'stopped', 'shutoff']]);
    expect(await nc.call(NC_URL, 'ncTerminateInstance', { instanceId: A }))
      .toEqual({ instanceId: A, previousState: 'running', currentState: 'terminated' });
  });

  it('exits 0 on SIGTERM', async () => {
    const d = running.get('nc');
    if (!d) throw new Error('nc is not running');
    const exited = new Promise<number | null>((r) => d.child.once('exit', (code) => r(code)));
    d.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(isAlive(d.pid)).toBe(false);
    running.delete('nc');
  });
});
