/**
 * Live migration between real processes: two simulated hypervisors and two NCs on 127.0.10.21 and
 * 127.0.10.22 only (other suites use other addresses). The test plays the CC with TypedClient(NC_OPS).
 * Runs the BUILT entry points (`npx tsc -p tsconfig.json` first). Steps build on each other, in order.
 * Every process is started and stopped by PID; --cc-url points at nothing, so every hint fails
 * harmlessly, as it must.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnDaemon, stopPid, type RunningDaemon } from '../../scripts/daemon.js';
import type { ProcessSpec } from '../../scripts/cloudLayout.js';
import { SimDriver } from '../../nc/hypervisor/sim/simDriver.js';
import type { MigrationPlan, NcMigrateRequest, PlanItem } from '../../shared/protocol/migrationProtocol.js';
import { NC_OPS, type NcNode } from '../../shared/protocol/ncProtocol.js';
import { TypedClient } from '../../shared/protocol/typedClient.js';
import { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { NC_PATH } from '../../shared/wire/transport.js';
import { runRequest, SMALL } from './fixtures.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const H1 = '127.0.10.21';
const H2 = '127.0.10.22';
const ncUrl = (h: string) => `http://${h}:8775`;
/** Where the destination's plaintext migration port listens (a plaintext cloud's hosts run --insecure-plaintext). */
const simUrl = (h: string) => `http://${h}:16509`;
const simSocket = (h: string) => join(base, h, 'simhv.sock');
/** A small guest takes ~2.8 s of model time to move at the sim's defaults; × 0.6 ≈ 1.7 s of wall time. */
const TIME_SCALE = '0.6';

let base: string;
const running = new Map<string, RunningDaemon>();
const transport = new HttpWireTransport({ path: NC_PATH, defaultTimeoutMs: 15_000 });
const nc = new TypedClient(transport, NC_OPS);
let sims: Record<typeof H1 | typeof H2, SimDriver>;

function simSpec(h: string): ProcessSpec {
  return {
    name: `simhv-${h}`, entry: 'dist/nc/hypervisor/sim/main.js', ready: 'simhv listening on',
    args: ['--host', h, '--socket', simSocket(h), '--insecure-plaintext', '--port', '16509', '--state-dir', join(base, h, 'simhv'),
      '--storage-dir', join(base, 'storage'), '--time-scale', TIME_SCALE],
  };
}

function ncSpec(h: string): ProcessSpec {
  return {
    name: `nc-${h}`, entry: 'dist/nc/main.js', ready: `nc listening on ${ncUrl(h)}`,
    args: ['--host', h, '--state-dir', join(base, h, 'nc'), '--sim-socket', simSocket(h), '--cc-url', 'http://127.0.10.29:8774', '--insecure-plaintext'],
  };
}

async function start(spec: ProcessSpec): Promise<void> {
  const d = await spawnDaemon(spec, { root: ROOT, logFile: join(base, 'logs', `${spec.name}.log`), env: { FERRY_LOG_LEVEL: 'debug' } });
  running.set(spec.name, d);
}

async function kill9(name: string): Promise<void> {
  const d = running.get(name);
  if (!d) throw new Error(`${name} is not running`);
  await stopPid(d.pid, 0, 'SIGKILL');
  running.delete(name);
}

const migrate = (h: string, req: NcMigrateRequest) => nc.call(ncUrl(h), 'ncMigrateInstances', req);
const describeNode = (h: string) => nc.call(ncUrl(h), 'ncDescribeResource', {});

async function until(h: string, pred: (n: NcNode) => boolean, timeoutMs = 20_000): Promise<NcNode> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const node = await describeNode(h);
    if (pred(node) || Date.now() > deadline) return node;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function planFor(migrationId: string, instanceId: string): MigrationPlan {
  const it0: PlanItem = { instanceId, vmType: SMALL, destination: H2, state: 'queued', attempts: 1, queuedAt: Date.now() };
  return {
    migrationId, source: H1, createdAt: Date.now(),
    request: { kind: 'instance', destinations: [], allowHosts: true, reserveDestinations: false },
    limits: { perSource: 2, perDestination: 2, perCluster: 8 },
    timeouts: { prepareMs: 30_000, readyMs: 30_000, migratingBaseMs: 60_000, migratingPerGiBMs: 60_000, stallMs: 30_000 },
    cancelRequested: false, items: [it0],
  };
}

