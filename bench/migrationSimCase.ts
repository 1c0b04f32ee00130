/**
 * Issue 19's `migration-sim` case: one live migration through the whole cloud of real processes
 * (CLC → CC → NCs → simhv, every tier over mutual TLS, the stream with its per-migration credentials)
 * against the simulated hypervisor's job alone: two more simhv daemons of the same cloud, driven
 * directly over their control sockets as the NC's driver drives them (prepareIncoming, migrateOut),
 * with a credential pair issued by the cloud's migration CA before the clock starts. The same guest
 * size both ways; the Ferry side is timed from MigrateInstances sent to DescribeMigrations showing it
 * completed (polled every 20 ms), the baseline from prepareIncoming sent to migrateOut answered.
 * Rounds alternate, each moving the guest back the other way. Everything on 127.0.86.0/24.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { caCredentialIssuer, loadMigrationCa } from '../cc/migration/credentialIssuer.js';
import { SimDriver } from '../nc/hypervisor/sim/simDriver.js';
import type { DomainSpec } from '../nc/hypervisor/driver.js';
import { systemClock } from '../shared/clock.js';
import { findVmType } from '../shared/model/vmTypes.js';
import { certsDirOf, clcUrl, cloudLayout, ensureCloudPki, simSocketOf, type CloudLayoutOptions } from '../scripts/cloudLayout.js';
import { spawnDaemon, stopPid, type RunningDaemon } from '../scripts/daemon.js';
import { clcQuery, items, type Doc } from './clcQuery.js';
import { measured, type CaseResult } from './report.js';

const SUBNET = '127.0.86';
const CONTROLLER = `${SUBNET}.254`;
/** Ferry's two hosts, then the baseline's two (simhv only: no NC runs there). */
const HOSTS = [1, 2, 3, 4].map((i) => `${SUBNET}.${i}`) as [string, string, string, string];
const TYPE = 'm1.small';
const ROOT = resolve(import.meta.dirname, '..', '..');


export interface MigrationSimResult {
  readonly ferryMs: number;
  readonly baselineMs: number;
  readonly pairs: number;
}

