/**
 * A cloud of thousands of simulated hosts under a real CC and CLC (processes from dist/, mutual TLS):
 * the hosts run in scale-mode processes (nc/scale/main.ts, each host a real NC on its own address
 * 127.64.X.Y with its own certificate), the CC polls every host, and host HA is on for all of them
 * with a BMC entry each (naming a fence agent that is not installed: a power action would fail).
 * Started, it answers once HA has every host AVAILABLE. Used by the supervision bench
 * (bench/supervisionCase.ts) and the scale check (scripts/scaleCheck.ts). Tooling: its errors go to
 * the developer's terminal.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { adminQuery, items, until, type AdminQuery, type Doc } from './adminQuery.js';
import { certsDirOf } from './cloudLayout.js';
import { spawnDaemon, stopPid, type RunningDaemon } from './daemon.js';
import { ensureScalePki, scaleHosts, seedBmcStore, startScaleProcess, type ScaleProcess } from './scaleFarm.js';

export interface ScaleCloudOptions {
  /** Names the cloud in errors and its temporary directory. */
  readonly label: string;
  readonly hostCount: number;
  /** The first 127.64.X block of the hosts' addresses (254 hosts per block). */
  readonly firstBlock: number;
  /** The CC's and CLC's address. */
  readonly controller: string;
  readonly ports: { readonly cc: number; readonly clc: number; readonly nc: number; readonly ccMetrics: number; readonly clcMetrics: number };
  readonly pollMs: number;
  /** ConfigureHAForCluster's MaxUnhealthy: the storm gate's bound. */
  readonly maxUnhealthy: number;
  /** Hosts per scale-mode process (default HOSTS_PER_PROCESS). */
  readonly hostsPerProcess?: number;
  /** Node options of the CC and the CLC (a CPU profile, say). */
  readonly nodeArgs?: readonly string[];
  /** Their environment (a log level). */
  readonly env?: NodeJS.ProcessEnv;
  /** How long to wait for HA to have every host AVAILABLE. */
  readonly availableWithinMs: number;
}

/** The CC's poll period the bench and the check supervise at (issue 19: 10 s). */
export const SCALE_POLL_MS = 10_000;
/** Hosts the bench and the check fail at once, and the storm gate's bound: below the burst, so that it must hold. */
export const SCALE_BURST = 100;
export const SCALE_MAX_UNHEALTHY = 50;

/** Host HA states in which a host is being remediated: the storm gate keeps hosts out of them beyond its bound. */
export const REMEDIATING_STATES: ReadonlySet<string> = new Set(['RECOVERING', 'REMEDIATING', 'FENCING', 'FENCED']);

/** A DescribeHostHA record held by the storm gate: its recovery or fence `blocked`, or its owed drain `heldBy` it. */
export function isHeld(r: Doc): boolean {
  const owed = r.owedRepair as Doc | undefined;
  return (r.blocked !== undefined && r.blocked !== '') || (owed?.heldBy !== undefined && owed.heldBy !== '');
}

export interface ScaleCloud {
  readonly baseDir: string;
  readonly hosts: readonly string[];
  readonly partition: string;
  readonly cc: RunningDaemon;
  readonly clc: RunningDaemon;
  readonly farms: readonly ScaleProcess[];
  readonly q: AdminQuery;
  /** The CLC's host HA records (DescribeHostHA), of these hosts or of the whole partition. */
  haStates(only?: readonly string[]): Promise<Doc[]>;
  /** Fails these hosts at once (each in its own process); answers when each was failed (epoch ms). */
  fail(hosts: readonly string[]): Promise<Map<string, number>>;
  /** Boots these failed hosts again, empty. */
  revive(hosts: readonly string[]): Promise<void>;
  /** Stops every process it started; FERRY_BENCH_KEEP=1 keeps the state and logs. */
  close(): Promise<void>;
}

const PARTITION = 'cluster01';
/**
 * Hosts per scale-mode process (three handles each: listener, the CC's connection, the notifier's).
 * One process of 2,000 starved on two cores (its event loop, not the CPU: TLS handshakes of 2,000
 * hosts in one loop), so that the CC found hundreds of live hosts unreachable: more, smaller ones.
 */
export const HOSTS_PER_PROCESS = 500;
const ROOT = resolve(import.meta.dirname, '..', '..');
/**
 * How long the CC and the CLC may take to listen: at 10,000 hosts they start while 20 scale processes
 * bring up 10,000 TLS servers beside them on two cores, and the CLC reads 10,000 hosts' BMC records;
 * the default 45 s was once too short there.
 */
const READY_TIMEOUT_MS = 300_000;