function incomingFor(migrationId: string, instanceId: string): NcMigrateRequest {
  const r = runRequest(instanceId);
  return {
    action: 'prepare', role: 'destination', migrationId, allowDisabled: false,
    incoming: { migrationId, instanceId, source: H1, reservationId: r.reservationId, imageId: r.imageId, ownerId: r.ownerId, launchTime: r.launchTime, vmType: r.vmType },
  };
}

/** Run on H1, then source prepare, destination prepare, commit: the migration is under way. */
async function launchMigration(migrationId: string, instanceId: string): Promise<void> {
  await nc.call(ncUrl(H1), 'ncRunInstance', runRequest(instanceId));
  expect((await migrate(H1, { action: 'prepare', role: 'source', plan: planFor(migrationId, instanceId) })).plan?.items[0]?.state).toBe('queued');
  expect((await migrate(H2, incomingFor(migrationId, instanceId))).incoming?.state).toBe('ready');
  const committed = await migrate(H1, { action: 'commit', migrationId, instanceId, destination: H2, destinationUri: simUrl(H2) });
  expect(committed.plan?.items[0]?.state).toBe('migrating');
}

const itemOf = (n: NcNode, migrationId: string) => n.plans?.find((p) => p.migrationId === migrationId)?.items[0];
const isFinal = (state: string | undefined) => ['completed', 'rolled-back', 'cancelled', 'failed'].includes(state ?? '');

/** Where the instance is: NC records (live) and hypervisor domains (running), on both hosts. */
async function whereIs(instanceId: string): Promise<{ records: string[]; running: string[] }> {
  const records: string[] = [];
  const runningOn: string[] = [];
  for (const h of [H1, H2]) {
    const node = await describeNode(h);
    if (node.instances.some((i) => i.instanceId === instanceId && i.state !== 'terminated')) records.push(h);
    const domains = await sims[h as typeof H1].list();
    if (domains.some((d) => d.id === instanceId && d.state === 'running')) runningOn.push(h);
  }
  return { records, running: runningOn };
}

beforeAll(async () => {
  for (const f of ['dist/nc/main.js', 'dist/nc/hypervisor/sim/main.js']) {
    if (!existsSync(join(ROOT, f))) throw new Error(`${f} is missing: run npx tsc -p tsconfig.json first`);
  }
  base = mkdtempSync(join(tmpdir(), 'ferry-nc-mig-'));
  sims = { [H1]: new SimDriver({ socketPath: simSocket(H1) }), [H2]: new SimDriver({ socketPath: simSocket(H2) }) };
  for (const h of [H1, H2]) await start(simSpec(h));
  for (const h of [H1, H2]) await start(ncSpec(h));
});

