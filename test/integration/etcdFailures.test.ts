/**
 * etcd itself failing under a replicated control plane (issue 21), as real processes: a three-member
 * etcd on 127.0.101.1-3, two CLC replicas (127.0.100.254:20005/20006) and two CC replicas of cluster01
 * (:20001/20002) on it, three NCs (:20010) on simulated hypervisors at 127.0.100.1-3 pushing to both CCs.
 * Host HA is not configured (it stays off): these cases are about the store and the elections.
 *
 * 1. The etcd leader member is killed with -9 during a four-instance drain: nothing stops. The drain
 *    completes, every instance runs exactly once (each NC's hypervisor is asked), and the admin API
 *    keeps answering reads and, once the two members left have elected a leader, changes.
 * 2. Two of three members are killed (quorum lost): a change sent to the CLC leader is refused with a
 *    coded error within a bounded time and nothing changes on any NC; once the leases have run out no
 *    replica leads and every change is NotLeader; reads still answer. The two members restart on their
 *    data dirs: leaders are elected again with larger epochs, the refused change succeeds when retried,
 *    what was acknowledged before the loss is there, and the old CC epoch is refused by an NC.
 * Driven by polling conditions with generous deadlines (a busy 2-core machine).
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCredentialsFile, type Credentials } from '../../shared/auth/credentialsFile.js';
import { CC_PATH, NC_PATH } from '../../shared/wire/transport.js';
import { spawnDaemon, stopPid, type RunningDaemon } from '../../scripts/daemon.js';
import { etcdInstalled, startEtcdCluster, type EtcdCluster, type EtcdMember } from '../../scripts/etcdCluster.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';
import { arr, runningCopies } from '../helpers/cloudApi.js';
import { electedLeader, replicaAction, replicaQuery, startClcReplica, until, type ReplicaReply } from '../helpers/clcReplicas.js';
import { wireFaultOf } from '../helpers/codeOf.js';
import { expectDrainedOnce } from '../helpers/drainOutcome.js';
import { withFlags as variant } from '../../scripts/cloudLayout.js';

const PREFIX = 'it-etcdfail/';
const TTL_S = 4;
/** The replicas' deadline on one etcd call (--etcd-timeout-ms): what bounds a change refused without quorum. */
const ETCD_TIMEOUT_MS = 3000;
const NC_PORT = 20010;
const CCS = [20001, 20002].map((port, i) => ({ name: `cc-${'ab'[i]}`, port, url: `https://127.0.100.254:${port}` }));
const CC_URLS = CCS.map((c) => c.url).join(',');
const CLCS = [20005, 20006].map((port, i) => ({ name: `clc-${'ab'[i]}`, port, url: `http://127.0.100.254:${port}` }));
const VM_TYPES = [{ name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 }];

// 256 MiB guests at time-scale 1 take ~3 s each; one at a time from the source: a drain of 4 lasts ~12 s.
const cloud = new TestCloud(100, 3, { simArgs: ['--time-scale', '1', '--cores', '4', '--memory-mib', '2048', '--disk-gib', '100'] });
const [n1, n2, n3] = cloud.nodeHosts as [string, string, string];

