/**
 * Power fencing through the real ClusterLabs fence_ipmilan against ipmi_sim BMCs (scripts/fencing-lab.sh),
 * on 127.0.30.0/24 with UDP ports 16230-16239: each BMC's chassis power is a process group (the
 * simulated host) that power-off kills and power-on starts again. CI installs the packages
 * (scripts/test.sh); a machine without them fails here rather than skipping.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceAgentDriver } from '../../clc/ha/power/fenceAgentDriver.js';
import { compileFenceAgentConfig } from '../../clc/ha/power/fenceAgentProtocol.js';
import { isFerryError } from '../../shared/errors/registry.js';
import { groupAlive, installFencingLab, startLabBmc, type LabBmc } from '../helpers/fencingLab.js';

const USER = 'ferry';
const PASSWORD = 'lab-pw-7';
/** A host that is a process group of two: a shell and its sleep. */
const HOST = ['bash', '-c', 'while :; do sleep 0.2; done'];

function driverFor(bmc: { addr: string; port: number }, overrides: { password?: string; timeoutMs?: number; options?: Record<string, string> } = {}) {
  return new FenceAgentDriver(compileFenceAgentConfig({
    agent: 'fence_ipmilan', target: `host@${bmc.addr}`,
    options: { ip: bmc.addr, ipport: String(bmc.port), username: USER, ...overrides.options },
    password: overrides.password ?? PASSWORD, timeoutMs: overrides.timeoutMs ?? 10_000,
  }));
}

async function codeOf(p: Promise<unknown>): Promise<{ code: string; message: string; ms: number }> {
  const t0 = Date.now();
  try {
    await p;
  } catch (e) {
    return { code: isFerryError(e) ? e.code : `uncoded: ${String(e)}`, message: (e as Error).message, ms: Date.now() - t0 };
  }
  throw new Error('expected a failure');
}

describe('fence_ipmilan against ipmi_sim', () => {
  const bmcs: LabBmc[] = [];
  let a: LabBmc;
  let b: LabBmc;

  beforeAll(async () => {
    await installFencingLab();
    for (const tool of ['ipmi_sim', 'fence_ipmilan']) execFileSync('bash', ['-c', `command -v ${tool}`]);
    a = await startLabBmc({ addr: '127.0.30.1', port: 16230, user: USER, password: PASSWORD, hostCommand: HOST });
    bmcs.push(a);
    b = await startLabBmc({ addr: '127.0.30.2', port: 16231, user: USER, password: PASSWORD, hostCommand: HOST });
    bmcs.push(b);
  }, 300_000);

  afterAll(async () => {
    for (const bmc of bmcs) await bmc.stop();
  });

  it('reads the power state of a running host', async () => {
    expect(await driverFor(a.opts).status()).toBe('on');
    expect(await groupAlive((await a.hostPgid()) ?? -1)).toBe(true);
  });

  it('powers a host off: its whole process group dies, and only it', async () => {
    const pgid = await a.hostPgid();
    expect(pgid).not.toBeNull();
    expect(await driverFor(a.opts).off()).toEqual({ alreadyOff: false });
    expect(await groupAlive(pgid ?? -1)).toBe(false);
    expect(await driverFor(a.opts).status()).toBe('off');
    expect(await groupAlive((await b.hostPgid()) ?? -1)).toBe(true);
    expect(await driverFor(b.opts).status()).toBe('on');
  });

  it('"already off" counts as fenced', async () => {
    expect(await driverFor(a.opts).off()).toEqual({ alreadyOff: true });
  });

  it('powers a host on again: a new process group runs', async () => {
    const before = await a.hostPgid();
    await driverFor(a.opts).on();
    const after = await a.hostPgid();
    expect(after).not.toBe(before);
    expect(await groupAlive(after ?? -1)).toBe(true);
    expect(await driverFor(a.opts).status()).toBe('on');
  });

  it('reboots (the HA recovery): the old group dies and a new one runs', async () => {
    const before = (await b.hostPgid()) ?? -1;
    await driverFor(b.opts).reboot();
    const after = (await b.hostPgid()) ?? -1;
    expect(after).not.toBe(before);
    expect(await groupAlive(before)).toBe(false);
    expect(await groupAlive(after)).toBe(true);
  });

  it('a wrong password fails fast with a coded error that does not carry the password', async () => {
    const r = await codeOf(driverFor(a.opts, { password: 'not-the-pw' }).off());
    expect(r.code).toBe('FenceAgentFailed');
    expect(r.ms).toBeLessThan(3000);
    expect(r.message).not.toContain('not-the-pw');
    expect(await groupAlive((await a.hostPgid()) ?? -1)).toBe(true);
  });

  it('an unreachable BMC fails within the timeout', async () => {
    const r = await codeOf(driverFor({ addr: '127.0.30.9', port: 16239 }, { timeoutMs: 3000 }).off());
    expect(['FenceAgentFailed', 'FenceAgentTimedOut']).toContain(r.code);
    expect(r.ms).toBeGreaterThan(900);
    expect(r.ms).toBeLessThan(4500);
  });

  it('a BMC that never answers is killed at the hard timeout', async () => {
    process.kill(b.bmcPid, 'SIGSTOP');
    try {
      // The agent's own bound is set far beyond ours, so only our kill ends it.
      const r = await codeOf(driverFor(b.opts, { timeoutMs: 2000, options: { power_timeout: '60', login_timeout: '60' } }).status());
      expect(r.code).toBe('FenceAgentTimedOut');
      expect(r.ms).toBeGreaterThanOrEqual(1900);
      expect(r.ms).toBeLessThan(3500);
    } finally {
      process.kill(b.bmcPid, 'SIGCONT');
    }
    expect(await driverFor(b.opts).status()).toBe('on');
  });

  it('an agent that is not installed is a coded error', async () => {
    const d = new FenceAgentDriver(compileFenceAgentConfig({
      agent: 'fence_ferry_nonexistent', target: 'x', options: {}, password: 'p', timeoutMs: 2000,
    }));
    expect((await codeOf(d.status())).code).toBe('FenceAgentNotFound');
  });
});
