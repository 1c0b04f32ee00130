/**
 * Power fencing through the real ClusterLabs fence_redfish, run by Ferry's FenceAgentDriver, against
 * the lab Redfish BMC (scripts/redfish-bmc/) on 127.0.35.0/24 with TCP ports 16350-16359: each BMC's
 * system power is a process group (the simulated host) that ForceOff kills and On starts again.
 * CI installs fence-agents (scripts/test.sh); a machine without them fails here rather than skipping.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fenceConfigFor, type BmcEntry } from '../../clc/ha/power/bmcStore.js';
import { FenceAgentDriver } from '../../clc/ha/power/fenceAgentDriver.js';
import { isFerryError } from '../../shared/errors/registry.js';
import { groupAlive, installFencingLab } from '../helpers/fencingLab.js';
import type { BmcFault } from '../../scripts/redfish-bmc/redfishModel.js';
import { startRedfishBmc, type RedfishLabBmc } from '../helpers/redfishLab.js';
import { builtEntry } from '../helpers/spawnDaemon.js';

const USER = 'ferry';
const PASSWORD = 'lab-pw-35';
/** A host that is a process group of two: a shell and its sleep. */
const HOST = ['bash', '-c', 'while :; do sleep 0.2; done'];

interface DriverOverrides {
  readonly password?: string;
  readonly timeoutMs?: number;
  readonly options?: Record<string, string>;
  readonly env?: NodeJS.ProcessEnv;
  /** Leave ssl_insecure out: the agent verifies the BMC's certificate. */
  readonly verifyTls?: boolean;
}

/** The settings ConfigureHAForHost stores for a Redfish BMC with a self-signed certificate. */
function driverFor(bmc: RedfishLabBmc, o: DriverOverrides = {}): FenceAgentDriver {
  const entry: BmcEntry = {
    agent: 'fence_redfish',
    options: { ip: bmc.opts.addr, ipport: String(bmc.opts.port), username: USER, ...(o.verifyTls ? {} : { ssl_insecure: '1' }), ...o.options },
    password: o.password ?? PASSWORD,
    timeoutMs: o.timeoutMs ?? 15_000,
  };
  return new FenceAgentDriver(fenceConfigFor(`host@${bmc.opts.addr}`, entry), o.env ? { env: o.env } : {});
}

async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return { code: isFerryError(e) ? e.code : `uncoded: ${String(e)}`, message: (e as Error).message };
  }
  throw new Error('expected a failure');
}

const hostAlive = async (bmc: RedfishLabBmc): Promise<boolean> => groupAlive((await bmc.state()).hostPgid ?? -1);

