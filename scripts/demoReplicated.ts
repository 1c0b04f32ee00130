/**
 * The replicated demo (issue 21; README "Replicated demo"): a three-member etcd (scripts/etcd-lab.sh),
 * three CLC replicas and two CC replicas on it, three NCs on the simulated hypervisor and a few
 * instances, as detached daemons under .ferry-demo-replicated/. `failover` shows a leader change
 * during a drain: it drains the busiest host, kill -9s the leading CLC and the leading CC, prints who
 * took over and how long it took, waits for the drain and checks on the hypervisors that every
 * instance runs exactly once (exit 1 otherwise); then it restarts the killed replicas as standbys.
 *   node dist/scripts/demoReplicated.js start|stop|status|failover|reset
 * Addresses and ports (defaults beside demo.sh's 127.0.0.1/127.0.1.x, never on them): FERRY_REPDEMO_DIR,
 * FERRY_REPDEMO_CONTROLLER, FERRY_REPDEMO_NODES, FERRY_REPDEMO_ETCD (comma-separated), FERRY_REPDEMO_PORT_BASE;
 * FERRY_REPDEMO_LEADER_TTL (seconds, default 4: the daemons' own default is 10) to time a failover with another lease.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { certsDirOf, ensureCloudPki, simSocketOf } from './cloudLayout.js';
import { adminRequest, DemoDaemons, runDemoCommand } from './demoDaemons.js';
import { isAlive } from './daemon.js';
import { drainProblems } from './drainVerdict.js';
import { REPLICATED_DEFAULTS, replicatedCloud, type Replica } from './replicatedLayout.js';
import { SimDriver } from '../nc/hypervisor/sim/simDriver.js';
import { DEFAULT_TIMEOUT_MS, QueryClient } from '../clc/cli/queryClient.js';
import { readResponse, type Reading } from '../clc/cli/responses.js';
import { readCredentialsFile } from '../shared/auth/credentialsFile.js';

const execFileAsync = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const env = process.env;
const list = (v: string | undefined, d: string): string[] => (v ?? d).split(',').map((s) => s.trim()).filter((s) => s !== '');
/** FERRY_REPDEMO_LEADER_TTL: whole seconds within the daemons' --leader-ttl-seconds bounds (2-600). */
function leaderTtl(v: string | undefined): number {
  if (v === undefined) return REPLICATED_DEFAULTS.leaderTtlSeconds;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 2 || n > 600) {
    process.stderr.write(`demo: FERRY_REPDEMO_LEADER_TTL must be whole seconds from 2 to 600, not ${JSON.stringify(v)}\n`);
    process.exit(2);
  }
  return n;
}
const base = resolve(env.FERRY_REPDEMO_DIR ?? join(root, '.ferry-demo-replicated'));
const cloud = replicatedCloud({
  baseDir: base,
  controllerHost: env.FERRY_REPDEMO_CONTROLLER ?? '127.0.2.254',
  nodeHosts: list(env.FERRY_REPDEMO_NODES, '127.0.2.1,127.0.2.2,127.0.2.3'),
  etcdAddrs: list(env.FERRY_REPDEMO_ETCD, '127.0.3.1,127.0.3.2,127.0.3.3'),
  portBase: Number(env.FERRY_REPDEMO_PORT_BASE ?? '8800'),
  leaderTtlSeconds: leaderTtl(env.FERRY_REPDEMO_LEADER_TTL),
});
const daemons = new DemoDaemons({ root, runDir: join(base, 'run'), logDir: join(base, 'logs') });
const PATH = '/services/Eucalyptus';
const TTL_S = cloud.leaderTtlSeconds;
const DEMO_INSTANCES = 6;
/** Written by the first CLC replica at its first start and copied to the others: one set of admin keys per region. */
const credentialsPath = join(cloud.stateDir('clc-a'), 'admin.credentials');
const apiOf = (r: Replica): string => `${r.url}${PATH}`;

/** Demo tooling: what went wrong, for the terminal (exit 1). */
class DemoFailure extends Error {}

/** One admin action at replica `r` as the CLI sends and reads it (a follower's NotLeader is followed once). */
async function action<K extends 'DescribeServices' | 'DescribeInstances' | 'RunInstances' | 'MigrateInstances' | 'DescribeMigrations'>(
  r: Replica, kind: K, params: Record<string, string> = {},
): Promise<Reading<K>> {
  const client = new QueryClient({ url: apiOf(r), credentials: await readCredentialsFile(credentialsPath), timeoutMs: DEFAULT_TIMEOUT_MS });
  return readResponse(kind, await client.call(kind, params), apiOf(r));
}