export async function migrationSim(pairs: number): Promise<MigrationSimResult> {
  const baseDir = mkdtempSync(join(tmpdir(), 'ferry-bench-migration-'));
  const layout: CloudLayoutOptions = { baseDir, controllerHost: CONTROLLER, nodeHosts: [...HOSTS] };
  ensureCloudPki(layout);
  const specs = cloudLayout(layout);
  const running: RunningDaemon[] = [];
  const drivers: SimDriver[] = [];
  try {
    const wanted = specs.filter((s) => !s.name.startsWith('nc-') || s.name === `nc-${HOSTS[0]}` || s.name === `nc-${HOSTS[1]}`)
      .filter((s) => !s.name.startsWith('heartbeat-'));
    for (const s of wanted) running.push(await spawnDaemon(s, { root: ROOT, logFile: join(baseDir, 'logs', `${s.name}.log`) }));
    const q = clcQuery(clcUrl(CONTROLLER), join(baseDir, 'clc'), 'migration-sim');
    const until = async <T>(what: string, look: () => Promise<T | undefined>, everyMs = 20, limitMs = 180_000): Promise<T> => {
      const deadline = Date.now() + limitMs;
      for (;;) {
        const v = await look();
        if (v !== undefined) return v;
        if (Date.now() > deadline) throw new Error(`migration-sim bench: ${what} within ${limitMs / 1000} s`);
        await new Promise((r) => setTimeout(r, everyMs));
      }
    };
    // The guest: one instance on host 1 (host 2 disabled while it starts).
    const partition = await until('a node listed', async () => {
      const nodes = items(((await q({ Action: 'DescribeNodes' })).nodeSet as Doc | undefined)?.item);
      return nodes.length >= 2 ? String(nodes[0]!.partition) : undefined;
    }, 250);
    await q({ Action: 'DisableService', Type: 'node', Host: HOSTS[1], Partition: partition });
    const run = await q({ Action: 'RunInstances', ImageId: 'emi-00000001', InstanceType: TYPE, MinCount: '1', MaxCount: '1' });
    const instanceId = String(items((run.instancesSet as Doc).item)[0]!.instanceId);
    await until('the guest running', async () => {
      const r = items(((await q({ Action: 'DescribeInstances', 'InstanceId.1': instanceId })).reservationSet as Doc | undefined)?.item);
      const inst = items((r[0]?.instancesSet as Doc | undefined)?.item)[0];
      return (inst?.instanceState as Doc | undefined)?.name === 'running' ? true : undefined;
    }, 100);
    await q({ Action: 'EnableService', Type: 'node', Host: HOSTS[1], Partition: partition });
    await until('host 2 enabled in the CC\'s view', async () => {
      const nodes = items(((await q({ Action: 'DescribeNodes' })).nodeSet as Doc | undefined)?.item);
      return nodes.some((x) => x.host === HOSTS[1] && x.nodeState === 'enabled') ? true : undefined;
    }, 250);

    // The baseline's guest on host 3, of the same size.
    const vm = findVmType(TYPE)!;
    const spec: DomainSpec = { id: 'i-bbbb0001', imageId: 'emi-00000001', resources: { cores: vm.cores, memoryMiB: vm.memoryMiB, diskGiB: vm.diskGiB } };
    const driverOf = (h: string): SimDriver => new SimDriver({ socketPath: simSocketOf(layout, h) });
    const b3 = driverOf(HOSTS[2]);
    const b4 = driverOf(HOSTS[3]);
    drivers.push(b3, b4);
    await b3.connect();
    await b4.connect();
    await b3.create(spec);
    const issuer = caCredentialIssuer(loadMigrationCa(certsDirOf(layout)), systemClock);

    let ferryAt = HOSTS[0] as string;
    let baseAt = HOSTS[2] as string;
    const ferryRound = async (): Promise<number> => {
      const to = ferryAt === HOSTS[0] ? HOSTS[1] : HOSTS[0];
      const t0 = performance.now();
      const m = await q({ Action: 'MigrateInstances', InstanceId: instanceId, 'DestinationHost.1': to });
      const id = String(m.migrationId);
      const state = await until('the migration final', async () => {
        const mig = items(((await q({ Action: 'DescribeMigrations', 'MigrationId.1': id })).migrationSet as Doc | undefined)?.item)[0];
        return mig && mig.state !== 'active' ? String(mig.state) : undefined;
      });
      const ms = performance.now() - t0;
      if (state !== 'completed') throw new Error(`migration-sim bench: ${id} ended ${state}`);
      ferryAt = to;
      return ms;
    };
    let round = 0;
    const baselineRound = async (): Promise<number> => {
      const [src, dst] = baseAt === HOSTS[2] ? [b3, b4] : [b4, b3];
      const to = baseAt === HOSTS[2] ? HOSTS[3] : HOSTS[2];
      const migrationId = `mig-b${(++round).toString(16).padStart(7, '0')}`;
      const req = { migrationId, instanceId: spec.id, generation: 0, lifetimeMs: 600_000 };
      const dstCred = await issuer.issue({ ...req, side: 'destination', host: to, peerHost: baseAt });
      const srcCred = await issuer.issue({ ...req, side: 'source', host: baseAt, peerHost: to });
      const t0 = performance.now();
      // The hypervisor's migration key, as the NCs form it: <migration id>-<instance id>.
      const key = `${migrationId}-${spec.id}`;
      await dst.prepareIncoming(spec, key, dstCred);
      await src.migrateOut(spec.id, { migrationId: key, destinationUri: `https://${to}:16514`, credential: srcCred });
      const ms = performance.now() - t0;
      baseAt = to;
      return ms;
    };
    // One of each first (connections, JIT), not counted.
    await ferryRound();
    await baselineRound();
    const f: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < pairs; i++) {
      f.push(await ferryRound());
      b.push(await baselineRound());
    }
    const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    return { ferryMs: median(f), baselineMs: median(b), pairs };
  } finally {
    for (const d of drivers) await d.close();
    for (const d of running.reverse()) await stopPid(d.pid);
    // FERRY_BENCH_KEEP=1 keeps the cloud's state and logs (each daemon's, with FERRY_LOG_LEVEL=debug if wanted).
    if (process.env.FERRY_BENCH_KEEP === '1') console.log(`migration-sim: kept ${baseDir}`);
    else rmSync(baseDir, { recursive: true, force: true });
  }
}

export async function migrationSimCase(quick: boolean): Promise<CaseResult> {
  const r = await migrationSim(quick ? 5 : 11);
  return measured({
    name: 'migration-sim',
    what: `one live migration of an ${TYPE} CLC → CC → NCs over mutual TLS, MigrateInstances to completed (${r.pairs} alternating pairs, medians) / the simulated hypervisor's job alone with the same TLS credentials`,
    ferry: r.ferryMs, baseline: r.baselineMs, unit: 'ms', target: 1.05, better: 'lower',
  });
}
