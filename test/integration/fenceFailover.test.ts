/**
 * Kill the leader CLC with -9 while host HA fences a host (issue 21), as real processes: a three-member
 * etcd on 127.0.107.1-3 (:20210/:20211), two CLC replicas at 127.0.106.254:20200/20201, two CC replicas
 * of cluster01 at :20202/:20203, and three hosts 127.0.106.1-3, each one process group (its simhv and
 * its NC on :20204) behind an ipmi_sim BMC (UDP 20220-20222, scripts/fencing-lab.sh) that Ferry drives
 * with the real fence_ipmilan.
 *
 * The victim's NC and simhv die while the group's shell lives on, so the BMC still reads the host as
 * powered on and the fence really powers it off. Its BMC is frozen (SIGSTOP) just before, so the fence
 * agent started by the leader hangs and the leader is killed with the fence in flight (DescribeHostHA
 * shows FENCING with a fence operation); the BMC is then thawed. Power actions are counted as the BMC
 * sees them: the lab's chassis_control appends `off pg N` to power.log for every real power-off (a host
 * found off already is not powered off again) and `command set power 1` / `command set reset 1` for
 * every power-on or cycle it is asked for. Right after the kill, before its lease runs out, the survivor's
 * DescribeServices shows the dead leader NOTREADY (it probes the replicas it lists).
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCredentialsFile, type Credentials } from '../../shared/auth/credentialsFile.js';
import { withFlags as variant, type ProcessSpec } from '../../scripts/cloudLayout.js';
import { spawnDaemon, stopPid, type RunningDaemon } from '../../scripts/daemon.js';
import { etcdInstalled, startEtcdCluster, type EtcdCluster } from '../../scripts/etcdCluster.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';
import { arr, hypervisorDomains } from '../helpers/cloudApi.js';
import { electedLeader, replicaAction, replicaQuery, startClcReplica, until, type ReplicaReply } from '../helpers/clcReplicas.js';
import { groupAlive, haSettingParams, installFencingLab, isAlive, LAB_HA_SETTINGS, startLabBmc, type LabBmc } from '../helpers/fencingLab.js';

const PREFIX = 'it-fencefail/';
const TTL_S = 4;
const USER = 'ferry';
const PASSWORD = 'ff-pw-106';
const NC_PORT = 20204;
const BMC_PORT = (i: number): number => 20220 + i;
const REPLICAS = [20200, 20201].map((port, i) => ({ name: `clc-${'ab'[i]}`, port, url: `http://127.0.106.254:${port}` }));
const CCS = [20202, 20203].map((port, i) => ({ name: `cc-${'ab'[i]}`, port, url: `https://127.0.106.254:${port}` }));
const CC_URLS = CCS.map((c) => c.url).join(',');
const SIM_ARGS = ['--write-interval-ms', '200', '--cores', '4', '--memory-mib', '2048', '--disk-gib', '100'];
const sh = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

const cloud = new TestCloud(106, 3, { simArgs: SIM_ARGS });

/** What the victim's BMC did to its power (power.log): real power-offs, and power-ons or cycles asked for. */
export function powerActions(log: string): { offs: number; onsOrCycles: number } {
  const lines = log.split('\n');
  return {
    offs: lines.filter((l) => / off pg \d+$/.test(l)).length,
    onsOrCycles: lines.filter((l) => / command set (power 1|reset 1)$/.test(l)).length,
  };
}


/** The lab BMC's power log, and how long it is now: only what is written after counts. */
function powerLogOf(bmc: LabBmc): { readonly powerLog: () => string; readonly powerBefore: number } {
  const powerLog = (): string => readFileSync(join(bmc.dir, 'power.log'), 'utf8');
  return { powerLog, powerBefore: powerLog().length };
}

