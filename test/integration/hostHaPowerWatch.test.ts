/**
 * The BMC power watch (CloudStack; issue 15) against real power management: ipmi_sim BMCs on
 * 127.0.61.0/24 (UDP 18601-18602) asked by the real fence_ipmilan, each BMC's chassis power a process
 * group (the "host"). Health checks are made rare so that only the watch can notice: a host powered
 * off out of band (ipmitool chassis power off) is fenced through its BMC, whose fence answers
 * "already off", and only then evacuated; a BMC that does not answer its status is never taken for
 * "off". The CLC paths (DisableService, the restart elsewhere) are recorded by the fake.
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeProvider } from '../../clc/ha/composedProvider.js';
import { HaRunner, haSectionOf } from '../../clc/ha/haRunner.js';
import type { HaState } from '../../clc/ha/hostHaState.js';
import { FenceAgentDriver } from '../../clc/ha/power/fenceAgentDriver.js';
import { compileFenceAgentConfig } from '../../clc/ha/power/fenceAgentProtocol.js';
import type { PowerDriver } from '../../clc/ha/power/powerDriver.js';
import { openMemoryClcStore } from '../../clc/state/clcStore.js';
import { systemClock } from '../../shared/clock.js';
import { FakeHa } from '../clc/ha/fakeHa.js';
import { groupAlive, installFencingLab, startLabBmc, type LabBmc } from '../helpers/fencingLab.js';

const USER = 'ferry';
const PASSWORD = 'watch-pw-61';
const HOSTS = ['127.0.61.1', '127.0.61.2'] as const;
const PORT = (i: number) => 18601 + i;
const exec = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Health is never asked after the first check: only the power watch can notice a host that went off. */
const SETTINGS = {
  healthCheckIntervalMs: 3_600_000, healthCheckTimeoutMs: 2000, fenceTimeoutMs: 10_000,
  powerCheckIntervalMs: 300, powerCheckTimeoutMs: 10_000,
};

describe('host HA BMC power watch with fence_ipmilan and ipmi_sim', () => {
  const bmcs = new Map<string, LabBmc>();

  beforeAll(async () => {
    await installFencingLab();
    for (const [i, host] of HOSTS.entries()) {
      const bmc = await startLabBmc({
        addr: host, port: PORT(i), user: USER, password: PASSWORD,
        hostCommand: ['bash', '-c', 'while :; do sleep 1; done'], dir: `${tmpdir()}/ferry-power-watch-${process.pid}-${i}`,
      });
      bmcs.set(host, bmc);
    }
  }, 300_000);

  afterAll(async () => {
    for (const bmc of bmcs.values()) {
      const pg = await bmc.hostPgid();
      await bmc.stop();
      if (pg && (await groupAlive(pg))) process.kill(-pg, 'SIGKILL');
    }
  });

  /** A runner over HOSTS with the real fence agent per host; power actions and status answers recorded. */
  async function start(hosts: readonly string[]) {
    const section = haSectionOf(await openMemoryClcStore());
    await section.update((ha) => {
      ha.global.settings = { ...SETTINGS };
      ha.partitions.lab = { enabled: true, settings: {}, maxUnhealthy: '100%' };
    });
    const power: string[] = [];
    const statuses: string[] = [];
    const drivers = new Map<string, PowerDriver>();
    for (const host of hosts) {
      const i = HOSTS.indexOf(host as typeof HOSTS[number]);
      const real = new FenceAgentDriver(compileFenceAgentConfig({
        agent: 'fence_ipmilan', target: host, password: PASSWORD, timeoutMs: 6000,
        options: { ip: host, ipport: String(PORT(i)), username: USER },
      }));
      drivers.set(host, {
        status: () => real.status().then(
          (s) => { statuses.push(`${host} ${s}`); return s; },
          (e: unknown) => { statuses.push(`${host} failed`); throw e; }),
        on: () => real.on(),
        off: () => { power.push(`off ${host}`); return real.off(); },
        reboot: () => { power.push(`reboot ${host}`); return real.reboot(); },
      });
    }
    const actions = new FakeHa();
    const provider = composeProvider({
      health: { isHealthy: async () => ({ healthy: true, detail: 'not asked again in this test' }) },
      activity: { hasActivity: async () => ({ outcome: 'unknown', detail: 'not used' }) },
      facts: { inMaintenance: async () => false, neighbours: async () => 1 },
      power: (host) => drivers.get(host),
    });
    const runner = new HaRunner({ store: section, provider, actions, clock: systemClock });
    await runner.syncHosts(hosts.map((host) => ({ host, partition: 'lab' })));
    await runner.evaluateEligibility();
    const state = (h: string): HaState | undefined => section.read().hosts[h]?.state;
    const drive = async (what: string, done: () => boolean, ms: number) => {
      const until = Date.now() + ms;
      while (!done()) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}; ${JSON.stringify(section.read().events.slice(-6))}`);
        await runner.tick();
        await sleep(50);
      }
    };
    return { section, runner, actions, power, statuses, state, drive };
  }

  it('a host powered off out of band is fenced only once its BMC says off; the fence\'s "already off" makes it FENCED, then it is evacuated', async () => {
    const [h1, h2] = HOSTS;
    const r = await start(HOSTS);
    await r.drive('both AVAILABLE and their BMCs asked', () => HOSTS.every((h) => r.state(h) === 'AVAILABLE' && r.statuses.includes(`${h} on`)), 30_000);
    await exec('ipmitool', ['-I', 'lanplus', '-C', '3', '-H', h1, '-p', String(PORT(0)), '-U', USER, '-P', PASSWORD, 'chassis', 'power', 'off'], { timeout: 20_000 });
    await r.drive('FENCED', () => r.state(h1) === 'FENCED', 40_000);
    await r.runner.idle();
    expect(r.statuses).toContain(`${h1} off`);
    const path = r.section.read().events.filter((e) => e.host === h1 && e.kind === 'transition').map((e) => e.to);
    expect(path).toEqual(['AVAILABLE', 'FENCING', 'FENCED']);
    expect(r.section.read().events.find((e) => e.host === h1 && e.to === 'FENCING')?.message).toMatch(/^the BMC reports the power off \(out of band\)/);
    expect(r.section.read().events.find((e) => e.host === h1 && e.to === 'FENCED')?.message).toContain('already off');
    expect(r.power).toEqual([`off ${h1}`]);
    expect(r.actions.calls.filter((c) => !c.startsWith('health'))).toEqual([`disable ${h1}`, `evacuate ${h1} (agent)`]);
    expect(r.state(h2)).toBe('AVAILABLE');
  }, 120_000);

  it('a BMC that does not answer its status is never taken for "off"', async () => {
    const h2 = HOSTS[1];
    const r = await start([h2]);
    await r.drive('AVAILABLE', () => r.state(h2) === 'AVAILABLE' && r.statuses.includes(`${h2} on`), 30_000);
    const bmc = bmcs.get(h2) as LabBmc;
    process.kill(bmc.bmcPid, 'SIGSTOP');
    try {
      await r.drive('two failed status calls', () => r.statuses.filter((s) => s === `${h2} failed`).length >= 2, 60_000);
      expect(r.state(h2)).toBe('AVAILABLE');
      expect(r.power).toEqual([]);
      expect(r.actions.calls.some((c) => /^(disable|evacuate)/.test(c))).toBe(false);
    } finally {
      process.kill(bmc.bmcPid, 'SIGCONT');
    }
    await r.runner.idle();
  }, 120_000);
});