afterAll(async () => {
  transport.close();
  for (const s of Object.values(sims)) await s.close();
  for (const d of running.values()) await stopPid(d.pid);
  running.clear();
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('live migration between two NC processes', () => {
  it('moves an instance: it runs on NC2 only, NC1 has no record, the item completed with stats', async () => {
    await launchMigration('mig-000000a1', 'i-000000a1');
    const src = await until(H1, (n) => isFinal(itemOf(n, 'mig-000000a1')?.state));
    const it0 = itemOf(src, 'mig-000000a1');
    expect(it0?.state).toBe('completed');
    expect(it0?.stats?.elapsedMs).toBeGreaterThan(0);
    expect(it0?.stats?.downtimeMs).toBeGreaterThan(0);
    expect(it0?.stats?.bytesTransferred).toBeGreaterThanOrEqual(256 * 1024 * 1024);
    expect(it0?.stats?.iterations).toBeGreaterThanOrEqual(2);
    expect(src.instances.map((i) => i.instanceId)).not.toContain('i-000000a1');
    const dst = await until(H2, (n) => n.instances.some((i) => i.instanceId === 'i-000000a1'));
    expect(dst.instances).toEqual([expect.objectContaining({ instanceId: 'i-000000a1', state: 'running', migrationState: 'none', reservationId: 'r-00000001' })]);
    expect(dst.incoming).toEqual([]);
    expect(await whereIs('i-000000a1')).toEqual({ records: [H2], running: [H2] });
  });

  it('survives kill -9 of the source NC mid-migration: the item completes and the VM runs exactly once', async () => {
    await launchMigration('mig-000000b2', 'i-000000b2');
    await kill9(`nc-${H1}`);
    // The hypervisor owns the migration: it is still moving while no NC watches it.
    expect((await sims[H1].list()).some((d) => d.id === 'i-000000b2')).toBe(true);
    await start(ncSpec(H1));
    const src = await until(H1, (n) => isFinal(itemOf(n, 'mig-000000b2')?.state));
    expect(['completed', 'rolled-back']).toContain(itemOf(src, 'mig-000000b2')?.state);
    await until(H2, (n) => n.incoming?.length === 0);
    const where = await whereIs('i-000000b2');
    expect(where.records).toHaveLength(1);
    expect(where.running).toEqual(where.records);
    if (itemOf(src, 'mig-000000b2')?.state === 'completed') expect(where.records).toEqual([H2]);
  });

  it('survives kill -9 of the destination NC mid-migration: the restarted NC finalizes the arrival', async () => {
    await launchMigration('mig-000000c3', 'i-000000c3');
    await kill9(`nc-${H2}`);
    const src = await until(H1, (n) => isFinal(itemOf(n, 'mig-000000c3')?.state));
    expect(itemOf(src, 'mig-000000c3')?.state).toBe('completed');
    await start(ncSpec(H2));
    const dst = await describeNode(H2);
    expect(dst.incoming).toEqual([]);
    expect(dst.instances.find((i) => i.instanceId === 'i-000000c3')).toMatchObject({ state: 'running', migrationState: 'none' });
    expect(await whereIs('i-000000c3')).toEqual({ records: [H2], running: [H2] });
  });

  it('rolls back after prepare: nothing is left on NC2 and the instance runs on NC1 as before', async () => {
    await nc.call(ncUrl(H1), 'ncRunInstance', runRequest('i-000000d4'));
    await migrate(H1, { action: 'prepare', role: 'source', plan: planFor('mig-000000d4', 'i-000000d4') });
    const usedBefore = (await describeNode(H2)).used;
    await migrate(H2, incomingFor('mig-000000d4', 'i-000000d4'));
    expect((await sims[H2].list()).find((d) => d.id === 'i-000000d4')?.state).toBe('paused');
    expect((await describeNode(H2)).used.cores).toBe(usedBefore.cores + 1);

    expect(await migrate(H2, { action: 'rollback', role: 'destination', migrationId: 'mig-000000d4', reason: 'operator', cancel: false })).toEqual({ migrationId: 'mig-000000d4' });
    const rolled = await migrate(H1, { action: 'rollback', role: 'source', migrationId: 'mig-000000d4', reason: 'operator', cancel: false });
    expect(rolled.plan?.items[0]).toMatchObject({ state: 'rolled-back', error: 'operator' });

    const dst = await describeNode(H2);
    expect(dst.incoming).toEqual([]);
    expect(dst.used).toEqual(usedBefore);
    expect((await sims[H2].list()).some((d) => d.id === 'i-000000d4')).toBe(false);
    const src = await describeNode(H1);
    expect(src.instances.find((i) => i.instanceId === 'i-000000d4')).toMatchObject({ state: 'running', migrationState: 'none' });
    expect(await whereIs('i-000000d4')).toEqual({ records: [H1], running: [H1] });
  });
});