describe.skipIf(!etcdInstalled())('etcd failures under replicated CLC and CC (real 3-member etcd)', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let creds: Credentials;
  const running = new Map<string, RunningDaemon>();

  async function start(name: string, spec: Parameters<typeof spawnDaemon>[0]): Promise<void> {
    running.set(name, await spawnDaemon(spec, { root: ROOT, logFile: join(cloud.baseDir, 'logs', `${name}.log`) }));
  }

  const etcdFlags = (): Record<string, string> => ({
    '--store': 'etcd', '--etcd-endpoints': etcd.endpoints.join(','), '--etcd-prefix': PREFIX,
    '--leader-ttl-seconds': String(TTL_S), '--etcd-timeout-ms': String(ETCD_TIMEOUT_MS),
  });

  const query = (url: string, params: Record<string, string>): Promise<ReplicaReply> => replicaQuery(url, creds, params);
  const ok = (url: string, params: Record<string, string>): Promise<any> => replicaAction(url, creds, params);
  /** A change polled until the replica serves it (the one holding the oldest election key may not have seen its own election yet). */
  const served = (url: string, params: Record<string, string>): Promise<ReplicaReply> => until(`${params.Action} served at ${url}`, () => query(url, params), (r) => !(r instanceof Error) && r.status === 200);
  const codeOfReply = (r: ReplicaReply): string => (r.status === 200 ? 'OK' : String(r.doc?.Response?.Errors?.Error?.Code));

  const clcLeader = async (): Promise<string | undefined> => (await electedLeader(client, PREFIX))?.url;
  /** The CC leader as etcd holds it (the oldest election key of the partition). */
  async function ccLeader(): Promise<{ url: string; epoch: string } | undefined> {
    const res = await client.getAll().prefix(`${PREFIX}cc/cluster01/election/`).sort('Create', 'Ascend').exec();
    const kv = res.kvs[0];
    return kv === undefined ? undefined : { url: kv.value.toString(), epoch: kv.create_revision };
  }

  /** The etcd member that leads the raft group now, asked of each member in turn (etcdctl endpoint status). */
  async function etcdLeaderMember(): Promise<EtcdMember | undefined> {
    for (const m of etcd.members) {
      const one = new Etcd3({ hosts: [m.clientUrl], dialTimeout: 2000, defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 2000 }) });
      try {
        const s = await one.maintenance.status();
        if (s.leader !== '0' && s.leader === s.header.member_id) return m;
      } catch {
        // A member that does not answer is not the leader anyone can reach.
      } finally {
        one.close();
      }
    }
    return undefined;
  }

  const asCc = () => cloud.tierClient(NC_PATH, 'cc', cloud.controller);
  const asClc = () => cloud.tierClient(CC_PATH, 'clc');
  const ncUrl = (host: string): string => `https://${host}:${NC_PORT}`;
  const nodeStates = async (): Promise<Record<string, string>> => Object.fromEntries(await Promise.all(cloud.nodeHosts.map(
    async (h) => [h, String(((await asCc().call(ncUrl(h), 'ncDescribeResource', {})) as any).nodeState)] as const)));

  beforeAll(async () => {
    etcd = await startEtcdCluster({ addrs: ['127.0.101.1', '127.0.101.2', '127.0.101.3'], clientPort: 20020, peerPort: 20021 });
    client = new Etcd3({ hosts: [...etcd.endpoints], dialTimeout: 3000, defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 3000 }) });
    await cloud.start(cloud.names().filter((n) => n.startsWith('simhv-')));
    for (const h of cloud.nodeHosts) await start(`nc-${h}`, variant(cloud.spec(`nc-${h}`), `nc-${h}`, { '--port': String(NC_PORT), '--cc-url': CC_URLS }));
    for (const c of CCS) {
      mkdirSync(join(cloud.baseDir, c.name), { recursive: true, mode: 0o700 });
      await start(c.name, variant(cloud.spec('cc'), c.name, {
        '--port': String(c.port), '--state-dir': join(cloud.baseDir, c.name), '--nc-port': String(NC_PORT), '--poll-interval-ms': '1000',
        '--max-migrations-per-source': '1', '--max-migrations-per-destination': '1', '--advertise-url': c.url, ...etcdFlags(),
      }));
    }
    const settings = { endpoints: etcd.endpoints, prefix: PREFIX, ttlSeconds: TTL_S, set: { '--clusters': `cluster01=${CC_URLS}`, '--etcd-timeout-ms': String(ETCD_TIMEOUT_MS) } };
    const [a, b] = CLCS as [(typeof CLCS)[number], (typeof CLCS)[number]];
    running.set(a.name, await startClcReplica(cloud, a, settings));
    // One set of admin keys for the region: every replica's state dir holds the same file (docs/OPERATIONS.md).
    const keys = join(cloud.baseDir, a.name, 'admin.credentials');
    creds = await readCredentialsFile(keys);
    mkdirSync(join(cloud.baseDir, b.name), { recursive: true, mode: 0o700 });
    copyFileSync(keys, join(cloud.baseDir, b.name, 'admin.credentials'));
    running.set(b.name, await startClcReplica(cloud, b, settings));
  }, 300_000);

  afterAll(async () => {
    for (const d of [...running.values()].reverse()) await stopPid(d.pid, 0, 'SIGKILL');
    client?.close();
    await cloud.destroy();
    await etcd?.stop();
  });

  let ids: string[] = [];

  it('kill -9 of the etcd leader member during a drain: the drain completes, every instance runs once, the admin API keeps answering', async () => {
    const leader = (await until('a CLC leader', clcLeader, (v) => typeof v === 'string' && CLCS.some((c) => c.url === v)))!;
    const clcEpoch = (await electedLeader(client, PREFIX))!.epoch;
    const ccEpoch = (await until('a CC leader', ccLeader, (v) => v !== undefined))!.epoch;
    // Four instances on n1: the other hosts disabled while they start.
    for (const h of [n2, n3]) await served(leader, { Action: 'DisableService', Type: 'NODE', Host: h });
    const run = await ok(leader, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '4', MaxCount: '4' });
    ids = arr<any>(run.instancesSet.item).map((i) => i.instanceId as string);
    for (const h of [n2, n3]) await ok(leader, { Action: 'EnableService', Type: 'NODE', Host: h });

    const migrationId = (await ok(leader, { Action: 'MigrateInstances', SourceHost: n1 })).migrationId as string;
    const during = arr<any>((await ok(leader, { Action: 'DescribeMigrations', 'MigrationId.1': migrationId })).migrationSet?.item)[0];
    expect(during?.state).toBe('active');

    const victim = (await until('the etcd leader member', etcdLeaderMember, (m) => m !== undefined))!;
    await victim.kill9();
    const killedAt = Date.now();

    // Changes go on once the two members left have a leader (and a CLC replica leads): a tag, acknowledged.
    const tagged = await until('a change acknowledged after the member died', async () => {
      const l = await clcLeader();
      return l === undefined ? undefined : { l, r: await query(l, { Action: 'CreateTags', 'ResourceId.1': ids[0]!, 'Tag.1.Key': 'member', 'Tag.1.Value': 'killed' }) };
    }, (v) => v !== undefined && !(v instanceof Error) && v.r.status === 200, 120_000);
    console.log(`etcd leader member ${victim.name} killed; a change acknowledged by ${tagged!.l} ${Date.now() - killedAt} ms later`);

    // The drain completes, read through whichever replica leads (reads are answered all along).
    const done = await until('the drain to finish', async () => {
      const l = (await clcLeader()) ?? leader;
      return arr<any>((await ok(l, { Action: 'DescribeMigrations', 'MigrationId.1': migrationId })).migrationSet?.item)[0];
    }, (m) => m !== undefined && !(m instanceof Error) && m.state !== 'active', 180_000);
    await expectDrainedOnce(cloud, done, ids, n1);
    // Whether a replica's lease outlived etcd's own re-election (a TTL close to the election timeout may not): for the record.
    console.log(`CLC leader epoch ${clcEpoch} → ${(await electedLeader(client, PREFIX))?.epoch}, CC leader epoch ${ccEpoch} → ${(await ccLeader())?.epoch}`);
    // Both CLC replicas answer a read, the leader and the follower alike.
    for (const c of CLCS) expect((await query(c.url, { Action: 'DescribeTags' })).status, c.url).toBe(200);

    // The member comes back on its data dir and catches up: a write through it alone succeeds.
    await victim.restart();
    await etcd.waitWritable(120_000, [victim.clientUrl]);
  }, 400_000);

  it('quorum lost then regained: changes refused coded within a bound and nothing changes on a node; leaders stop; resumes on return with nothing acknowledged lost', async () => {
    expect(ids).toHaveLength(4);
    const leader = (await until('a CLC leader', clcLeader, (v) => typeof v === 'string'))!;
    const ccBefore = (await until('a CC leader', ccLeader, (v) => v !== undefined))!;
    // Acknowledged before the loss: n1 (the drained source) disabled, a tag, every instance running once.
    await served(leader, { Action: 'DisableService', Type: 'NODE', Host: n1 });
    await ok(leader, { Action: 'CreateTags', 'ResourceId.1': ids[1]!, 'Tag.1.Key': 'before', 'Tag.1.Value': 'loss' });
    const statesBefore = await nodeStates();
    expect(statesBefore).toEqual({ [n1]: 'disabled', [n2]: 'enabled', [n3]: 'enabled' });
    const copiesBefore = await runningCopies(cloud);

    const lost = etcd.members.slice(0, 2);
    for (const m of lost) await m.kill9();
    const lostAt = Date.now();

    // A change sent to the leader at once (its lease may still run): refused, coded, within a bound.
    const t0 = Date.now();
    const disable = await query(leader, { Action: 'DisableService', Type: 'NODE', Host: n2 });
    const refusedIn = Date.now() - t0;
    console.log(`DisableService without quorum: ${disable.status} ${codeOfReply(disable)} in ${refusedIn} ms: ${disable.doc?.Response?.Errors?.Error?.Message}`);
    expect(['ServiceUnavailable', 'NotLeader']).toContain(codeOfReply(disable));
    // The store's deadline or the lease, whichever first, with slack for a busy machine: never a hang.
    expect(refusedIn).toBeLessThan(ETCD_TIMEOUT_MS + TTL_S * 1000 + 30_000);
    const busy = copiesBefore.get(ids[0]!)?.[0] ?? n2;
    const migrate = await query(leader, { Action: 'MigrateInstances', SourceHost: busy });
    expect(['ServiceUnavailable', 'NotLeader']).toContain(codeOfReply(migrate));

    // Once the leases can have run out, no replica of either role leads: every change is NotLeader. The
    // probes would change nothing if served (n2 is enabled already): a CC whose lease still runs serves it.
    await until('no CLC replica serving changes', async () => Promise.all(CLCS.map(async (c) => codeOfReply(await query(c.url, { Action: 'EnableService', Type: 'NODE', Host: n2 })))),
      (codes) => Array.isArray(codes) && codes.every((c) => c === 'NotLeader'), TTL_S * 1000 + 60_000);
    await until('no CC replica serving changes', async () => Promise.all(CCS.map(async (c) => wireFaultOf(await asClc().call(c.url, 'ccModifyNode', { host: n2, stateName: 'enabled', vmTypes: VM_TYPES }).then(() => undefined, (e: unknown) => e)).code)),
      (codes) => Array.isArray(codes) && codes.every((c) => c === 'NotLeader'), TTL_S * 1000 + 60_000);
    console.log(`both roles leaderless ${Date.now() - lostAt} ms after quorum was lost (lease TTL ${TTL_S} s)`);
    // Reads still answer, from the replicas' caches.
    for (const c of CLCS) {
      const r = await query(c.url, { Action: 'DescribeInstances' });
      expect(r.status, c.url).toBe(200);
      expect(r.text).toContain(ids[0]!);
    }
    // Nothing changed on any node: the same node states, the same instances in the same places.
    expect(await nodeStates()).toEqual(statesBefore);
    expect(await runningCopies(cloud)).toEqual(copiesBefore);

    // Quorum returns (same data dirs): leaders are elected again, with larger epochs.
    for (const m of lost) await m.restart();
    await etcd.waitWritable(120_000);
    const retried = await until('the refused change succeeding when retried', async () => {
      const l = await clcLeader();
      return l === undefined ? undefined : query(l, { Action: 'DisableService', Type: 'NODE', Host: n2 });
    }, (r) => r !== undefined && !(r instanceof Error) && r.status === 200, 120_000);
    expect(retried!.status).toBe(200);
    expect((await nodeStates())[n2]).toBe('disabled');
    const ccAfter = (await ccLeader())!;
    expect(BigInt(ccAfter.epoch) > BigInt(ccBefore.epoch)).toBe(true);
    // A command carrying the CC epoch from before the loss is refused by the node that has seen the new one.
    const stale = await asCc().call(ncUrl(n2), 'ncModifyNode', { stateName: 'enabled', leaderEpoch: ccBefore.epoch }).then(() => undefined, wireFaultOf);
    expect(stale?.code).toBe('StaleLeaderEpoch');
    expect((await nodeStates())[n2]).toBe('disabled');

    // Nothing acknowledged before the loss is lost: n1 still disabled, the tag, the instances where they were.
    const l = (await clcLeader())!;
    expect((await nodeStates())[n1]).toBe('disabled');
    const tags = arr<any>((await ok(l, { Action: 'DescribeTags' })).tagSet?.item);
    expect(tags.some((t) => t.resourceId === ids[1] && t.key === 'before' && t.value === 'loss')).toBe(true);
    const described = await ok(l, { Action: 'DescribeInstances' });
    for (const id of ids) expect(JSON.stringify(described)).toContain(id);
    expect(await runningCopies(cloud)).toEqual(copiesBefore);
    // Service resumes: the node back in service, the migration refused before now accepted.
    await ok(l, { Action: 'EnableService', Type: 'NODE', Host: n2 });
    expect((await nodeStates())[n2]).toBe('enabled');
    await ok(l, { Action: 'TerminateInstances', ...Object.fromEntries(ids.map((id, i) => [`InstanceId.${i + 1}`, id])) });
    await until('no copy left on any hypervisor', () => runningCopies(cloud), (m) => m instanceof Map && ids.every((id) => !m.has(id)));
  }, 500_000);
});