async function migration(r: Replica, id: string): Promise<Reading<'DescribeMigrations'>['migrationSet'][number] | undefined> {
  return (await action(r, 'DescribeMigrations', { 'MigrationId.1': id })).migrationSet[0];
}

/** Polls `read` every 250 ms until `good` (a rejection is a value too); fails after `ms` naming `what`. */
async function until<T>(what: string, read: () => Promise<T>, good: (v: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read().catch((e: unknown) => e as T);
    if (good(v)) return v;
    if (Date.now() > deadline) throw new DemoFailure(`${what}: not within ${ms / 1000} s (last: ${v instanceof Error ? v.message : JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface ServicesView {
  /** The `clc` service's replica (the leading CLC), if one leads. */
  readonly clc?: Replica;
  /** The partition's cluster service's replica (the leading CC), if one leads. */
  readonly cc?: Replica;
  readonly rows: string[];
}

/** DescribeServices at `at`: who leads, as the product says it. */
async function services(at: Replica): Promise<ServicesView> {
  const items = (await action(at, 'DescribeServices')).serviceStatuses;
  const leaderOf = (type: string, name: string, of: readonly Replica[]): Replica | undefined => {
    const s = items.find((i) => i.serviceId.type === type && i.serviceId.name === name && i.localState === 'ENABLED');
    return s === undefined ? undefined : of.find((r) => String(s.serviceId.uri).startsWith(r.url + '/'));
  };
  const clc = leaderOf('eucalyptus', 'clc', cloud.clcs);
  const cc = leaderOf('cluster', cloud.layout.partition ?? 'cluster01', cloud.ccs);
  return {
    ...(clc ? { clc } : {}), ...(cc ? { cc } : {}),
    rows: items.filter((i) => i.serviceId.type !== 'node').map((i) => `${i.serviceId.type.padEnd(10)} ${i.serviceId.name.padEnd(28)} ${i.localState.padEnd(9)} ${i.serviceId.uri}`),
  };
}

/** DescribeServices at the first CLC replica that answers with a leading CLC and CC. */
async function leaders(among: readonly Replica[] = cloud.clcs, ms = 90_000): Promise<Required<Pick<ServicesView, 'clc' | 'cc'>> & ServicesView> {
  const read = async (): Promise<ServicesView> => {
    let last: unknown;
    for (const r of among) {
      try {
        const v = await services(r);
        if (v.clc !== undefined && v.cc !== undefined) return v;
        last = v;
      } catch (e) {
        last = e;
      }
    }
    throw last instanceof Error ? last : new Error(`no leaders yet: ${JSON.stringify(last)}`);
  };
  const v = await until('a leading CLC and a leading CC named by DescribeServices', read, (x) => !(x instanceof Error) && x.clc !== undefined && x.cc !== undefined, ms);
  if (v.clc === undefined || v.cc === undefined) throw new DemoFailure('no leaders'); // until() returned only once both are there
  return { ...v, clc: v.clc, cc: v.cc };
}

/** Where each VM runs according to the hypervisors (running copies only): the ground truth. */
async function runningCopies(): Promise<Map<string, string[]>> {
  const where = new Map<string, string[]>();
  for (const host of cloud.layout.nodeHosts) {
    const driver = new SimDriver({ socketPath: simSocketOf(cloud.layout, host) });
    try {
      for (const d of await driver.list()) if (d.state === 'running') where.set(d.id, [...(where.get(d.id) ?? []), host]);
    } finally {
      await driver.close();
    }
  }
  return where;
}

/** The etcd members etcd-lab.sh started (their pid files) that still run. */
function etcdRunning(): number {
  return cloud.etcd.addrs.filter((_, i) => {
    const f = join(cloud.etcd.dir, `m${i + 1}.pid`);
    return existsSync(f) && isAlive(Number(readFileSync(f, 'utf8')));
  }).length;
}

async function etcdUp(): Promise<void> {
  if (etcdRunning() === cloud.etcd.addrs.length) {
    console.log(`  etcd                 already running (${cloud.etcd.endpoints.join(',')})`);
    return;
  }
  // Members left over from a crash are stopped by their pid files first; their data dirs stay.
  await execFileAsync('bash', [join(root, 'scripts', 'etcd-lab.sh'), 'stop', cloud.etcd.dir]);
  const { stdout } = await execFileAsync('bash', [join(root, 'scripts', 'etcd-lab.sh'), 'start', cloud.etcd.dir, String(cloud.etcd.clientPort), String(cloud.etcd.peerPort), ...cloud.etcd.addrs]);
  console.log(`  ${stdout.trim()}`);
}

async function start(): Promise<void> {
  mkdirSync(base, { recursive: true });
  await etcdUp();
  const pki = ensureCloudPki(cloud.layout);
  if (pki && pki.written.length > 0) console.log(`  cloud PKI            ${pki.written.length} files written to ${certsDirOf(cloud.layout)}`);
  // The replicas' own state directories (their stores live in etcd; the admin keys and tokens here).
  for (const r of [...cloud.ccs, ...cloud.clcs]) mkdirSync(cloud.stateDir(r.name), { recursive: true, mode: 0o700 });
  const [first, ...rest] = cloud.clcs as [Replica, ...Replica[]];
  await daemons.start(cloud.specs.filter((s) => !cloud.clcs.some((c) => c.name === s.name) || s.name === first.name));
  for (const r of rest) copyFileSync(credentialsPath, join(cloud.stateDir(r.name), 'admin.credentials'));
  await daemons.start(cloud.specs.filter((s) => rest.some((c) => c.name === s.name)));
  const led = await leaders();
  // Counted on the hypervisors: a stop powers the simulated hosts off, and their VMs with them.
  const missing = DEMO_INSTANCES - (await runningCopies()).size;
  if (missing > 0) {
    await action(led.clc, 'RunInstances', { ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: String(missing), MaxCount: String(missing) });
    console.log(`  started ${missing} demo instances`);
  }
  console.log(`
Ferry's replicated demo is up: etcd ${cloud.etcd.endpoints.join(',')},
CLC replicas ${cloud.clcs.map((c) => c.url).join(', ')} (leader ${led.clc.url}),
CC replicas ${cloud.ccs.map((c) => c.url).join(', ')} (leader ${led.cc.url}), NCs ${cloud.layout.nodeHosts.join(', ')}.

  export PATH="${join(root, 'bin')}:$PATH" EC2_URL=${apiOf(led.clc)} FERRY_CREDENTIALS=${credentialsPath}
  euca-describe-services --filter-type cluster

A leader change during a drain: scripts/demo.sh replicated failover
Logs: ${join(base, 'logs')}   Stop: scripts/demo.sh replicated stop   Reset: scripts/demo.sh replicated reset`);
}

/** The CLI's environment: this region's URL and admin keys file (keys in the environment would win over it). */
function cliEnv(url: string): NodeJS.ProcessEnv {
  const { EC2_ACCESS_KEY: _a, EC2_SECRET_KEY: _s, ...rest } = process.env;
  return { ...rest, EC2_URL: url, FERRY_CREDENTIALS: credentialsPath };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function failover(): Promise<void> {
  const before = await leaders();
  console.log(`Leaders: CLC ${before.clc.name} (${before.clc.url}), CC ${before.cc.name} (${before.cc.url})`);
  const copies = await runningCopies();
  const ids = [...copies.keys()].sort();
  if (ids.length === 0) throw new DemoFailure('no instance runs: start the demo first (scripts/demo.sh replicated)');
  const doubled = ids.filter((id) => (copies.get(id) ?? []).length > 1);
  if (doubled.length > 0) throw new DemoFailure(`instances already run twice before the drain: ${doubled.join(', ')}`);
  const perHost = new Map(cloud.layout.nodeHosts.map((h) => [h, ids.filter((id) => copies.get(id)?.[0] === h)]));
  const [source, onSource] = [...perHost].sort((a, b) => b[1].length - a[1].length)[0] as [string, string[]];
  console.log(`Draining ${source} (${onSource.length} instances: ${onSource.join(', ')}); ${ids.length} instances in all`);

  const { migrationId } = await action(before.clc, 'MigrateInstances', { SourceHost: source });
  const during = await migration(before.clc, migrationId);
  console.log(`  ${migrationId} is ${during?.state ?? 'unknown'}`);
  if (during?.state !== 'active') throw new DemoFailure(`${migrationId} finished before a leader could be killed (${during?.state}); run failover again`);

  const killedAt = Date.now();
  await daemons.crash(before.clc.name);
  await daemons.crash(before.cc.name);
  console.log(`kill -9: CLC ${before.clc.name} and CC ${before.cc.name}, mid-drain`);

  // A CLC takes over when it serves a change: a harmless tag, tried at every surviving replica.
  const survivors = cloud.clcs.filter((c) => c !== before.clc);
  const tag = { Action: 'CreateTags', 'ResourceId.1': ids[0] as string, 'Tag.1.Key': 'ferry-demo-failover', 'Tag.1.Value': new Date(killedAt).toISOString() };
  const newClc = await until('a surviving CLC replica serving changes', async () => {
    for (const r of survivors) if ((await adminRequest(apiOf(r), credentialsPath, tag).catch(() => undefined))?.status === 200) return r;
    return undefined;
  }, (r) => r !== undefined && !(r instanceof Error), 120_000) as Replica;
  const clcMs = Date.now() - killedAt;
  console.log(`  CLC: ${newClc.name} (${newClc.url}) leads, serving changes ${seconds(clcMs)} after the kill (lease TTL ${TTL_S} s)`);
  const after = await until('DescribeServices naming a new CC leader', () => services(newClc),
    (v) => !(v instanceof Error) && v.cc !== undefined && v.cc !== before.cc && v.clc === newClc, 120_000);
  const ccMs = Date.now() - killedAt;
  console.log(`  CC:  ${after.cc?.name} (${after.cc?.url}) leads, named by DescribeServices ${seconds(ccMs)} after the kill`);

  const done = await until(`${migrationId} to finish`, () => migration(newClc, migrationId),
    (m) => m !== undefined && !(m instanceof Error) && m.state !== 'active', 300_000);
  if (done === undefined) throw new DemoFailure(`${migrationId} is gone`); // until() returned only a defined one
  const items = done.itemSet;
  console.log(`${migrationId} ${done.state}: ${items.map((i) => `${i.instanceId} ${i.state}`).join(', ')}`);

  const now = await runningCopies();
  console.log('Where each instance runs (each host\'s hypervisor asked):');
  for (const id of ids) {
    const hosts = now.get(id) ?? [];
    console.log(`  ${id}  ${hosts.length === 0 ? 'nowhere' : hosts.join(' and ')}${onSource.includes(id) ? ` (was on ${source})` : ''}`);
  }
  const problems = drainProblems({ before: copies, after: now, source, migrationState: done.state });

  console.log(`\neuca-describe-services at the new leader (EC2_URL=${apiOf(newClc)}):`);
  const cli = await execFileAsync(process.execPath, [join(root, 'bin', 'euca-describe-services')], { env: cliEnv(apiOf(newClc)) });
  console.log(cli.stdout.trimEnd().split('\n').filter((l) => !/\snode\s/.test(l)).map((l) => `  ${l}`).join('\n'));
  console.log('with their uris (DescribeServices):');
  for (const row of after.rows) console.log(`  ${row}`);

  console.log(`\nRestarting the killed replicas (they rejoin as standbys):`);
  await daemons.start(cloud.specs.filter((s) => s.name === before.clc.name || s.name === before.cc.name));

  if (problems.length > 0) throw new DemoFailure(`the failover lost or duplicated something:\n  ${problems.join('\n  ')}`);
  console.log(`\nOK: leaders replaced (CLC in ${seconds(clcMs)}, CC in ${seconds(ccMs)}), the drain completed, ${ids.length} instances each run exactly once.`);
}

async function stop(): Promise<void> {
  await daemons.stop(cloud.specs);
  if (existsSync(cloud.etcd.dir)) {
    await execFileAsync('bash', [join(root, 'scripts', 'etcd-lab.sh'), 'stop', cloud.etcd.dir]);
    console.log('  etcd                 stopped');
  }
}

function status(): void {
  daemons.status(cloud.specs);
  console.log(`  etcd                 ${etcdRunning()} of ${cloud.etcd.addrs.length} members running (${cloud.etcd.endpoints.join(',')})`);
}

await runDemoCommand('replicated demo', 'scripts/demo.sh replicated [start|failover|status|stop|reset]', {
  start,
  stop,
  status,
  failover,
  reset: async () => { await stop(); rmSync(base, { recursive: true, force: true }); console.log('  replicated demo state removed'); },
});
