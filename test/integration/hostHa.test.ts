/**
 * Host HA in a whole cloud of real processes (issue 6), on 127.0.33.0/24 with mutual TLS: a CLC
 * running its HA runtime, a CC, and four simulated hosts, each one process group (its simhv, whose
 * VMs write disks and a heartbeat on shared storage, and its NC) behind an ipmi_sim BMC (UDP
 * 16251-16254) whose chassis power is that group (scripts/fencing-lab.sh). Ferry fences through the
 * real fence_ipmilan. HA is configured through the admin API (ConfigureHAForCluster,
 * ConfigureHAForHost with the BMC settings, EnableHAForCluster) once the CLC runs; nothing is written
 * to its stores beforehand. Every process is stopped by PID.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HaOwedRepair, HaState } from '../../clc/ha/hostHaState.js';
import { decodeDiskCounter } from '../../nc/hypervisor/sim/hostLedger.js';
import { cloudLayout } from '../../scripts/cloudLayout.js';
import { spawnDaemon, stopPid } from '../../scripts/daemon.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';
import { firstPowerStatusesAnswered, haProbesOf } from '../helpers/haRecords.js';
import { groupAlive, haSettingParams, installFencingLab, isAlive, LAB_HA_SETTINGS, startLabBmc, type LabBmc } from '../helpers/fencingLab.js';

const SUBNET = 33;
const USER = 'ferry';
const PASSWORD = 'ha-pw-33';

const exec = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

interface Inst { instanceId: string; placement?: { availabilityZone?: string }; instanceState: { name: string } }

describe('host HA in a running cloud (fence_ipmilan, ipmi_sim, real tiers)', () => {
  const cloud = new TestCloud(SUBNET, 4, { clcArgs: ['--ha-tick-ms', '200', '--auth', 'sigv4'], simArgs: ['--write-interval-ms', '200'], ccArgs: [] });
  const bmcs = new Map<string, LabBmc>();
  const specs = cloudLayout({ baseDir: cloud.baseDir, controllerHost: cloud.controller, nodeHosts: cloud.nodeHosts, simArgs: ['--write-interval-ms', '200'] });
  /** NCs restarted by a test (as a service supervisor would), outside their BMC's process group: stopped by PID. */
  const restartedNcs: number[] = [];

  type HaRec = {
    state: HaState; needsOperator: boolean; owed: HaOwedRepair | null; fenceAttempts: number;
  };
  const haHost = (h: string): HaRec | undefined => {
    try {
      const doc = JSON.parse(readFileSync(join(cloud.baseDir, 'clc', 'clc.json'), 'utf8')) as { data: { ha: { hosts: Record<string, HaRec> } } };
      return doc.data.ha.hosts[h];
    } catch {
      return undefined; // being replaced
    }
  };
  const transitions = (h: string): string[] => {
    const doc = JSON.parse(readFileSync(join(cloud.baseDir, 'clc', 'clc.json'), 'utf8')) as { data: { ha: { events: { host: string; kind: string; to?: string }[] } } };
    return doc.data.ha.events.filter((e) => e.host === h && e.kind === 'transition').map((e) => e.to ?? '');
  };
  const messages = (h: string): string[] => {
    const doc = JSON.parse(readFileSync(join(cloud.baseDir, 'clc', 'clc.json'), 'utf8')) as { data: { ha: { events: { host: string; message: string }[] } } };
    return doc.data.ha.events.filter((e) => e.host === h).map((e) => e.message);
  };
  const waitFor = async (what: string, done: () => boolean | Promise<boolean>, ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      if (await done()) return;
      await sleep(100);
    }
    const states = cloud.nodeHosts.map((h) => `${h} ${haHost(h)?.state ?? '?'}: ${messages(h).slice(-4).join(' | ')}`);
    // What a failure on a busy CI machine needs to be read: the last words of each host's NC and power.
    const tail = (file: string) => {
      try {
        return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-3).join(' / ');
      } catch {
        return '(none)';
      }
    };
    const hosts = cloud.nodeHosts.map((h) => `${h} nc: ${tail(join(cloud.baseDir, 'logs', `nc-${h}.log`))}; power: ${tail(join(cloud.baseDir, 'bmc', h, 'host.log'))}`);
    throw new Error(`timed out waiting for ${what}; HA: ${states.join('; ')}\nhosts: ${hosts.join('\n')}`);
  };
  /**
   * A witness that the CLC's HA kept running its passes (instead of "nothing happened in N ms"): some
   * health-watched host's next check moved `rounds` intervals on, so the tick that would act has run.
   */
  const haPasses = async (rounds: number): Promise<void> => {
    // The next checks are paced in the CLC's memory (not written for themselves): DescribeHostHA shows them.
    const latest = async () => Math.max(0, ...[...(await haProbesOf((q) => cloud.query(q), cloud.nodeHosts)).values()].map((p) => p.nextHealthCheckAt));
    const start = await latest();
    await waitFor(`${rounds} more health-check rounds in the CLC`, async () => (await latest()) >= start + rounds * LAB_HA_SETTINGS.healthCheckIntervalMs, 30_000);
  };
  /** Where the CLC says each instance runs (DescribeInstances: the node in the item). */
  const instances = async (): Promise<{ id: string; state: string; host: string }[]> => {
    const r = await cloud.query({ Action: 'DescribeInstances' });
    const set = (r.doc.DescribeInstancesResponse as { reservationSet?: { item?: unknown } }).reservationSet?.item;
    const reservations = (Array.isArray(set) ? set : set ? [set] : []) as { instancesSet: { item: unknown } }[];
    return reservations.flatMap((res) => {
      const items = (Array.isArray(res.instancesSet.item) ? res.instancesSet.item : [res.instancesSet.item]) as (Inst & Record<string, unknown>)[];
      return items.map((i) => ({ id: i.instanceId, state: i.instanceState.name, host: String((i as { nodeHost?: string }).nodeHost ?? '') }));
    });
  };
  const powerOn = async (host: string): Promise<void> => {
    const port = String(16251 + cloud.nodeHosts.indexOf(host));
    await exec('ipmitool', ['-I', 'lanplus', '-C', '3', '-H', host, '-p', port, '-U', USER, '-P', PASSWORD, 'chassis', 'power', 'on'], { timeout: 20_000 });
  };
  /** An admin request that must succeed. */
  const admin = async (params: Record<string, string>): Promise<void> => {
    const r = await cloud.query(params);
    if (r.status !== 200) throw new Error(`${params.Action ?? '?'} answered ${r.status}: ${r.text}`);
  };
  /** The node's maintenance state as DescribeNodes reports it. */
  const nodeState = async (host: string): Promise<string> => {
    const r = await cloud.query({ Action: 'DescribeNodes', ByHost: host });
    const item = (r.doc.DescribeNodesResponse as { nodeSet?: { item?: { nodeState?: string } } }).nodeSet?.item;
    return item?.nodeState ?? '';
  };
  const diskOf = (host: string, id: string) => join(cloud.baseDir, 'storage', host, `${id}.disk`);
  const writing = async (host: string, id: string): Promise<boolean> => {
    const { statSync } = await import('node:fs');
    try {
      return Date.now() - statSync(diskOf(host, id)).mtimeMs < 1500;
    } catch {
      return false;
    }
  };

  beforeAll(async () => {
    await installFencingLab();
    await mkdir(join(cloud.baseDir, 'logs'), { recursive: true });
    // The lab: each host's processes are the chassis power of its ipmi_sim BMC.
    for (const [i, host] of cloud.nodeHosts.entries()) {
      const dir = join(cloud.baseDir, 'bmc', host);
      await mkdir(dir, { recursive: true });
      const mine = specs.filter((s) => s.name === `simhv-${host}` || s.name === `nc-${host}`);
      const lines = mine.map((s) => `node ${sh(join(ROOT, s.entry))} ${s.args.map(sh).join(' ')} >>${sh(join(cloud.baseDir, 'logs', `${s.name}.log`))} 2>&1 & echo $! > ${sh(join(dir, `${s.name.split('-')[0]}.pid`))}`);
      const script = join(cloud.baseDir, `host-${host}.sh`);
      await writeFile(script, `#!/usr/bin/env bash\n${lines.join('\n')}\nwait\n`);
      const bmc = await startLabBmc({ addr: host, port: 16251 + i, user: USER, password: PASSWORD, hostCommand: ['bash', script], dir });
      bmcs.set(host, bmc);
    }
    await cloud.start(['cc', 'clc']);
    // HA as an operator sets it up: small timings, storm bound 1, a BMC per host, then on.
    await admin({ Action: 'ConfigureHAForCluster', ...haSettingParams(LAB_HA_SETTINGS) });
    await admin({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', MaxUnhealthy: '1' });
    for (const [i, host] of cloud.nodeHosts.entries()) {
      await admin({ Action: 'ConfigureHAForHost', Host: host, Agent: 'fence_ipmilan', Address: host, Port: String(16251 + i), Username: USER, Password: PASSWORD, TimeoutMs: '6000' });
    }
    expect(readFileSync(join(cloud.baseDir, 'clc', 'clc.json'), 'utf8')).not.toContain(PASSWORD);
    await admin({ Action: 'EnableHAForCluster', Partition: 'cluster01' });
    await waitFor('every host AVAILABLE', () => cloud.nodeHosts.every((h) => haHost(h)?.state === 'AVAILABLE'), 40_000);
    // Every host's first power status has answered ("on"); the next is an hour away.
    await waitFor('every host\'s first BMC power status', () => firstPowerStatusesAnswered((q) => cloud.query(q), cloud.nodeHosts), 60_000);
  }, 240_000);

  afterAll(async () => {
    for (const pid of restartedNcs) await stopPid(pid);
    await cloud.stopAll();
    for (const bmc of bmcs.values()) {
      const pg = await bmc.hostPgid();
      await bmc.stop();
      if (pg && (await groupAlive(pg))) process.kill(-pg, 'SIGKILL');
    }
    await cloud.destroy();
  }, 60_000);

  it('a crashed host is detected, fenced through its BMC, and its instances restart elsewhere only once FENCED', async () => {
    const r = await cloud.query({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '2', MaxCount: '2' });
    expect(r.status).toBe(200);
    const launched = await instances();
    const victim = launched[0]?.host ?? '';
    const onVictim = launched.filter((i) => i.host === victim).map((i) => i.id);
    expect(onVictim.length).toBeGreaterThan(0);
    await waitFor('the VMs write', async () => (await Promise.all(onVictim.map((id) => writing(victim, id)))).every(Boolean), 10_000);

    // The host dies behind Ferry's back: its whole group (NC, simhv and so its VMs).
    const bmc = bmcs.get(victim) as LabBmc;
    const pg = await bmc.hostPgid();
    if (pg) process.kill(-pg, 'SIGKILL');
    await waitFor('FENCED', () => haHost(victim)?.state === 'FENCED', 40_000);
    await waitFor('the instances run elsewhere', async () => {
      const now = await instances();
      return onVictim.every((id) => now.some((i) => i.id === id && i.state === 'running' && i.host !== victim && i.host !== ''));
    }, 30_000);
    for (const id of onVictim) {
      const host = (await instances()).find((i) => i.id === id)?.host ?? '';
      await waitFor(`${id} writes on ${host}`, () => writing(host, id), 10_000);
    }
    const path = transitions(victim);
    expect(path.slice(path.indexOf('SUSPECT'))).toEqual(expect.arrayContaining(['FENCING', 'FENCED']));
    expect(path.indexOf('FENCING')).toBeLessThan(path.indexOf('FENCED'));
    const clcLog = cloud.log('clc');
    const fencedAt = clcLog.indexOf('"to":"FENCED"') >= 0 ? clcLog.indexOf('"to":"FENCED"') : clcLog.indexOf('instances of a fenced host restarted');
    expect(fencedAt).toBeGreaterThanOrEqual(0);

    // Powered on again: it goes back into maintenance, its obsolete copies are destroyed, and only
    // an EnableService returns it to service (and moves HA on from FENCED).
    await powerOn(victim);
    await waitFor('obsolete copies destroyed', () => cloud.log('clc').includes('obsolete copies on a fenced host that came back destroyed'), 40_000);
    expect(haHost(victim)?.state).toBe('FENCED');
    const enabled = await cloud.query({ Action: 'EnableService', Type: 'NODE', Host: victim });
    expect(enabled.status).toBe(200);
    await waitFor('AVAILABLE again', () => haHost(victim)?.state === 'AVAILABLE', 20_000);
    expect(transitions(victim).slice(-2)).toEqual(['INELIGIBLE', 'AVAILABLE']);
  }, 150_000);

  it('a fenced host returned by EnableService: the obsolete copy is destroyed, never started; its auto-repair-off instance runs again there, once', async () => {
    // Both instances on one host: the others are in maintenance while they launch.
    const victim = cloud.nodeHosts.find((h) => haHost(h)?.state === 'AVAILABLE') ?? '';
    const others = cloud.nodeHosts.filter((h) => h !== victim);
    for (const h of others) await admin({ Action: 'DisableService', Type: 'NODE', Host: h });
    const before = new Set((await instances()).map((i) => i.id));
    await admin({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '2', MaxCount: '2' });
    const launched = (await instances()).filter((i) => !before.has(i.id));
    expect(launched.map((i) => i.host)).toEqual([victim, victim]);
    const [kept, moved] = launched.map((i) => i.id) as [string, string];
    await admin({ Action: 'ConfigureHAForInstance', InstanceId: kept, AutoRepair: 'off' });
    for (const h of others) await admin({ Action: 'EnableService', Type: 'NODE', Host: h });
    await waitFor('every host AVAILABLE', () => cloud.nodeHosts.every((h) => haHost(h)?.state === 'AVAILABLE'), 40_000);
    await waitFor('both VMs write', async () => (await writing(victim, kept)) && (await writing(victim, moved)), 10_000);
    const counterAt = () => decodeDiskCounter(readFileSync(diskOf(victim, kept), 'utf8'));

    const said = messages(victim).length;
    const pg = await (bmcs.get(victim) as LabBmc).hostPgid();
    if (pg) process.kill(-pg, 'SIGKILL');
    const lastCount = counterAt();
    await waitFor('FENCED', () => haHost(victim)?.state === 'FENCED', 40_000);
    await waitFor(`${moved} running elsewhere`, async () => (await instances()).some((i) => i.id === moved && i.state === 'running' && i.host !== victim && i.host !== ''), 30_000);
    const movedTo = (await instances()).find((i) => i.id === moved)?.host ?? '';
    await waitFor(`${moved} writes on ${movedTo}`, () => writing(movedTo, moved), 10_000);

    // Powered on again; EnableService is refused until its NC answers (the obsolete copy cannot be destroyed before).
    await powerOn(victim);
    await waitFor('EnableService accepted', async () => (await cloud.query({ Action: 'EnableService', Type: 'NODE', Host: victim })).status === 200, 40_000);
    const powerOnDone = () => messages(victim).slice(said).find((m) => m.startsWith(`power-on of its own instances of ${victim}, attempt`) && m.includes(': done'));
    await waitFor(`${kept} powered on again on ${victim}`, () => powerOnDone() !== undefined, 30_000);
    expect(powerOnDone()).toContain(`1 powered on (${kept})`);
    // Its own VM, from its own disk: the disk's counter goes on from where the crash left it.
    await waitFor(`${kept} writes on ${victim}`, () => writing(victim, kept), 10_000);
    expect(counterAt()).toBeGreaterThanOrEqual(lastCount);
    const now = await instances();
    expect(now.filter((i) => i.id === kept)).toEqual([{ id: kept, state: 'running', host: victim }]);
    expect(now.filter((i) => i.id === moved)).toEqual([{ id: moved, state: 'running', host: movedTo }]);
    // Exactly once in the cloud: no other host ever ran the kept one, and the victim's copy of the moved one was destroyed, never started.
    for (const h of others) expect(existsSync(diskOf(h, kept))).toBe(false);
    expect(existsSync(diskOf(victim, moved))).toBe(false);
    const ncLog = readFileSync(join(cloud.baseDir, 'logs', `nc-${victim}.log`), 'utf8');
    expect(ncLog.split('\n').filter((l) => l.includes('powered on again')).map((l) => (JSON.parse(l) as { instanceId: string }).instanceId)).toEqual([kept]);
    await waitFor('AVAILABLE again', () => haHost(victim)?.state === 'AVAILABLE', 20_000);
    // An ordinary instance again for the cases below (a crash of its host restarts it elsewhere).
    await admin({ Action: 'ConfigureHAForInstance', InstanceId: kept, AutoRepair: 'inherit' });
  }, 180_000);

  it('a CLC restart in the middle of a host\'s failure episode resumes it to FENCED and the restart', async () => {
    const now = await instances();
    const victim = cloud.nodeHosts.find((h) => haHost(h)?.state === 'AVAILABLE' && now.some((i) => i.host === h && i.state === 'running'))
      ?? cloud.nodeHosts.find((h) => haHost(h)?.state === 'AVAILABLE') ?? '';
    await cloud.query({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '1', MaxCount: '1' });
    const onVictim = (await instances()).filter((i) => i.host === victim && i.state !== 'terminated').map((i) => i.id);
    const pg = await (bmcs.get(victim) as LabBmc).hostPgid();
    if (pg) process.kill(-pg, 'SIGKILL');
    await waitFor('SUSPECT or CHECKING', () => ['SUSPECT', 'CHECKING'].includes(haHost(victim)?.state ?? ''), 20_000);
    await cloud.crash('clc');
    await cloud.start(['clc']);
    await waitFor('FENCED after the restart', () => haHost(victim)?.state === 'FENCED', 40_000);
    await waitFor('the instances run elsewhere', async () => {
      const after = await instances();
      return onVictim.every((id) => after.some((i) => i.id === id && i.state === 'running' && i.host !== victim && i.host !== ''));
    }, 30_000);
    await powerOn(victim);
    await waitFor('obsolete copies destroyed', async () => {
      const r = await cloud.query({ Action: 'EnableService', Type: 'NODE', Host: victim });
      return r.status === 200;
    }, 40_000);
    await waitFor('AVAILABLE again', () => haHost(victim)?.state === 'AVAILABLE', 20_000);
  }, 150_000);

  it('a dead BMC leaves the crashed host FENCING, waiting for an operator, and nothing restarts', async () => {
    const victim = cloud.nodeHosts.find((h) => haHost(h)?.state === 'AVAILABLE') ?? '';
    const bmc = bmcs.get(victim) as LabBmc;
    const pg = await bmc.hostPgid();
    const before = (await instances()).filter((i) => i.host === victim && i.state === 'running').map((i) => i.id);
    await bmc.stop();
    bmcs.delete(victim);
    if (pg) process.kill(-pg, 'SIGKILL');
    await waitFor('FENCING, needing an operator', () => haHost(victim)?.state === 'FENCING' && haHost(victim)?.needsOperator === true, 60_000);
    const attempts = haHost(victim)?.fenceAttempts;
    await haPasses(3);
    expect(haHost(victim)).toMatchObject({ state: 'FENCING', needsOperator: true, fenceAttempts: attempts });
    const after = await instances();
    for (const id of before) expect(after.find((i) => i.id === id)?.host).toBe(victim);
    // EnableService cannot bring it back meanwhile.
    const r = await cloud.query({ Action: 'EnableService', Type: 'NODE', Host: victim });
    expect(r.status).not.toBe(200);
  }, 120_000);

  it('a host whose NC dies while its VMs keep writing becomes DEGRADED, never fenced; once its NC is back it is disabled and emptied', async () => {
    const up = cloud.nodeHosts.filter((h) => haHost(h)?.state === 'AVAILABLE');
    await cloud.query({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '2', MaxCount: '2' });
    const now = await instances();
    const host = up.find((h) => now.some((i) => i.host === h && i.state === 'running')) ?? up[0] ?? '';
    const mine = now.filter((i) => i.host === host && i.state === 'running').map((i) => i.id);
    expect(mine.length).toBeGreaterThan(0);
    await waitFor('its VMs write', async () => writing(host, now.find((i) => i.host === host && i.state === 'running')?.id ?? ''), 10_000);
    const bmc = bmcs.get(host) as LabBmc;
    const pg = await bmc.hostPgid();
    const ncPid = Number(readFileSync(join(bmc.dir, 'nc.pid'), 'utf8'));
    const seen = transitions(host).length;
    const said = messages(host).length;
    process.kill(ncPid, 'SIGKILL');
    await waitFor('DEGRADED', () => haHost(host)?.state === 'DEGRADED', 40_000);
    expect(transitions(host).slice(seen)).not.toContain('FENCING');
    expect(pg !== null && (await groupAlive(pg))).toBe(true);
    expect(await writing(host, now.find((i) => i.host === host && i.state === 'running')?.id ?? '')).toBe(true);
    const simPid = Number(readFileSync(join(bmc.dir, 'simhv.pid'), 'utf8'));
    expect(await isAlive(simPid)).toBe(true);
    // The dead-BMC case above left its host FENCING (unhealthy): with this one that is 2 of 4, beyond
    // MaxUnhealthy 1, so the storm guard holds the owed drain (issue 19): kept, not started.
    const othersUnhealthy = cloud.nodeHosts.filter((h) => h !== host && !['AVAILABLE', 'DISABLED', 'INELIGIBLE'].includes(haHost(h)?.state ?? 'AVAILABLE')).length;
    if (othersUnhealthy > 0) {
      await waitFor('the drain held by the storm guard', () => haHost(host)?.owed?.stormHeld === true, 20_000);
      expect(haHost(host)?.owed).toMatchObject({ kind: 'drain', attempts: 0, heldBy: expect.stringMatching(/^storm protection: .*maxUnhealthy 1; owed drains wait$/) });
      expect(messages(host).some((m) => m.startsWith(`drain of ${host}, attempt`))).toBe(false);
      // The operator widens the bound: the drain starts.
      await admin({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', MaxUnhealthy: String(othersUnhealthy + 1) });
    }
    // The drain (DisableService, then MigrateInstances) is owed: each attempt waits for the dead NC and is retried.
    await waitFor('a drain attempt that waits for the NC', () => messages(host).some((m) => m.startsWith(`drain of ${host}, attempt`) && m.includes('not done')), 20_000);
    expect(haHost(host)?.owed?.kind).toBe('drain');
    expect(await nodeState(host)).not.toBe('disabled');

    // Its NC comes back, as a service supervisor would restart it: the health check passes, yet the
    // host that lost control while its VMs ran is taken out of service and emptied.
    const ncSpec = specs.find((s) => s.name === `nc-${host}`);
    if (!ncSpec) throw new Error(`no NC spec for ${host}`);
    const nc = await spawnDaemon(ncSpec, { root: ROOT, logFile: join(cloud.baseDir, 'logs', `${ncSpec.name}.log`) });
    restartedNcs.push(nc.pid);
    await waitFor('the owed drain done', () => haHost(host) !== undefined && haHost(host)?.owed === null, 90_000);
    expect(messages(host).some((m) => m.startsWith(`drain of ${host}, attempt`) && m.includes(': done'))).toBe(true);
    expect(await nodeState(host)).toBe('disabled');
    const after = await instances();
    expect(after.filter((i) => i.host === host && i.state !== 'terminated')).toEqual([]);
    for (const id of mine) {
      const where = after.find((i) => i.id === id);
      expect(where?.state).toBe('running');
      expect(where?.host).not.toBe(host);
      // Its VM really runs on the other host's hypervisor: its disk there is being written.
      await waitFor(`${id} writes on ${where?.host ?? '?'}`, () => writing(where?.host ?? '', id), 10_000);
    }
    const path = transitions(host).slice(seen);
    for (const s of ['RECOVERING', 'FENCING', 'FENCED']) expect(path).not.toContain(s);
    // Moved by live migration, never restarted: HA never spoke of a power action or a restart for it.
    expect(messages(host).slice(said).filter((m) => /restart|power cycle|fenced/.test(m))).toEqual([]);
    expect(pg !== null && (await groupAlive(pg))).toBe(true);
    // Out of service until an operator returns it; HA leaves a host in maintenance alone.
    await waitFor('INELIGIBLE (in maintenance)', () => haHost(host)?.state === 'INELIGIBLE', 20_000);
    // The storm bound the next case relies on.
    await admin({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', MaxUnhealthy: '1' });
  }, 180_000);

  it('a crash beyond maxUnhealthy (1) fences nobody: storm protection holds the fence back', async () => {
    const victim = cloud.nodeHosts.find((h) => haHost(h)?.state === 'AVAILABLE') ?? '';
    const bmc = bmcs.get(victim) as LabBmc;
    const pg = await bmc.hostPgid();
    const seen = transitions(victim).length;
    if (pg) process.kill(-pg, 'SIGKILL');
    await waitFor('held back by storm protection', () => messages(victim).some((m) => m.includes('held back: storm protection')), 40_000);
    await haPasses(3);
    expect(transitions(victim).slice(seen)).not.toContain('FENCING');
  }, 90_000);
});
