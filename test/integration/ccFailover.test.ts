/**
 * CC replicas on etcd (issue 21), as real processes: a three-member etcd on 127.0.97.1-3, two CC replicas
 * of cluster01 at 127.0.96.254:19860/19861 (one view in etcd, one leader), one CLC at :19870 that knows
 * both (--clusters cluster01=A,B), and three NCs (:19875) on simulated hypervisors at 127.0.96.1-3 that
 * push their events to both (--cc-url A,B). The leader CC is killed with -9 during a four-instance drain:
 * the other takes over within twice the lease TTL, the drain completes through the CLC (which follows the
 * new leader), every instance runs exactly once (each NC's domains), and a command carrying the old
 * leader's epoch is refused by an NC that has seen the new one. Driven by polling with generous deadlines.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import xml2js from 'xml2js';
import { readCredentialsFile, type Credentials } from '../../shared/auth/credentialsFile.js';
import { signQuery } from '../../shared/auth/sign.js';
import { namedLeaderOf } from '../../shared/leader/leaderRouting.js';
import { CC_PATH, NC_PATH } from '../../shared/wire/transport.js';
import { withFlags as variant, type ProcessSpec } from '../../scripts/cloudLayout.js';
import { spawnDaemon, stopPid, type RunningDaemon } from '../../scripts/daemon.js';
import { etcdInstalled, startEtcdCluster, type EtcdCluster } from '../../scripts/etcdCluster.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';
import { arr, runningCopies } from '../helpers/cloudApi.js';
import { until } from '../helpers/clcReplicas.js';
import { wireFaultOf as faultOf } from '../helpers/codeOf.js';
import { expectDrainedOnce } from '../helpers/drainOutcome.js';

const PREFIX = 'it-ccfailover/';
const TTL_S = 4;
const NC_PORT = 19875;
const CLC_PORT = 19870;
const CCS = [19860, 19861].map((port, i) => ({ name: `cc-${'ab'[i]}`, port, url: `https://127.0.96.254:${port}` }));
const CC_URLS = CCS.map((c) => c.url).join(',');
const VM_TYPES = [{ name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 }];

// 256 MiB guests at time-scale 1 take ~3 s each; one at a time from the source: a drain of 4 lasts ~12 s.
const cloud = new TestCloud(96, 3, { simArgs: ['--time-scale', '1', '--cores', '4', '--memory-mib', '2048', '--disk-gib', '100'] });
const [n1, n2] = cloud.nodeHosts as [string, string, string];
const clcUrl = `http://${cloud.controller}:${CLC_PORT}/services/Eucalyptus`;

describe.skipIf(!etcdInstalled())('CC replicas: kill -9 of the leader CC during a drain (real 3-member etcd)', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let creds: Credentials;
  const running = new Map<string, RunningDaemon>();

  async function start(spec: ProcessSpec): Promise<void> {
    running.set(spec.name, await spawnDaemon(spec, { root: ROOT, logFile: join(cloud.baseDir, 'logs', `${spec.name}.log`) }));
  }

  async function startCc(c: (typeof CCS)[number]): Promise<void> {
    mkdirSync(join(cloud.baseDir, c.name), { recursive: true, mode: 0o700 });
    await start(variant(cloud.spec('cc'), c.name, {
      '--port': String(c.port), '--state-dir': join(cloud.baseDir, c.name), '--nc-port': String(NC_PORT), '--poll-interval-ms': '1000',
      '--max-migrations-per-source': '1', '--max-migrations-per-destination': '1',
      '--store': 'etcd', '--etcd-endpoints': etcd.endpoints.join(','), '--etcd-prefix': PREFIX, '--advertise-url': c.url, '--leader-ttl-seconds': String(TTL_S),
    }));
  }

  async function query(params: Record<string, string>): Promise<{ status: number; text: string; doc: any }> {
    const signed = signQuery({ Version: '2013-02-01', ...params }, { ...creds, url: clcUrl, now: Date.now() });
    const res = await fetch(clcUrl, { method: 'POST', headers: signed.headers, body: signed.body });
    const text = await res.text();
    return { status: res.status, text, doc: await xml2js.parseStringPromise(text, { explicitArray: false }) };
  }

  async function ok(params: Record<string, string>): Promise<any> {
    const r = await query(params);
    if (r.status !== 200) throw new Error(`${params.Action} → ${r.status}: ${r.text}`);
    return r.doc[`${params.Action}Response`];
  }

  /** The leader as etcd holds it: the oldest key under the partition's election prefix (its value, its epoch). */
  async function leaderInEtcd(): Promise<{ url: string; epoch: string } | undefined> {
    const res = await client.getAll().prefix(`${PREFIX}cc/cluster01/election/`).sort('Create', 'Ascend').exec();
    const kv = res.kvs[0];
    return kv === undefined ? undefined : { url: kv.value.toString(), epoch: kv.create_revision };
  }


  const asClc = () => cloud.tierClient(CC_PATH, 'clc');
  const asCc = () => cloud.tierClient(NC_PATH, 'cc', cloud.controller);
  const ncUrl = (host: string): string => `https://${host}:${NC_PORT}`;

  beforeAll(async () => {
    etcd = await startEtcdCluster({ addrs: ['127.0.97.1', '127.0.97.2', '127.0.97.3'], clientPort: 19850, peerPort: 19851 });
    client = etcd.client();
    await cloud.start(cloud.names().filter((n) => n.startsWith('simhv-')));
    for (const h of cloud.nodeHosts) await start(variant(cloud.spec(`nc-${h}`), `nc-${h}`, { '--port': String(NC_PORT), '--cc-url': CC_URLS }));
    for (const c of CCS) await startCc(c);
    await start(variant(cloud.spec('clc'), 'clc', { '--port': String(CLC_PORT), '--clusters': `cluster01=${CC_URLS}`, '--ha-tick-ms': '500', '--events-poll-ms': '500' }));
    creds = await readCredentialsFile(cloud.credentialsFile());
  }, 300_000);

  afterAll(async () => {
    for (const d of [...running.values()].reverse()) await stopPid(d.pid, 0, 'SIGKILL');
    await cloud.destroy();
    await etcd?.stop();
  });

  it('one CC leads; the follower serves reads and refuses a change with NotLeader naming the leader', async () => {
    const leader = (await until('a CC leader in etcd', leaderInEtcd, (v) => v !== undefined && CCS.some((c) => c.url === v.url)))!;
    const follower = CCS.find((c) => c.url !== leader.url)!;
    const nodes = await asClc().call(follower.url, 'ccDescribeNodes', {});
    expect(arr<any>((nodes as any).nodes).length).toBe(3);
    const refused = await asClc().call(follower.url, 'ccModifyNode', { host: n2, stateName: 'enabled', vmTypes: VM_TYPES }).then(() => undefined, faultOf);
    expect(refused?.code).toBe('NotLeader');
    expect(namedLeaderOf(refused?.message ?? '')).toBe(leader.url);
  });

  it('kill -9 of the leader CC during a drain: the other takes over within 2×TTL, the drain completes, no instance lost or doubled, the old epoch is refused', async () => {
    const first = (await until('a CC leader in etcd', leaderInEtcd, (v) => v !== undefined))!;
    // Four instances on n1: the other hosts disabled while they start (through the CLC, which routes to the leader).
    const others = cloud.nodeHosts.filter((h) => h !== n1);
    for (const h of others) await ok({ Action: 'DisableService', Type: 'NODE', Host: h });
    const run = await ok({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '4', MaxCount: '4' });
    const ids = arr<any>(run.instancesSet.item).map((i) => i.instanceId as string);
    for (const h of others) await ok({ Action: 'EnableService', Type: 'NODE', Host: h });
    const before = await runningCopies(cloud);
    for (const id of ids) expect(before.get(id), id).toEqual([n1]);

    const migrationId = (await ok({ Action: 'MigrateInstances', SourceHost: n1 })).migrationId as string;
    expect(migrationId).toMatch(/^mig-[0-9a-f]{8}$/);
    // Mid-drain: the plan is not finished when its CC dies.
    const during = arr<any>((await ok({ Action: 'DescribeMigrations', 'MigrationId.1': migrationId })).migrationSet?.item)[0];
    expect(during?.state).toBe('active');

    const named = arr<any>((await ok({ Action: 'DescribeServices', ByServiceType: 'cluster' })).serviceStatuses?.item);
    expect(named.map((s) => `${s.serviceId.name} ${s.localState} ${s.serviceId.uri}`)).toEqual([
      `cluster01 ENABLED ${first.url}${CC_PATH}`, ...CCS.filter((c) => c.url !== first.url).map((c) => `cluster01@127.0.96.254-${c.port} DISABLED ${c.url}${CC_PATH}`)]);
    const victim = CCS.find((c) => c.url === first.url)!;
    const survivor = CCS.find((c) => c.url !== first.url)!;
    const killedAt = Date.now();
    await stopPid(running.get(victim.name)!.pid, 0, 'SIGKILL');
    running.delete(victim.name);

    // The survivor serves a change (an idempotent enable of a destination, which it sends to n2 with its epoch).
    await until('the surviving CC serving changes', () => asClc().call(survivor.url, 'ccModifyNode', { host: n2, stateName: 'enabled', vmTypes: VM_TYPES }), (r) => !(r instanceof Error));
    const tookOverMs = Date.now() - killedAt;
    const second = (await leaderInEtcd())!;
    console.log(`CC leader ${first.url} (epoch ${first.epoch}) killed; ${second.url} (epoch ${second.epoch}) serves changes ${tookOverMs} ms later (lease TTL ${TTL_S} s)`);
    expect(second.url).toBe(survivor.url);
    expect(BigInt(second.epoch) > BigInt(first.epoch)).toBe(true);
    expect(tookOverMs).toBeLessThanOrEqual(2 * TTL_S * 1000);
    // DescribeServices names the new leader: the partition's service is it, the killed one a silent standby.
    const services = await until('DescribeServices naming the new CC leader', async () => arr<any>((await ok({ Action: 'DescribeServices', ByServiceType: 'cluster' })).serviceStatuses?.item),
      (v) => Array.isArray(v) && v.some((s) => s.serviceId.name === 'cluster01' && s.localState === 'ENABLED' && String(s.serviceId.uri).startsWith(`${survivor.url}/`)));
    expect(services.map((s: any) => `${s.serviceId.name} ${s.localState}`)).toEqual(['cluster01 ENABLED', `cluster01@127.0.96.254-${victim.port} NOTREADY`]);

    // The drain completes, seen through the CLC (its route follows the new leader).
    const done = await until('the drain to finish', async () => arr<any>((await ok({ Action: 'DescribeMigrations', 'MigrationId.1': migrationId })).migrationSet?.item)[0],
      (m) => m !== undefined && m.state !== 'active', 180_000);
    // Each instance runs exactly once, off n1, and nothing else runs: every NC's hypervisor is asked.
    const copies = await expectDrainedOnce(cloud, done, ids, n1);
    expect([...copies.keys()].sort()).toEqual([...ids].sort());

    // A command carrying the deposed leader's epoch is refused by an NC that has seen the new one; the new epoch is taken.
    const stale = await asCc().call(ncUrl(n2), 'ncModifyNode', { stateName: 'disabled', leaderEpoch: first.epoch }).then(() => undefined, faultOf);
    expect(stale?.code).toBe('StaleLeaderEpoch');
    // Nothing changed there: the node itself still says enabled.
    expect((await asCc().call(ncUrl(n2), 'ncDescribeResource', {}) as any).nodeState).toBe('enabled');
    await asCc().call(ncUrl(n2), 'ncModifyNode', { stateName: 'enabled', leaderEpoch: second.epoch });

    // The CLC still runs changes through the new leader: the drained node back in service, then the instances ended.
    await ok({ Action: 'EnableService', Type: 'NODE', Host: n1 });
    await ok({ Action: 'TerminateInstances', ...Object.fromEntries(ids.map((id, i) => [`InstanceId.${i + 1}`, id])) });
    await until('no copy left on any hypervisor', () => runningCopies(cloud), (m) => m instanceof Map && ids.every((id) => !m.has(id)));
  }, 400_000);
});