export async function startScaleCloud(o: ScaleCloudOptions): Promise<ScaleCloud> {
  const baseDir = mkdtempSync(join(tmpdir(), `ferry-${o.label}-`));
  const hosts = scaleHosts(o.hostCount, o.firstBlock);
  const ccUrl = `https://${o.controller}:${o.ports.cc}`;
  const clcDir = join(baseDir, 'clc');
  const storageDir = join(baseDir, 'storage');
  mkdirSync(clcDir, { recursive: true });
  mkdirSync(storageDir, { recursive: true });
  const farms: ScaleProcess[] = [];
  const daemons: RunningDaemon[] = [];
  const close = async (): Promise<void> => {
    for (const d of [...daemons].reverse()) await stopPid(d.pid, 20_000);
    for (const f of farms) await f.stop();
    if (process.env.FERRY_BENCH_KEEP === '1') console.log(`${o.label}: kept ${baseDir}`);
    else rmSync(baseDir, { recursive: true, force: true });
  };
  try {
    ensureScalePki(baseDir, o.controller, hosts);
    seedBmcStore(clcDir, hosts);
    const nodeArgs = o.nodeArgs ?? [];
    const env = o.env ?? {};
    // 10,000 addresses do not fit in one argument (E2BIG): the CC reads them from a file.
    const nodesFile = join(baseDir, 'nodes');
    writeFileSync(nodesFile, `${hosts.join('\n')}\n`);
    // The CC first: the hosts tell it they are up as they start.
    daemons.push(await spawnDaemon({
      name: 'cc', entry: 'dist/cc/main.js', ready: 'cc listening on https://',
      args: ['--host', o.controller, '--port', String(o.ports.cc), '--partition', PARTITION, '--nc-port', String(o.ports.nc), '--state-dir', join(baseDir, 'cc'),
        '--tls-dir', certsDirOf({ baseDir }), '--poll-interval-ms', String(o.pollMs), '--nodes-file', nodesFile, '--metrics-port', String(o.ports.ccMetrics)],
    }, { root: ROOT, logFile: join(baseDir, 'logs', 'cc.log'), raiseOpenFileLimit: true, nodeArgs, env, readyTimeoutMs: READY_TIMEOUT_MS }));
    const per = o.hostsPerProcess ?? HOSTS_PER_PROCESS;
    for (let i = 0; i * per < hosts.length; i++) {
      farms.push(await startScaleProcess({
        root: ROOT, baseDir, name: `scale-${i}`, hosts: hosts.slice(i * per, (i + 1) * per), port: o.ports.nc, ccUrl, storageDir, env,
      }));
    }
    daemons.push(await spawnDaemon({
      name: 'clc', entry: 'dist/clc/main.js', ready: 'clc listening on http://',
      args: ['--host', o.controller, '--port', String(o.ports.clc), '--state-dir', clcDir, '--clusters', `${PARTITION}=${ccUrl}`, '--storage-dir', storageDir,
        '--tls-dir', certsDirOf({ baseDir }), '--metrics-port', String(o.ports.clcMetrics)],
    }, { root: ROOT, logFile: join(baseDir, 'logs', 'clc.log'), raiseOpenFileLimit: true, nodeArgs, env, readyTimeoutMs: READY_TIMEOUT_MS }));
    const [cc, clc] = daemons as [RunningDaemon, RunningDaemon];
    const q = adminQuery(o.label, baseDir, `http://${o.controller}:${o.ports.clc}/services/Eucalyptus`);

    await q({
      Action: 'ConfigureHAForCluster', Partition: PARTITION, MaxUnhealthy: String(o.maxUnhealthy),
      // Short activity checks: failed hosts reach the remediation decision (held by the gate) soon after they fail.
      ActivityCheckInitialDelayMs: '1000', ActivityCheckIntervalMs: '2000', ActivityCheckMaxAttempts: '3', ActivityCheckTimeoutMs: '5000',
      // The BMC power watch would run a fence agent per host; once a day here (the first one at enable).
      PowerCheckIntervalMs: '86400000',
    });
    await q({ Action: 'EnableHAForCluster', Partition: PARTITION });
    const haStates = async (only?: readonly string[]): Promise<Doc[]> => items(((await q({
      Action: 'DescribeHostHA', MaxEvents: '0', ...(only ? Object.fromEntries(only.map((h, i) => [`Host.${i + 1}`, h])) : { Partition: PARTITION }),
    })).hostSet as Doc | undefined)?.item);
    await until(o.label, 'every host AVAILABLE to HA', async () => {
      const recs = await haStates();
      return recs.length === o.hostCount && recs.every((r) => r.state === 'AVAILABLE') ? true : undefined;
    }, 5000, o.availableWithinMs);
    const inFarms = (some: readonly string[]): [ScaleProcess, string[]][] => farms
      .map((f): [ScaleProcess, string[]] => [f, some.filter((h) => f.hosts.includes(h))])
      .filter(([, mine]) => mine.length > 0);
    return {
      baseDir, hosts, partition: PARTITION, cc, clc, farms, q, haStates, close,
      async fail(some) {
        const at = new Map<string, number>();
        await Promise.all(inFarms(some).map(async ([f, mine]) => {
          const t = await f.fail(mine);
          for (const h of mine) at.set(h, t);
        }));
        return at;
      },
      async revive(some) {
        await Promise.all(inFarms(some).map(([f, mine]) => f.revive(mine)));
      },
    };
  } catch (e) {
    await close();
    throw e;
  }
}
