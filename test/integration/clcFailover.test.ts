/**
 * Replicated CLC on etcd (issue 21), as real processes: a three-member etcd on 127.0.92.1-3, three CLC
 * replicas on 127.0.91.254:19701-19703 (one state in etcd), a real CC and NCs on simulated hypervisors
 * on 127.0.91.0/24. The leader CLC is killed with -9 during a drain: another replica takes over, the
 * drain (driven by the CC from what the NCs hold) completes and the new leader shows it, a change
 * acknowledged before the kill is there, and a follower's refusal names the new leader; Ferry's CLI
 * sent to a follower is served by the leader. Driven by polling conditions with generous deadlines.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCredentialsFile, type Credentials } from '../../shared/auth/credentialsFile.js';
import { stopPid, type RunningDaemon } from '../../scripts/daemon.js';
import { etcdInstalled, startEtcdCluster, type EtcdCluster } from '../../scripts/etcdCluster.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';
import { electedLeader, replicaAction, replicaQuery, startClcReplica, until, type ReplicaReply } from '../helpers/clcReplicas.js';
import { arr, runningCopies } from '../helpers/cloudApi.js';
import { expectDrainedOnce } from '../helpers/drainOutcome.js';

const PREFIX = 'it-failover/';
const TTL_S = 4;
const REPLICAS = [19701, 19702, 19703].map((port, i) => ({ name: `clc-${'abc'[i]}`, port, url: `http://127.0.91.254:${port}` }));
const execFileAsync = promisify(execFile);

// 256 MiB guests at time-scale 1 take ~3 s each; one at a time from the source: a drain of 4 lasts ~12 s.
const cloud = new TestCloud(91, 3, {
  simArgs: ['--time-scale', '1', '--cores', '4', '--memory-mib', '2048', '--disk-gib', '100'],
  ccArgs: ['--poll-interval-ms', '1000', '--max-migrations-per-source', '1', '--max-migrations-per-destination', '1'],
});
const [n1] = cloud.nodeHosts as [string, string, string];

describe.skipIf(!etcdInstalled())('replicated CLC: kill -9 of the leader during a drain (real 3-member etcd)', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let creds: Credentials;
  const running = new Map<string, RunningDaemon>();

  async function startReplica(r: (typeof REPLICAS)[number]): Promise<void> {
    running.set(r.name, await startClcReplica(cloud, r, { endpoints: etcd.endpoints, prefix: PREFIX, ttlSeconds: TTL_S }));
  }

  const query = (url: string, params: Record<string, string>): Promise<ReplicaReply> => replicaQuery(url, creds, params);

  const ok = (url: string, params: Record<string, string>): Promise<any> => replicaAction(url, creds, params);

  /** The leader as etcd holds it: the value of the oldest key under the election prefix. */
  const leaderInEtcd = async (): Promise<string | undefined> => (await electedLeader(client, PREFIX))?.url;

  beforeAll(async () => {
    etcd = await startEtcdCluster({ addrs: ['127.0.92.1', '127.0.92.2', '127.0.92.3'], clientPort: 19710, peerPort: 19711 });
    client = etcd.client();
    await cloud.start(cloud.names().filter((n) => n !== 'clc'));
    const [a, ...rest] = REPLICAS as [(typeof REPLICAS)[number], ...(typeof REPLICAS)[number][]];
    await startReplica(a);
    // One set of admin keys for the region: every replica's state dir holds the same file (docs/OPERATIONS.md).
    const keys = join(cloud.baseDir, a.name, 'admin.credentials');
    creds = await readCredentialsFile(keys);
    for (const r of rest) {
      mkdirSync(join(cloud.baseDir, r.name), { recursive: true, mode: 0o700 });
      copyFileSync(keys, join(cloud.baseDir, r.name, 'admin.credentials'));
      await startReplica(r);
    }
  }, 300_000);

  afterAll(async () => {
    for (const d of running.values()) await stopPid(d.pid, 0, 'SIGKILL');
    await cloud.destroy();
    await etcd?.stop();
  });

  it('one replica leads; a follower serves reads and refuses a change with NotLeader naming the leader', async () => {
    const leader = await until('a leader in etcd', leaderInEtcd, (v) => typeof v === 'string' && REPLICAS.some((r) => r.url === v));
    const follower = REPLICAS.find((r) => r.url !== leader)!;
    const read = await query(follower.url, { Action: 'DescribeAvailabilityZones' });
    expect(read.status).toBe(200);
    const refused = await query(follower.url, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '1', MaxCount: '1' });
    expect(refused.status).toBe(503);
    expect(refused.doc.Response.Errors.Error.Code).toBe('NotLeader');
    expect(refused.doc.Response.Errors.Error.Message).toContain(leader);
    expect(refused.leaderHeader).toBe(leader);
  });

  it('kill -9 of the leader during a drain: another replica takes over, the drain completes, nothing acknowledged is lost', async () => {
    const first = (await until('a leader in etcd', leaderInEtcd, (v) => typeof v === 'string'))!;
    // Four instances on n1: the other hosts disabled while they start.
    const others = cloud.nodeHosts.filter((h) => h !== n1);
    for (const h of others) await ok(first, { Action: 'DisableService', Type: 'NODE', Host: h });
    const run = await ok(first, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '4', MaxCount: '4' });
    const ids = arr<any>(run.instancesSet.item).map((i) => i.instanceId as string);
    for (const h of others) await ok(first, { Action: 'EnableService', Type: 'NODE', Host: h });

    const mig = await ok(first, { Action: 'MigrateInstances', SourceHost: n1 });
    const migrationId = mig.migrationId as string;
    expect(migrationId).toMatch(/^mig-[0-9a-f]{8}$/);
    // Acknowledged by the leader during the drain: it must be there after the failover.
    await ok(first, { Action: 'CreateTags', 'ResourceId.1': ids[0]!, 'Tag.1.Key': 'acknowledged', 'Tag.1.Value': 'before-kill' });
    // Mid-drain: the plan is not finished yet when the leader dies.
    const during = await ok(first, { Action: 'DescribeMigrations', 'MigrationId.1': migrationId });
    expect(arr<any>(during.migrationSet?.item)[0]?.state).toBe('active');

    // Before the kill, every replica is listed: the leader as `clc`, the others as standbys.
    const listed = arr<any>((await ok(first, { Action: 'DescribeServices', ByServiceType: 'eucalyptus' })).serviceStatuses?.item);
    expect(listed.map((s) => `${s.serviceId.name} ${s.localState}`).sort()).toEqual(
      ['clc ENABLED', ...REPLICAS.filter((r) => r.url !== first).map((r) => `clc@127.0.91.254-${r.port} DISABLED`)].sort());
    const victim = REPLICAS.find((r) => r.url === first)!;
    const killedAt = Date.now();
    await stopPid(running.get(victim.name)!.pid, 0, 'SIGKILL');
    running.delete(victim.name);

    const second = (await until('a new leader in etcd', leaderInEtcd, (v) => typeof v === 'string' && v !== first))!;
    const survivor = REPLICAS.find((r) => r.url === second)!;
    // The new leader serves changes (not NotLeader): a harmless change, tagging, succeeds there.
    await until('the new leader serving changes', () => query(second, { Action: 'CreateTags', 'ResourceId.1': ids[1]!, 'Tag.1.Key': 'after', 'Tag.1.Value': 'failover' }), (r) => r.status === 200);
    console.log(`leader ${first} killed; ${survivor.url} serves changes ${Date.now() - killedAt} ms later (lease TTL ${TTL_S} s)`);

    const done = await until('the drain to finish on the new leader', async () => arr<any>((await ok(second, { Action: 'DescribeMigrations', 'MigrationId.1': migrationId })).migrationSet?.item)[0],
      (m) => m !== undefined && m.state !== 'active', 180_000);
    // Each instance runs exactly once, off n1 (the hypervisors are the ground truth).
    await expectDrainedOnce(cloud, done, ids, n1);
    // The new leader's event watcher (a leader duty) took over from the stored state: it records the completion once.
    const completed = await until('migration.completed in the new leader\'s event stream',
      async () => arr<any>((await ok(second, { Action: 'DescribeEvents', MigrationId: migrationId, 'Kind.1': 'migration.completed' })).eventSet?.item),
      (v) => Array.isArray(v) && v.length > 0);
    expect(completed).toHaveLength(1);
    // Acknowledged before the kill: still there, read from the new leader (and from a follower).
    const follower = REPLICAS.find((r) => r.url !== first && r.url !== second)!;
    for (const url of [second, follower.url]) {
      const tags = arr<any>((await ok(url, { Action: 'DescribeTags' })).tagSet?.item);
      expect(tags.some((t) => t.resourceId === ids[0] && t.key === 'acknowledged' && t.value === 'before-kill'), url).toBe(true);
    }
    // DescribeServices at the follower names the new leader as `clc`; the killed replica is gone from the election.
    const clcs = arr<any>((await ok(follower.url, { Action: 'DescribeServices', ByServiceType: 'eucalyptus' })).serviceStatuses?.item);
    expect(clcs.map((s) => `${s.serviceId.name} ${s.localState} ${s.serviceId.uri}`)).toEqual([
      `clc ENABLED ${second}/services/Eucalyptus`, `clc@127.0.91.254-${follower.port} DISABLED ${follower.url}/services/Eucalyptus`]);
    // The other follower names the new leader.
    const refused = await query(follower.url, { Action: 'TerminateInstances', 'InstanceId.1': ids[0]! });
    expect(refused.doc.Response.Errors.Error.Code).toBe('NotLeader');
    expect(refused.leaderHeader).toBe(second);

    // Ferry's CLI pointed at the follower: NotLeader, then the same request at the leader, once.
    const cli = await execFileAsync(process.execPath, [join(ROOT, 'bin', 'euca-terminate-instances'), ...ids], {
      env: { ...process.env, EC2_URL: `${follower.url}/services/Eucalyptus`, FERRY_CREDENTIALS: join(cloud.baseDir, 'clc-a', 'admin.credentials'), EC2_ACCESS_KEY: undefined, EC2_SECRET_KEY: undefined },
    });
    for (const id of ids) expect(cli.stdout).toContain(id);
    await until('no copy left on any hypervisor', () => runningCopies(cloud), (m) => m instanceof Map && ids.every((id) => !m.has(id)));
  }, 400_000);
});
