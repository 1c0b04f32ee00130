/**
 * No split brain between CLC leaders (issue 21), as real processes: a three-member etcd on
 * 127.0.95.1-3, two CLC replicas on 127.0.94.254:19800-19801, a real CC and two NCs on simulated
 * hypervisors on 127.0.94.0/24. The leader is stopped (SIGSTOP) until the other replica leads; the new
 * leader disables a node (its epoch reaches the CC); the old one is resumed (SIGCONT) and tries to
 * enable it again through its API, and hand-made CC commands carrying the old leader's epoch are sent
 * as a deposed leader's in-flight request would arrive: all are refused with coded errors and the
 * node stays disabled; the CC still refuses the old epoch after a restart (it persisted it).
 * Driven by polling conditions with generous deadlines; every process is stopped by PID.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCredentialsFile, type Credentials } from '../../shared/auth/credentialsFile.js';
import { DEFAULT_VM_TYPES } from '../../shared/model/vmTypes.js';
import { isFerryError } from '../../shared/errors/registry.js';
import { CC_PATH } from '../../shared/wire/transport.js';
import { stopPid, type RunningDaemon } from '../../scripts/daemon.js';
import { etcdInstalled, startEtcdCluster, type EtcdCluster } from '../../scripts/etcdCluster.js';
import { TestCloud } from '../helpers/cloud.js';
import { replicaQuery, startClcReplica, until, type ReplicaReply } from '../helpers/clcReplicas.js';
import { arr } from '../helpers/cloudApi.js';

const PREFIX = 'it-stale-leader/';
const TTL_S = 3;
const REPLICAS = [19800, 19801].map((port, i) => ({ name: `clc-${'ab'[i]}`, port, url: `http://127.0.94.254:${port}` }));
const VM_TYPES = DEFAULT_VM_TYPES.map((t) => ({ ...t }));

const cloud = new TestCloud(94, 2, { ccArgs: ['--poll-interval-ms', '1000'] });
const [n1] = cloud.nodeHosts as [string, string];

describe.skipIf(!etcdInstalled())('a deposed CLC leader changes nothing (SIGSTOP past its lease, real 3-member etcd)', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let creds: Credentials;
  const running = new Map<string, RunningDaemon>();
  const stopped = new Set<number>();

  async function startReplica(r: (typeof REPLICAS)[number]): Promise<void> {
    running.set(r.name, await startClcReplica(cloud, r, { endpoints: etcd.endpoints, prefix: PREFIX, ttlSeconds: TTL_S }));
  }

  const query = (url: string, params: Record<string, string>): Promise<ReplicaReply> => replicaQuery(url, creds, params);

  /** The leader as etcd holds it: the oldest key under the election prefix, with its epoch. */
  async function leaderInEtcd(): Promise<{ url: string; epoch: string } | undefined> {
    const res = await client.getAll().prefix(`${PREFIX}clc/election/`).sort('Create', 'Ascend').exec();
    const kv = res.kvs[0];
    return kv === undefined ? undefined : { url: kv.value.toString(), epoch: kv.create_revision };
  }

  /** One CC command as a CLC would send it (the CLC's certificate), answered or refused with the CC's code. */
  async function ccCall(op: string, body: Record<string, unknown>): Promise<{ code: string; body?: any }> {
    const t = cloud.tierClient(CC_PATH);
    try {
      return { code: 'ok', body: await t.call(cloud.ccUrl, op, body as never, { timeoutMs: 30_000 }) };
    } catch (e) {
      if (isFerryError(e) && e.code === 'RemoteFault') return { code: String(e.fields.remoteCode), body: e.message };
      throw e;
    }
  }

  async function nodeState(host: string): Promise<string | undefined> {
    const r = await ccCall('ccDescribeNodes', {});
    return arr<any>(r.body?.nodes).find((n) => n.host === host)?.nodeState;
  }

  beforeAll(async () => {
    etcd = await startEtcdCluster({ addrs: ['127.0.95.1', '127.0.95.2', '127.0.95.3'], clientPort: 19810, peerPort: 19811 });
    client = etcd.client();
    await cloud.start(cloud.names().filter((n) => n !== 'clc'));
    const [a, b] = REPLICAS as [(typeof REPLICAS)[number], (typeof REPLICAS)[number]];
    await startReplica(a);
    const keys = join(cloud.baseDir, a.name, 'admin.credentials');
    creds = await readCredentialsFile(keys);
    mkdirSync(join(cloud.baseDir, b.name), { recursive: true, mode: 0o700 });
    copyFileSync(keys, join(cloud.baseDir, b.name, 'admin.credentials'));
    await startReplica(b);
  }, 300_000);

  afterAll(async () => {
    for (const pid of stopped) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone already
      }
    }
    for (const d of running.values()) await stopPid(d.pid, 0, 'SIGKILL');
    await cloud.destroy();
    await etcd?.stop();
  });

  it('the new leader\'s epoch fences the old one at the CC, across a CC restart', async () => {
    const first = (await until('a leader in etcd', leaderInEtcd, (v) => v !== undefined && REPLICAS.some((r) => r.url === v.url)))!;
    // The leader sends its epoch with its first change; the node is enabled to begin with.
    await until(`${n1} enabled at the CC`, () => nodeState(n1), (s) => s === 'enabled');
    const victim = REPLICAS.find((r) => r.url === first.url)!;
    const victimPid = running.get(victim.name)!.pid;

    // Frozen past its lease: the other replica is elected.
    process.kill(victimPid, 'SIGSTOP');
    stopped.add(victimPid);
    const second = (await until('the other replica elected', leaderInEtcd, (v) => v !== undefined && v.url !== first.url))!;
    expect(BigInt(second.epoch)).toBeGreaterThan(BigInt(first.epoch));
    // A node change through the new leader (its ccModifyNode carries its epoch).
    const disabled = await until('DisableService at the new leader', () => query(second.url, { Action: 'DisableService', Type: 'NODE', Host: n1 }), (r) => r.status === 200);
    expect(disabled.status).toBe(200);
    expect(await nodeState(n1)).toBe('disabled');

    // The old leader wakes up and tries to undo it through its own API: its lease is gone, so it refuses.
    process.kill(victimPid, 'SIGCONT');
    stopped.delete(victimPid);
    const refusedApi = await query(first.url, { Action: 'EnableService', Type: 'NODE', Host: n1 });
    expect(refusedApi.status).toBe(503);
    expect(refusedApi.doc.Response.Errors.Error.Code).toBe('NotLeader');

    // What a deposed leader's request already on its way would carry: the old epoch. The CC refuses each, changing nothing.
    const stale = await ccCall('ccModifyNode', { host: n1, stateName: 'enabled', vmTypes: VM_TYPES, clcEpoch: first.epoch });
    expect(stale.code).toBe('StaleLeaderEpoch');
    expect(stale.body).toContain(`CLC epoch ${first.epoch}`);
    const staleRun = await ccCall('ccRunInstances', {
      clcEpoch: first.epoch, reservationId: 'r-0000e9c4', imageId: 'emi-0a1b2c3d', ownerId: 'admin', vmType: VM_TYPES[0], instanceIds: ['i-0000e9c4'], minCount: 1, launchTime: Date.now(),
    });
    expect(staleRun.code).toBe('StaleLeaderEpoch');
    const staleFence = await ccCall('ccSetFencedHosts', { hosts: [n1], clcEpoch: first.epoch });
    expect(staleFence.code).toBe('StaleLeaderEpoch');
    expect(await nodeState(n1)).toBe('disabled');
    const listed = await ccCall('ccDescribeInstances', {});
    expect(arr<any>(listed.body?.instances).map((i) => i.instanceId)).not.toContain('i-0000e9c4');

    // The CC persisted the highest epoch: after a crash and restart it still refuses the old one.
    await cloud.restart('cc');
    await until('the restarted CC answering', () => nodeState(n1), (s) => s === 'disabled');
    const afterRestart = await ccCall('ccModifyNode', { host: n1, stateName: 'enabled', vmTypes: VM_TYPES, clcEpoch: first.epoch });
    expect(afterRestart.code).toBe('StaleLeaderEpoch');
    expect(await nodeState(n1)).toBe('disabled');

    // The current leader is obeyed: EnableService through it enables the node.
    const enabled = await until('EnableService at the new leader', () => query(second.url, { Action: 'EnableService', Type: 'NODE', Host: n1 }), (r) => r.status === 200);
    expect(enabled.status).toBe(200);
    expect(await nodeState(n1)).toBe('enabled');
  }, 300_000);
});