describe('fence_redfish against the lab Redfish BMC', () => {
  const bmcs: RedfishLabBmc[] = [];
  let a: RedfishLabBmc;
  let b: RedfishLabBmc;

  beforeAll(async () => {
    await installFencingLab();
    execFileSync('bash', ['-c', 'command -v fence_redfish']);
    a = await startRedfishBmc({ addr: '127.0.35.1', port: 16350, user: USER, password: PASSWORD, hostCommand: HOST });
    bmcs.push(a);
    b = await startRedfishBmc({ addr: '127.0.35.2', port: 16351, user: USER, password: PASSWORD, hostCommand: HOST });
    bmcs.push(b);
  }, 300_000);

  afterAll(async () => {
    for (const bmc of bmcs) await bmc.stop();
  });

  it('reads the power state of a running host', async () => {
    expect(await driverFor(a).status()).toBe('on');
    expect(await hostAlive(a)).toBe(true);
  });

  it('powers a host off: its whole process group dies, and only it', async () => {
    const { hostPgid } = await a.state();
    expect(hostPgid).not.toBeNull();
    expect(await driverFor(a).off()).toEqual({ alreadyOff: false });
    expect(await groupAlive(hostPgid ?? -1)).toBe(false);
    expect(await driverFor(a).status()).toBe('off');
    expect(await hostAlive(b)).toBe(true);
    expect(await driverFor(b).status()).toBe('on');
  });

  it('"already off" counts as fenced', async () => {
    expect(await driverFor(a).off()).toEqual({ alreadyOff: true });
    expect((await a.state()).power).toBe('Off');
  });

  it('powers a host on again: a new process group runs', async () => {
    const before = (await a.state()).hostPgid;
    await driverFor(a).on();
    const after = (await a.state()).hostPgid;
    expect(after).not.toBe(before);
    expect(await groupAlive(after ?? -1)).toBe(true);
    expect(await driverFor(a).status()).toBe('on');
  });

  it('reboots (the HA recovery): the old group dies and a new one runs', async () => {
    const before = (await b.state()).hostPgid ?? -1;
    await driverFor(b).reboot();
    const after = (await b.state()).hostPgid ?? -1;
    expect(after).not.toBe(before);
    expect(await groupAlive(before)).toBe(false);
    expect(await groupAlive(after)).toBe(true);
  });

  it('uses a given systems_uri instead of discovering it, and fails on a wrong one', async () => {
    expect(await driverFor(a, { options: { systems_uri: '/redfish/v1/Systems/1' } }).status()).toBe('on');
    const r = await failure(driverFor(a, { options: { systems_uri: '/redfish/v1/Systems/9' } }).off());
    expect(r.code).toBe('FenceAgentFailed');
    expect(r.message).toContain('Unable to get PowerState');
    expect(await hostAlive(a)).toBe(true);
  });

  it('verifies the certificate unless ssl_insecure is set', async () => {
    const noInsecure = (env: NodeJS.ProcessEnv) => driverFor(a, { verifyTls: true, env }).status();
    const r = await failure(noInsecure({ ...process.env, REQUESTS_CA_BUNDLE: '/nonexistent-ferry-ca.pem' }));
    expect(r.code).toBe('FenceAgentFailed');
    expect(await noInsecure({ ...process.env, REQUESTS_CA_BUNDLE: a.certFile })).toBe('on');
  });

  it('a wrong password fails with a coded error that does not carry the password, and the host lives', async () => {
    const r = await failure(driverFor(a, { password: 'not-the-pw' }).off());
    expect(r.code).toBe('FenceAgentFailed');
    expect(r.message).not.toContain('not-the-pw');
    expect(await hostAlive(a)).toBe(true);
  });

  const faults: [BmcFault, string, DriverOverrides, 'status' | 'off', string, string][] = [
    ['wrong-credentials', 'refuses every credential: the agent\'s reason', { options: { systems_uri: '/redfish/v1/Systems/1' } }, 'off', 'FenceAgentFailed', 'Unable to get PowerState'],
    ['stuck', 'acknowledges but never powers off: the agent gives up at its power_timeout', { options: { power_timeout: '2' } }, 'off', 'FenceAgentFailed', 'Timed out waiting to power OFF'],
    // fence_redfish's requests have no timeout of their own: only the driver's deadline ends them.
    ['hang', 'never answers: killed at the driver\'s deadline', { timeoutMs: 2000 }, 'off', 'FenceAgentTimedOut', 'within 2000 ms'],
    ['closed', 'refuses connections', {}, 'status', 'FenceAgentFailed', 'Connection refused'],
  ];
  it.each(faults)('a BMC with fault %s (%s) is a coded failure; the host lives and the BMC recovers', async (fault, _what, overrides, action, code, text) => {
    await a.setFault(fault);
    try {
      const r = await failure(driverFor(a, overrides)[action]());
      expect(r.code).toBe(code);
      expect(r.message).toContain(text);
      expect(r.message).not.toContain(PASSWORD);
      expect(await hostAlive(a)).toBe(true);
    } finally {
      await a.setFault('none');
    }
    expect(await driverFor(a).status()).toBe('on');
  });

  it('a fault chosen at start holds from the first request: a BMC started closed refuses, then opens', async () => {
    const c = await startRedfishBmc({ addr: '127.0.35.3', port: 16352, user: USER, password: PASSWORD, hostCommand: HOST, fault: 'closed' });
    bmcs.push(c);
    expect(await failure(driverFor(c).status())).toMatchObject({ code: 'FenceAgentFailed', message: expect.stringContaining('Connection refused') });
    expect(await c.setFault('none')).toMatchObject({ power: 'On', fault: 'none' });
    expect(await driverFor(c).status()).toBe('on');
  });
});

describe('redfish-bmc command line', () => {
  const good = ['--address', '127.0.35.9', '--port', '16359', '--user', USER];
  it.each([
    ['a wildcard (non-loopback) address', ['--address', '0.0.0.0', '--port', '16359', '--user', USER], PASSWORD, /not a loopback address/],
    ['a bad port', ['--address', '127.0.35.9', '--port', '99999', '--user', USER], PASSWORD, /bad port/],
    ['an unknown fault', [...good, '--fault', 'flaky'], PASSWORD, /--fault must be one of/],
    ['no password in the environment', good, '', /FENCING_LAB_PASSWORD/],
    ['a missing option', ['--address', '127.0.35.9'], PASSWORD, /required option/],
  ] as [string, string[], string, RegExp][])('refuses %s with exit 2 and starts nothing', (_name, args, password, message) => {
    const r = spawnSync(process.execPath, [builtEntry('scripts/redfish-bmc/main.ts'), ...args, '--', 'sleep', '60'], {
      env: { ...process.env, FENCING_LAB_PASSWORD: password }, encoding: 'utf8', timeout: 20_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });
});
