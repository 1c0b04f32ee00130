/**
 * No split brain between CLC leaders (issue 21), as real processes; two clouds on 127.0.94.0/24, one
 * after the other, each with a three-member etcd on 127.0.95.1-3.
 *
 * First: a three-member etcd on
 * 127.0.95.1-3, two CLC replicas on 127.0.94.254:19800-19801, a real CC and two NCs on simulated
 * hypervisors on 127.0.94.0/24. The leader is stopped (SIGSTOP) until the other replica leads; the new
 * leader disables a node (its epoch reaches the CC); the old one is resumed (SIGCONT) and tries to
 * enable it again through its API, and hand-made CC commands carrying the old leader's epoch are sent
 * as a deposed leader's in-flight request would arrive: all are refused with coded errors and the
 * node stays disabled; the CC still refuses the old epoch after a restart (it persisted it).
 *
 * Then: kill -9 of the leader CLC during a fence. Three hosts, each one process group (its simhv and
 * NC) behind an ipmi_sim BMC on UDP 19820-19822 whose chassis power is that group
 * (scripts/fencing-lab.sh, which logs every power command and every real power-off in power.log);
 * two CLC replicas on 127.0.94.254:19802-19803 fence through the real fence_ipmilan. An operator's
 * forced FenceHost puts a host FENCING and the leader is killed at once: the other replica takes
 * over, the fence completes (FENCED), the host is powered off exactly once, and its instances run
 * elsewhere exactly once, restarted after the FENCED transition.
 * Driven by polling conditions with generous deadlines; every process is stopped by PID.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCredentialsFile, type Credentials } from '../../shared/auth/credentialsFile.js';
import { DEFAULT_VM_TYPES } from '../../shared/model/vmTypes.js';
import { isFerryError } from '../../shared/errors/registry.js';
import { CC_PATH } from '../../shared/wire/transport.js';
import { stopPid, type RunningDaemon } from '../../scripts/daemon.js';
import { etcdInstalled, startEtcdCluster, type EtcdCluster } from '../../scripts/etcdCluster.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';
import { electedLeader, replicaAction, replicaQuery, startClcReplica, until, type ReplicaReply } from '../helpers/clcReplicas.js';
import { arr, hypervisorDomains } from '../helpers/cloudApi.js';
import { groupAlive, haSettingParams, installFencingLab, LAB_HA_SETTINGS, startLabBmc, type LabBmc } from '../helpers/fencingLab.js';

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

  const leaderInEtcd = () => electedLeader(client, PREFIX);

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

const FENCE_PREFIX = 'it-fence-failover/';
const FENCE_REPLICAS = [19802, 19803].map((port, i) => ({ name: `clc-${'ab'[i]}`, port, url: `http://127.0.94.254:${port}` }));
const USER = 'ferry';
const PASSWORD = 'ha-pw-94';
const bmcPort = (i: number): number => 19820 + i;
const sh = (v: string): string => `'${v.replace(/'/g, `'\\''`)}'`;

const fenceCloud = new TestCloud(94, 3, { simArgs: ['--write-interval-ms', '200'] });

describe.skipIf(!etcdInstalled())('kill -9 of the leader CLC during a fence (real 3-member etcd, fence_ipmilan, ipmi_sim)', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let creds: Credentials;
  const running = new Map<string, RunningDaemon>();
  const bmcs = new Map<string, LabBmc>();

  const ok = (url: string, params: Record<string, string>): Promise<any> => replicaAction(url, creds, params);
  const leaderUrl = async (): Promise<string | undefined> => (await electedLeader(client, FENCE_PREFIX))?.url;
  async function haState(url: string, host: string): Promise<string | undefined> {
    return arr<any>((await ok(url, { Action: 'DescribeHostHA', 'Host.1': host })).hostSet?.item)[0]?.state;
  }
  /** Where each instance runs on the hosts still powered, by their hypervisors. */
  async function copiesOn(hosts: readonly string[]): Promise<Map<string, string[]>> {
    const where = new Map<string, string[]>();
    for (const host of hosts) {
      for (const d of await hypervisorDomains(fenceCloud, host)) if (d.state === 'running') where.set(d.id, [...(where.get(d.id) ?? []), host]);
    }
    return where;
  }
  const powerLog = (host: string): string[] => {
    try {
      return readFileSync(join(fenceCloud.baseDir, 'bmc', host, 'power.log'), 'utf8').trim().split('\n').filter((l) => l !== '');
    } catch {
      return [];
    }
  };

  beforeAll(async () => {
    await installFencingLab();
    etcd = await startEtcdCluster({ addrs: ['127.0.95.1', '127.0.95.2', '127.0.95.3'], clientPort: 19812, peerPort: 19813 });
    client = etcd.client();
    mkdirSync(join(fenceCloud.baseDir, 'logs'), { recursive: true });
    // Each host's processes are the chassis power of its BMC.
    for (const [i, host] of fenceCloud.nodeHosts.entries()) {
      const dir = join(fenceCloud.baseDir, 'bmc', host);
      mkdirSync(dir, { recursive: true });
      const lines = [fenceCloud.spec(`simhv-${host}`), fenceCloud.spec(`nc-${host}`)].map((spec) =>
        `node ${sh(join(ROOT, spec.entry))} ${spec.args.map(sh).join(' ')} >>${sh(join(fenceCloud.baseDir, 'logs', `${spec.name}.log`))} 2>&1 &`);
      const script = join(fenceCloud.baseDir, `host-${host}.sh`);
      writeFileSync(script, `#!/usr/bin/env bash\n${lines.join('\n')}\nwait\n`);
      bmcs.set(host, await startLabBmc({ addr: host, port: bmcPort(i), user: USER, password: PASSWORD, hostCommand: ['bash', script], dir }));
    }
    await fenceCloud.start(['cc']);
    const [a, b] = FENCE_REPLICAS as [(typeof FENCE_REPLICAS)[number], (typeof FENCE_REPLICAS)[number]];
    running.set(a.name, await startClcReplica(fenceCloud, a, { endpoints: etcd.endpoints, prefix: FENCE_PREFIX, ttlSeconds: TTL_S }));
    const keys = join(fenceCloud.baseDir, a.name, 'admin.credentials');
    creds = await readCredentialsFile(keys);
    mkdirSync(join(fenceCloud.baseDir, b.name), { recursive: true, mode: 0o700 });
    copyFileSync(keys, join(fenceCloud.baseDir, b.name, 'admin.credentials'));
    running.set(b.name, await startClcReplica(fenceCloud, b, { endpoints: etcd.endpoints, prefix: FENCE_PREFIX, ttlSeconds: TTL_S }));
    const leader = (await until('a leader in etcd', leaderUrl, (v) => typeof v === 'string'))!;
    await ok(leader, { Action: 'ConfigureHAForCluster', ...haSettingParams(LAB_HA_SETTINGS) });
    for (const [i, host] of fenceCloud.nodeHosts.entries()) {
      await ok(leader, { Action: 'ConfigureHAForHost', Host: host, Agent: 'fence_ipmilan', Address: host, Port: String(bmcPort(i)), Username: USER, Password: PASSWORD, TimeoutMs: '6000' });
    }
    await ok(leader, { Action: 'EnableHAForCluster', Partition: 'cluster01' });
    await until('every host AVAILABLE', async () => Promise.all(fenceCloud.nodeHosts.map((h) => haState(leader, h))), (v) => Array.isArray(v) && v.every((s) => s === 'AVAILABLE'), 120_000);
  }, 300_000);

  afterAll(async () => {
    for (const d of running.values()) await stopPid(d.pid, 0, 'SIGKILL');
    await fenceCloud.stopAll();
    for (const bmc of bmcs.values()) {
      const pg = await bmc.hostPgid();
      await bmc.stop();
      if (pg && (await groupAlive(pg))) process.kill(-pg, 'SIGKILL');
    }
    await fenceCloud.destroy();
    await etcd?.stop();
  }, 120_000);

  it('another replica completes the fence: FENCED, powered off once, its instances restarted elsewhere once, after the fence', async () => {
    const first = (await until('a leader in etcd', leaderUrl, (v) => typeof v === 'string'))!;
    const run = await ok(first, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '3', MaxCount: '3' });
    const ids = arr<any>(run.instancesSet.item).map((i) => i.instanceId as string);
    const placed = await until('the instances running', () => copiesOn(fenceCloud.nodeHosts), (m) => m instanceof Map && ids.every((id) => m.get(id)?.length === 1));
    const victim = placed.get(ids[0]!)![0]!;
    const onVictim = ids.filter((id) => placed.get(id)?.[0] === victim);
    const others = fenceCloud.nodeHosts.filter((h) => h !== victim);
    expect(powerLog(victim).filter((l) => l.includes(' off '))).toEqual([]);

    // The operator fences the host (up and healthy, so forced); the leader dies as the fence begins.
    await ok(first, { Action: 'FenceHost', Host: victim, Force: 'true' });
    const victimReplica = FENCE_REPLICAS.find((r) => r.url === first)!;
    await stopPid(running.get(victimReplica.name)!.pid, 0, 'SIGKILL');
    running.delete(victimReplica.name);
    const killedAt = Date.now();

    const second = (await until('the other replica elected', leaderUrl, (v) => typeof v === 'string' && v !== first))!;
    await until(`${victim} FENCED at the new leader`, () => haState(second, victim), (s) => s === 'FENCED', 180_000);
    console.log(`leader ${first} killed during the fence of ${victim}; FENCED at ${second} ${Date.now() - killedAt} ms later; power log: ${powerLog(victim).join(' | ')}`);
    // Powered off exactly once, whichever replica's agent did it (a second agent finds it off).
    expect(powerLog(victim).filter((l) => l.includes(' off '))).toHaveLength(1);

    // Each instance runs exactly once, none on the fenced host; those from it were restarted by the new leader.
    const after = await until('the fenced host\'s instances running elsewhere', () => copiesOn(others), (m) => m instanceof Map && ids.every((id) => m.get(id)?.length === 1), 180_000);
    for (const id of ids) expect(after.get(id), id).toHaveLength(1);
    // Restarted after the fence: the HA log shows the FENCED transition before the restart's outcome.
    const restartDone = (evs: any[]): boolean => evs.some((e) => /restart elsewhere of the instances of .*: done/.test(String(e.message)));
    const events = await until('the restart recorded in the HA log', async () => arr<any>((await ok(second, { Action: 'DescribeHAEvents', Host: victim, MaxResults: '1000' })).eventSet?.item),
      (v) => Array.isArray(v) && restartDone(v));
    const fencedAt = events.findIndex((e) => e.toState === 'FENCED');
    const restarted = events.findIndex((e) => /restart elsewhere of the instances of .*: done/.test(String(e.message)));
    expect(fencedAt).toBeGreaterThanOrEqual(0);
    expect(restarted).toBeGreaterThan(fencedAt);
    expect(onVictim.length).toBeGreaterThan(0);
  }, 400_000);
});
