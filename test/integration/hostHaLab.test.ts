/**
 * Host HA's runner against real power management, before the cloud is wired in: ipmi_sim BMCs on
 * 127.0.31.0/24 (UDP 16240-16249) driven by the real fence_ipmilan, and simulated hosts that are
 * process groups: a stand-in NC (health = it is alive) and a guest loop that touches the host's
 * heartbeat on a shared directory (activity = the real neighbour check, nc/ha/activityCheck.ts).
 * The DisableService/MigrateInstances/restart paths are recorded by a fake (not wired yet).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeProvider } from '../../clc/ha/composedProvider.js';
import { HaRunner, haSectionOf, type HaSectionStore } from '../../clc/ha/haRunner.js';
import type { HaState } from '../../clc/ha/hostHaState.js';
import { FenceAgentDriver } from '../../clc/ha/power/fenceAgentDriver.js';
import { compileFenceAgentConfig } from '../../clc/ha/power/fenceAgentProtocol.js';
import type { PowerDriver } from '../../clc/ha/power/powerDriver.js';
import { openMemoryClcStore } from '../../clc/state/clcStore.js';
import { checkActivity, fsSharedStorage } from '../../nc/ha/activityCheck.js';
import { systemClock } from '../../shared/clock.js';
import { FakeHa } from '../clc/ha/fakeHa.js';
import { groupAlive, installFencingLab, isAlive, startLabBmc, type LabBmc } from '../helpers/fencingLab.js';

const USER = 'ferry';
const PASSWORD = 'lab-pw-8';
/** $1 shared dir, $2 host, $3 BMC dir: a stand-in NC (its pid in nc.pid) and a guest touching the heartbeat. */
const HOST_SCRIPT = 'mkdir -p "$1/$2"; sleep 100000 & echo $! > "$3/nc.pid"; while :; do touch "$1/$2/heartbeat"; sleep 0.1; done';