/** Freezes the BMC (a fence agent talking to it hangs: the fence stays in flight); the returned thaw acts once. */
function freezeBmc(bmc: LabBmc): () => void {
  process.kill(bmc.bmcPid, 'SIGSTOP');
  let thawed = false;
  return () => {
    if (!thawed) process.kill(bmc.bmcPid, 'SIGCONT');
    thawed = true;
  };
}

/** The host fails: its NC and simulated hypervisor are killed (its chassis stays on, as the BMC sees it). */
function killHost(bmc: LabBmc): void {
  for (const f of ['nc.pid', 'simhv.pid']) process.kill(Number(readFileSync(join(bmc.dir, f), 'utf8')), 'SIGKILL');
}
describe.skipIf(!etcdInstalled())('replicated CLC: kill -9 of the leader while host HA fences a host (real etcd, fence_ipmilan, ipmi_sim)', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let creds: Credentials;
  const running = new Map<string, RunningDaemon>();
  const bmcs = new Map<string, LabBmc>();

  const query = (url: string, params: Record<string, string>): Promise<ReplicaReply> => replicaQuery(url, creds, params);
  const ok = (url: string, params: Record<string, string>): Promise<any> => replicaAction(url, creds, params);
  const leaderInEtcd = async (): Promise<string | undefined> => (await electedLeader(client, PREFIX))?.url;
  /** The CC leader as etcd holds it: the oldest key under the partition's election prefix (its value, its epoch). */
  async function ccLeaderInEtcd(): Promise<{ url: string; epoch: string } | undefined> {
    const res = await client.getAll().prefix(`${PREFIX}cc/cluster01/election/`).sort('Create', 'Ascend').exec();
    const kv = res.kvs[0];
    return kv === undefined ? undefined : { url: kv.value.toString(), epoch: kv.create_revision };
  }

  async function start(spec: ProcessSpec): Promise<void> {
    running.set(spec.name, await spawnDaemon(spec, { root: ROOT, logFile: join(cloud.baseDir, 'logs', `${spec.name}.log`) }));
  }

  /** DescribeHostHA of one host at `url`: its item (state, operation, fenceAttempts, eventSet). */
  async function hostHa(url: string, host: string): Promise<any> {
    const r = await ok(url, { Action: 'DescribeHostHA', 'Host.1': host, MaxEvents: '50' });
    return arr<any>(r.hostSet?.item)[0];
  }

  /** Where each instance runs according to the hypervisors that are up (a powered-off host runs nothing). */
  async function runningCopies(hosts: readonly string[]): Promise<Map<string, string[]>> {
    const where = new Map<string, string[]>();
    for (const host of hosts) {
      for (const d of await hypervisorDomains(cloud, host)) if (d.state === 'running') where.set(d.id, [...(where.get(d.id) ?? []), host]);
    }
    return where;
  }

  beforeAll(async () => {
    await installFencingLab();
    etcd = await startEtcdCluster({ addrs: ['127.0.107.1', '127.0.107.2', '127.0.107.3'], clientPort: 20210, peerPort: 20211 });
    client = etcd.client();
    await mkdir(join(cloud.baseDir, 'logs'), { recursive: true });
    // Each host (its simhv and NC) is the chassis power of its BMC.
    for (const [i, host] of cloud.nodeHosts.entries()) {
      const dir = join(cloud.baseDir, 'bmc', host);
      await mkdir(dir, { recursive: true });
      const nc = variant(cloud.spec(`nc-${host}`), `nc-${host}`, { '--port': String(NC_PORT), '--cc-url': CC_URLS });
      const lines = [cloud.spec(`simhv-${host}`), nc].map((s) => `node ${sh(join(ROOT, s.entry))} ${s.args.map(sh).join(' ')} >>${sh(join(cloud.baseDir, 'logs', `${s.name}.log`))} 2>&1 & echo $! > ${sh(join(dir, `${s.name.split('-')[0]}.pid`))}`);
      const script = join(cloud.baseDir, `host-${host}.sh`);
      // A process that outlives the host's services: the BMC reads the host as on until it is powered off.
      await writeFile(script, `#!/usr/bin/env bash\n${lines.join('\n')}\nsleep 1000000 &\nwait\n`);
      bmcs.set(host, await startLabBmc({ addr: host, port: BMC_PORT(i), user: USER, password: PASSWORD, hostCommand: ['bash', script], dir }));
    }
    for (const c of CCS) {
      mkdirSync(join(cloud.baseDir, c.name), { recursive: true, mode: 0o700 });
      await start(variant(cloud.spec('cc'), c.name, {
        '--port': String(c.port), '--state-dir': join(cloud.baseDir, c.name), '--nc-port': String(NC_PORT), '--poll-interval-ms': '1000',
        '--store': 'etcd', '--etcd-endpoints': etcd.endpoints.join(','), '--etcd-prefix': PREFIX, '--advertise-url': c.url, '--leader-ttl-seconds': String(TTL_S),
      }));
    }
    const settings = { endpoints: etcd.endpoints, prefix: PREFIX, ttlSeconds: TTL_S, set: { '--clusters': `cluster01=${CC_URLS}` } };
    const [a, b] = REPLICAS as [(typeof REPLICAS)[number], (typeof REPLICAS)[number]];
    running.set(a.name, await startClcReplica(cloud, a, settings));
    const keys = join(cloud.baseDir, a.name, 'admin.credentials');
    creds = await readCredentialsFile(keys);
    mkdirSync(join(cloud.baseDir, b.name), { recursive: true, mode: 0o700 });
    copyFileSync(keys, join(cloud.baseDir, b.name, 'admin.credentials'));
    running.set(b.name, await startClcReplica(cloud, b, settings));

    // HA as an operator sets it up, at the leader: the lab's timings, storm bound 1, a BMC per host, then on.
    const leader = (await until('a CLC leader in etcd', leaderInEtcd, (v) => typeof v === 'string'))!;
    await ok(leader, { Action: 'ConfigureHAForCluster', ...haSettingParams(LAB_HA_SETTINGS) });
    await ok(leader, { Action: 'ConfigureHAForCluster', Partition: 'cluster01', MaxUnhealthy: '1' });
    for (const [i, host] of cloud.nodeHosts.entries()) {
      await ok(leader, { Action: 'ConfigureHAForHost', Host: host, Agent: 'fence_ipmilan', Address: host, Port: String(BMC_PORT(i)), Username: USER, Password: PASSWORD, TimeoutMs: '6000' });
    }
    await ok(leader, { Action: 'EnableHAForCluster', Partition: 'cluster01' });
    await until('every host AVAILABLE', async () => Promise.all(cloud.nodeHosts.map(async (h) => (await hostHa(leader, h))?.state)),
      (v) => Array.isArray(v) && v.every((s) => s === 'AVAILABLE'), 60_000);
    // Every host's first BMC power status has answered ("on"); the next is an hour away (LAB_HA_SETTINGS).
    await until('every host\'s first BMC power status', async () => Promise.all(cloud.nodeHosts.map((h) => hostHa(leader, h))),
      (v) => Array.isArray(v) && v.every((i) => i?.powerCheckInFlight === 'false' && Date.parse(i.nextPowerCheckAt) > Date.now() + 60_000), 60_000);
  }, 300_000);

  afterAll(async () => {
    for (const d of [...running.values()].reverse()) await stopPid(d.pid, 0, 'SIGKILL');
    for (const bmc of bmcs.values()) {
      try {
        process.kill(bmc.bmcPid, 'SIGCONT');
      } catch {
        // Already gone.
      }
      const pg = await bmc.hostPgid();
      await bmc.stop();
      if (pg && (await groupAlive(pg))) process.kill(-pg, 'SIGKILL');
    }
    await cloud.destroy();
    await etcd?.stop();
  }, 120_000);

  it('kill -9 of the leader with the fence in flight: the other takes over within 2×TTL, the host is powered off once, its instances restart once, after FENCED', async () => {
    const first = (await until('a CLC leader in etcd', leaderInEtcd, (v) => typeof v === 'string'))!;
    const survivor = REPLICAS.find((r) => r.url !== first)!;
    const [victim, ...others] = cloud.nodeHosts as [string, ...string[]];
    // Two instances on the victim: the other hosts disabled while they start.
    for (const h of others) await ok(first, { Action: 'DisableService', Type: 'NODE', Host: h });
    const run = await ok(first, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '2', MaxCount: '2' });
    const ids = arr<any>(run.instancesSet.item).map((i) => i.instanceId as string);
    for (const h of others) await ok(first, { Action: 'EnableService', Type: 'NODE', Host: h });
    await until('both instances running on the victim', () => runningCopies([victim]), (m) => m instanceof Map && ids.every((id) => m.get(id)?.length === 1));

    // The host fails: its NC and simhv die (so do its guests), the group's shell lives on, so its power reads on.
    const bmc = bmcs.get(victim)!;
    const pgid = (await bmc.hostPgid())!;
    // Its first power-on (the lab starting the host) is in the log already: only what comes after counts.
    const { powerLog, powerBefore } = powerLogOf(bmc);
    const thaw = freezeBmc(bmc);
    try {
      killHost(bmc);
      // Its instances are not restarted elsewhere while it is not FENCED: checked at every poll up to FENCED.
      const fencing = await until('the leader fencing the victim (fence agent in flight)', async () => {
        const elsewhere = await runningCopies(others);
        expect(ids.filter((id) => elsewhere.has(id)), 'restarted before FENCED').toEqual([]);
        return hostHa(first, victim);
      }, (v) => v?.state === 'FENCING' && v.operation?.kind === 'fence', 60_000);
      expect(fencing.needsOperator).toBe('false');
      expect(await groupAlive(pgid)).toBe(true);

      // A change sent to the leader just before its death (maybe queued, maybe served): its client sends it again, with its token, to whoever leads.
      const token = `fencefail-${Date.now()}`;
      const launch = { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '1', MaxCount: '1', ClientToken: token };
      const early = query(first, launch).catch((e: unknown) => e);
      const killedAt = Date.now();
      await stopPid(running.get(REPLICAS.find((r) => r.url === first)!.name)!.pid, 0, 'SIGKILL');
      running.delete(REPLICAS.find((r) => r.url === first)!.name);
      // The dead leader's fence agent may still run: it and any later one see the BMC again.
      thaw();
      // Before the new leader is elected (etcd still names the dead one), the survivor does not list it ENABLED.
      const heldBefore = await leaderInEtcd();
      const listed = arr<any>((await ok(survivor.url, { Action: 'DescribeServices', ByServiceType: 'eucalyptus' })).serviceStatuses?.item);
      const heldAfter = await leaderInEtcd();
      expect([heldBefore, heldAfter], 'the lease ran out before DescribeServices answered').toEqual([first, first]);
      expect(listed.map((s) => `${s.serviceId.name} ${s.localState} ${s.serviceId.uri}`)).toEqual([
        `clc NOTREADY ${first}/services/Eucalyptus`, `clc@127.0.106.254-${survivor.port} DISABLED ${survivor.url}/services/Eucalyptus`]);
      const earlyReply = await early;

      const second = (await until('the survivor serving changes', async () => {
        const r = await query(survivor.url, { Action: 'CreateTags', 'ResourceId.1': ids[0]!, 'Tag.1.Key': 'after', 'Tag.1.Value': 'failover' });
        return r.status === 200 ? survivor.url : `${r.status}`;
      }, (v) => v === survivor.url, 60_000));
      const tookOverMs = Date.now() - killedAt;
      console.log(`CLC leader ${first} killed with the fence of ${victim} in flight; ${second} serves changes ${tookOverMs} ms later (lease TTL ${TTL_S} s)`);
      expect(tookOverMs).toBeLessThanOrEqual(2 * TTL_S * 1000);
      expect(await leaderInEtcd()).toBe(second);

      const fenced = await until('FENCED at the new leader', async () => {
        const elsewhere = await runningCopies(others);
        const rec = await hostHa(second, victim);
        // Fence before restart: nothing of the victim runs elsewhere until the new leader says FENCED.
        if (rec?.state !== 'FENCED') expect(ids.filter((id) => elsewhere.has(id)), 'restarted before FENCED').toEqual([]);
        return rec;
      }, (v) => v?.state === 'FENCED', 90_000);
      expect(fenced.fencedBy).toBe('agent');
      console.log(`${victim} FENCED ${Date.now() - killedAt} ms after the kill: ${arr<any>(fenced.eventSet?.item).filter((e) => e.toState === 'FENCED').map((e) => e.message).join('; ')}`);
      expect(await groupAlive(pgid)).toBe(false);

      // Each instance runs exactly once afterwards, on another host.
      const copies = await until('the victim\'s instances running elsewhere, once each', () => runningCopies(others),
        (m) => m instanceof Map && ids.every((id) => m.get(id)?.length === 1), 90_000);
      for (const id of ids) expect(copies.get(id), id).toHaveLength(1);

      // Powered off exactly once, never powered on or cycled, as the BMC saw it.
      const power = powerLog().slice(powerBefore);
      console.log(`${victim}'s BMC power log since the failure:\n${power}`);
      expect(powerActions(power), power).toEqual({ offs: 1, onsOrCycles: 0 });
      // One fencing episode, resumed from the stored state: one FENCING and one FENCED in the (shared) HA event log, one attempt.
      const events = arr<any>(fenced.eventSet?.item);
      expect(events.filter((e) => e.toState === 'FENCING').map((e) => e.message), 'fenced again from scratch').toHaveLength(1);
      expect(events.filter((e) => e.toState === 'FENCED')).toHaveLength(1);
      expect(fenced.fenceAttempts).toBe('1');

      // The change sent before the kill, sent again to the new leader: served, and run once.
      const again = await ok(second, launch);
      const launched = arr<any>(again.instancesSet.item).map((i) => i.instanceId as string);
      expect(launched).toHaveLength(1);
      if (!(earlyReply instanceof Error) && (earlyReply as ReplicaReply).status === 200) {
        expect(arr<any>((earlyReply as ReplicaReply).doc.RunInstancesResponse.instancesSet.item).map((i) => i.instanceId)).toEqual(launched);
      }
      const all = arr<any>((await ok(second, { Action: 'DescribeInstances', 'Filter.1.Name': 'client-token', 'Filter.1.Value.1': token })).reservationSet?.item)
        .flatMap((r) => arr<any>(r.instancesSet.item));
      expect(all.map((i) => i.instanceId)).toEqual(launched);
      await until('the late launch running once', () => runningCopies(others), (m) => m instanceof Map && m.get(launched[0]!)?.length === 1, 60_000);
    } finally {
      thaw();
    }
    expect(await isAlive(bmc.bmcPid)).toBe(true);
  }, 400_000);

  it('kill -9 of the leader CC with the fence in flight: the other CC takes over within 2×TTL, the fence completes once, the restart goes through the new CC', async () => {
    const clc = (await until('a CLC leader in etcd', leaderInEtcd, (v) => typeof v === 'string' && REPLICAS.some((r) => r.url === v)))!;
    // The first case's host stays FENCED (unhealthy): let one more fail without the storm guard holding it.
    await ok(clc, { Action: 'ConfigureHAForCluster', Partition: 'cluster01', MaxUnhealthy: '2' });
    const [other, victim, spare] = cloud.nodeHosts as [string, string, string];
    await until('the victim AVAILABLE', () => hostHa(clc, victim), (v) => v?.state === 'AVAILABLE');
    // One more instance on the victim: the others out of service meanwhile (the first case's host is fenced already, or stays out).
    const out = [spare, ...((await hostHa(clc, other))?.state === 'FENCED' ? [] : [other])];
    for (const h of out) await ok(clc, { Action: 'DisableService', Type: 'NODE', Host: h });
    const run = await ok(clc, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '1', MaxCount: '1' });
    const launched = arr<any>(run.instancesSet.item).map((i) => i.instanceId as string);
    await ok(clc, { Action: 'EnableService', Type: 'NODE', Host: spare });
    // Everything the victim runs when it fails (the first case may have restarted some there too).
    const onVictim = await until('the instance running on the victim', () => runningCopies([victim]), (m) => m instanceof Map && launched.every((id) => m.get(id)?.length === 1));
    const ids = [...onVictim.keys()];

    const bmc = bmcs.get(victim)!;
    const pgid = (await bmc.hostPgid())!;
    const { powerLog, powerBefore } = powerLogOf(bmc);
    const firstCc = (await until('a CC leader in etcd', ccLeaderInEtcd, (v) => v !== undefined && CCS.some((c) => c.url === v.url)))!;
    const thaw = freezeBmc(bmc);
    try {
      killHost(bmc);
      await until('the CLC fencing the victim (fence agent in flight)', async () => {
        const elsewhere = await runningCopies([spare]);
        expect(ids.filter((id) => elsewhere.has(id)), 'restarted before FENCED').toEqual([]);
        return hostHa(clc, victim);
      }, (v) => v?.state === 'FENCING' && v.operation?.kind === 'fence', 60_000);
      // The CC leader dies with the fence in flight (it took the DisableService of the victim on the way in).
      const victimCc = CCS.find((c) => c.url === firstCc.url)!;
      const survivorCc = CCS.find((c) => c.url !== firstCc.url)!;
      const killedAt = Date.now();
      await stopPid(running.get(victimCc.name)!.pid, 0, 'SIGKILL');
      running.delete(victimCc.name);
      thaw();
      const secondCc = (await until('a new CC leader in etcd', ccLeaderInEtcd, (v) => v !== undefined && v.url !== firstCc.url, 60_000))!;
      const tookOverMs = Date.now() - killedAt;
      console.log(`CC leader ${firstCc.url} killed with the fence of ${victim} in flight; ${secondCc.url} elected ${tookOverMs} ms later (lease TTL ${TTL_S} s)`);
      expect(secondCc.url).toBe(survivorCc.url);
      expect(BigInt(secondCc.epoch) > BigInt(firstCc.epoch)).toBe(true);
      expect(tookOverMs).toBeLessThanOrEqual(2 * TTL_S * 1000);

      const fenced = await until('FENCED', async () => {
        const elsewhere = await runningCopies([spare]);
        const rec = await hostHa(clc, victim);
        if (rec?.state !== 'FENCED') expect(ids.filter((id) => elsewhere.has(id)), 'restarted before FENCED').toEqual([]);
        return rec;
      }, (v) => v?.state === 'FENCED', 90_000);
      expect(await groupAlive(pgid)).toBe(false);
      // Restarted once, through the new CC leader, on the spare host.
      const copies = await until('the instance running on the spare host, once', () => runningCopies([spare]),
        (m) => m instanceof Map && ids.every((id) => m.get(id)?.length === 1), 120_000);
      for (const id of ids) expect(copies.get(id), id).toEqual([spare]);
      const power = powerLog().slice(powerBefore);
      console.log(`${victim}'s BMC power log since the failure:\n${power}`);
      expect(powerActions(power), power).toEqual({ offs: 1, onsOrCycles: 0 });
      const events = arr<any>(fenced.eventSet?.item);
      const episode = events.slice(events.map((e) => e.toState).lastIndexOf('AVAILABLE'));
      expect(episode.filter((e) => e.toState === 'FENCING')).toHaveLength(1);
      expect(episode.filter((e) => e.toState === 'FENCED')).toHaveLength(1);
    } finally {
      thaw();
    }
  }, 400_000);
});