const SETTINGS = {
  healthCheckIntervalMs: 200, healthCheckTimeoutMs: 2000,
  activityCheckInitialDelayMs: 200, activityCheckIntervalMs: 400, activityCheckTimeoutMs: 2000,
  activityCheckMaxAttempts: 3, activityCheckFailureRatio: 0.5,
  degradedMaxPeriodMs: 60_000, recoverTimeoutMs: 8000, recoverWaitPeriodMs: 5000, recoverFailureThreshold: 1, fenceTimeoutMs: 3000,
  // The lab's BMC reports a crashed host as powered off (its processes are its power), which the
  // power watch rightly fences at once: kept out of these cases (hostHaPowerWatch.test.ts has it).
  powerCheckIntervalMs: 3_600_000,
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Lab {
  readonly shared: string;
  readonly bmcs: Map<string, LabBmc>;
}

async function ncPid(bmc: LabBmc): Promise<number> {
  return Number(await readFile(join(bmc.dir, 'nc.pid'), 'utf8'));
}

/** A runner over `hosts` (one partition), with the real provider parts and a recording fake for the CLC paths. */
async function startRunner(lab: Lab, hosts: readonly string[], opts: { maxUnhealthy: string; threshold?: number; powerCalls?: string[] }) {
  const section: HaSectionStore = haSectionOf(await openMemoryClcStore());
  await section.update((ha) => {
    ha.global.settings = { ...SETTINGS, recoverFailureThreshold: opts.threshold ?? SETTINGS.recoverFailureThreshold };
    ha.partitions.lab = { enabled: true, settings: {}, maxUnhealthy: opts.maxUnhealthy };
  });
  const drivers = new Map<string, PowerDriver>();
  for (const host of hosts) {
    const bmc = lab.bmcs.get(host);
    if (!bmc) throw new Error(`no BMC for ${host}`);
    const real = new FenceAgentDriver(compileFenceAgentConfig({
      agent: 'fence_ipmilan', target: host, password: PASSWORD, timeoutMs: SETTINGS.fenceTimeoutMs,
      options: { ip: bmc.opts.addr, ipport: String(bmc.opts.port), username: USER },
    }));
    const calls = opts.powerCalls ?? [];
    drivers.set(host, {
      status: () => real.status(),
      on: () => real.on(),
      off: () => { calls.push(`off ${host}`); return real.off(); },
      reboot: () => { calls.push(`reboot ${host}`); return real.reboot(); },
    });
  }
  const actions = new FakeHa();
  const provider = composeProvider({
    health: {
      async isHealthy(ref) {
        const bmc = lab.bmcs.get(ref.host);
        const alive = bmc ? await isAlive(await ncPid(bmc)) : false;
        return { healthy: alive, detail: alive ? 'NC answers' : 'NC does not answer' };
      },
    },
    activity: { hasActivity: (ref, since) => checkActivity(fsSharedStorage(lab.shared), ref.host, since) },
    facts: { inMaintenance: async () => false, neighbours: async () => 1 },
    power: (host) => drivers.get(host),
  });
  const runner = new HaRunner({ store: section, provider, actions, clock: systemClock });
  await runner.syncHosts(hosts.map((host) => ({ host, partition: 'lab' })));
  await runner.evaluateEligibility();
  const state = (h: string): HaState | undefined => section.read().hosts[h]?.state;
  /** Ticks every 50 ms until `done` or `ms` pass. */
  const drive = async (done: () => boolean, ms: number) => {
    const until = Date.now() + ms;
    while (!done() && Date.now() < until) {
      await runner.tick();
      await sleep(50);
    }
  };
  return { section, runner, actions, state, drive };
}

/** Kills a simulated host's whole process group (a crash, not a power-off: the BMC only sees it gone). */
async function crash(bmc: LabBmc): Promise<void> {
  const pgid = await bmc.hostPgid();
  if (pgid) process.kill(-pgid, 'SIGKILL');
  for (let i = 0; i < 40 && pgid && (await groupAlive(pgid)); i++) await sleep(25);
}

describe('host HA runner with fence_ipmilan and ipmi_sim', () => {
  const lab: Lab = { shared: '', bmcs: new Map() };

  beforeAll(async () => {
    await installFencingLab();
    (lab as { shared: string }).shared = await mkdtemp(join(tmpdir(), 'ferry-shared-'));
    for (let i = 1; i <= 7; i++) {
      const host = `127.0.31.${i}`;
      const dir = `${tmpdir()}/ferry-ha-lab-${process.pid}-${i}`;
      const bmc = await startLabBmc({
        addr: host, port: 16239 + i, user: USER, password: PASSWORD,
        hostCommand: ['bash', '-c', HOST_SCRIPT, '_', lab.shared, host, dir],
        dir,
      });
      lab.bmcs.set(host, bmc);
    }
  }, 300_000);

  afterAll(async () => {
    for (const bmc of lab.bmcs.values()) await bmc.stop();
    if (lab.shared) await rm(lab.shared, { recursive: true, force: true });
  });

  it('a crashed host is detected and recovered by a power cycle through its BMC', async () => {
    const h = '127.0.31.1';
    const bmc = lab.bmcs.get(h)!;
    const r = await startRunner(lab, [h], { maxUnhealthy: '100%' });
    await r.drive(() => r.state(h) === 'AVAILABLE', 5000);
    expect(r.state(h)).toBe('AVAILABLE');
    // The watch's first power status (asked at once) has answered "on"; the next is an hour away.
    await r.drive(() => {
      const rec = r.section.read().hosts[h];
      return rec !== undefined && rec.powerProbe === null && rec.nextPowerCheckAt > Date.now() + 60_000;
    }, 20_000);
    const before = await bmc.hostPgid();
    await crash(bmc);
    await r.drive(() => r.state(h) === 'RECOVERED' || r.state(h) === 'FENCING', 20_000);
    await r.drive(() => r.state(h) === 'AVAILABLE', 10_000);
    expect(r.state(h)).toBe('AVAILABLE');
    const after = await bmc.hostPgid();
    expect(after).not.toBe(before);
    expect(await groupAlive(after ?? -1)).toBe(true);
    const path = r.section.read().events.filter((e) => e.kind === 'transition').map((e) => e.to);
    expect(path).toEqual(['AVAILABLE', 'SUSPECT', 'CHECKING', 'SUSPECT', 'CHECKING', 'SUSPECT', 'CHECKING', 'RECOVERING', 'RECOVERED', 'AVAILABLE']);
    await r.runner.idle();
  }, 60_000);

  it('a crashed host that is not to be power-cycled is disabled, fenced ("already off") and only then evacuated', async () => {
    const h = '127.0.31.2';
    const bmc = lab.bmcs.get(h)!;
    const power: string[] = [];
    const r = await startRunner(lab, [h], { maxUnhealthy: '100%', threshold: 0, powerCalls: power });
    await r.drive(() => r.state(h) === 'AVAILABLE', 5000);
    await crash(bmc);
    await r.drive(() => r.state(h) === 'FENCED', 20_000);
    expect(r.state(h)).toBe('FENCED');
    await r.runner.idle();
    expect(r.actions.calls.filter((c) => !c.startsWith('health'))).toEqual([`disable ${h}`, `evacuate ${h} (agent)`]);
    expect(power).toEqual([`off ${h}`]);
    expect(r.section.read().events.some((e) => e.to === 'FENCED' && e.message.includes('already off'))).toBe(true);
  }, 60_000);

  it('a host whose NC died but whose guests still write is DEGRADED and drained, never power-cycled or fenced', async () => {
    const h = '127.0.31.3';
    const bmc = lab.bmcs.get(h)!;
    const power: string[] = [];
    const r = await startRunner(lab, [h], { maxUnhealthy: '100%', powerCalls: power });
    await r.drive(() => r.state(h) === 'AVAILABLE', 5000);
    process.kill(await ncPid(bmc), 'SIGKILL');
    await r.drive(() => r.state(h) === 'DEGRADED', 20_000);
    expect(r.state(h)).toBe('DEGRADED');
    await r.drive(() => false, 1500);
    await r.runner.idle();
    expect(r.state(h)).toBe('DEGRADED');
    expect(r.actions.calls).toContain(`drain ${h}`);
    expect(power).toEqual([]);
    expect(await groupAlive((await bmc.hostPgid()) ?? -1)).toBe(true);
  }, 60_000);

  it('a dead BMC leaves the host waiting for an operator, never evacuated; ConfirmHostFenced completes it', async () => {
    const h = '127.0.31.4';
    const bmc = lab.bmcs.get(h)!;
    const r = await startRunner(lab, [h], { maxUnhealthy: '100%', threshold: 0 });
    await r.drive(() => r.state(h) === 'AVAILABLE', 5000);
    process.kill(bmc.bmcPid, 'SIGSTOP');
    try {
      await crash(bmc);
      await r.drive(() => r.section.read().hosts[h]?.needsOperator === true, 25_000);
      expect(r.section.read().hosts[h]).toMatchObject({ state: 'FENCING', needsOperator: true });
      await r.drive(() => false, 1000);
      expect(r.actions.calls.some((c) => c.startsWith('evacuate'))).toBe(false);
      await r.runner.deliver(h, { type: 'operatorConfirmedFenced', operator: 'admin' });
      await r.runner.idle();
      expect(r.state(h)).toBe('FENCED');
      expect(r.actions.calls).toContain(`evacuate ${h} (operator)`);
    } finally {
      process.kill(bmc.bmcPid, 'SIGCONT');
    }
  }, 60_000);

  it('a storm of failures beyond maxUnhealthy power-cycles and fences nobody, and says why', async () => {
    const hosts = ['127.0.31.5', '127.0.31.6', '127.0.31.7'];
    const power: string[] = [];
    const r = await startRunner(lab, hosts, { maxUnhealthy: '1', powerCalls: power });
    await r.drive(() => hosts.every((h) => r.state(h) === 'AVAILABLE'), 5000);
    for (const h of hosts) await crash(lab.bmcs.get(h)!);
    await r.drive(() => hosts.every((h) => r.section.read().hosts[h]?.blocked), 20_000);
    await r.drive(() => false, 1000);
    await r.runner.idle();
    expect(power).toEqual([]);
    for (const h of hosts) expect(r.section.read().hosts[h]?.blocked?.reason).toMatch(/^storm protection: 3 of 3 hosts in lab are unhealthy, more than maxUnhealthy 1/);
    expect(r.actions.calls.some((c) => /^(disable|evacuate|drain)/.test(c))).toBe(false);
  }, 60_000);
});
