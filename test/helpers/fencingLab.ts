/**
 * Test side of the fencing lab (scripts/fencing-lab.sh): starts an ipmi_sim BMC whose chassis power
 * is a process group (the simulated host), and stops it by the PIDs the script recorded. Nothing
 * here matches processes by name.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { settingParam } from '../../clc/api/actions/haConfigure.js';
import { REPO } from './spawnDaemon.js';

const exec = promisify(execFile);

/**
 * Host HA's timings for the fencing-lab tests: checks every half second, activity sampled three times
 * a second apart, fences within 8 s. The BMC power watch asks once when a host is first watched,
 * then not for an hour: the lab's BMC reads a crashed host as off, and a check landing between a
 * crash and the health checks would fence it straight from AVAILABLE, skipping the path these tests
 * follow (hostHaPowerWatch.test.ts tests the watch). Tests override what their hosts need.
 */
export const LAB_HA_SETTINGS = Object.freeze({
  healthCheckIntervalMs: 500, healthCheckTimeoutMs: 3000,
  activityCheckInitialDelayMs: 500, activityCheckIntervalMs: 1000, activityCheckTimeoutMs: 3000,
  activityCheckMaxAttempts: 3, activityCheckFailureRatio: 0.5,
  degradedMaxPeriodMs: 600_000, recoverTimeoutMs: 8000, recoverWaitPeriodMs: 10_000, recoverFailureThreshold: 0, fenceTimeoutMs: 8000,
  // Owed drains and restarts: retried every 0.5-2 s, a drain up to 100 times (minutes, while a dead NC is restarted).
  repairRetryInitialDelayMs: 500, repairRetryIntervalMs: 2000, drainMaxAttempts: 100,
  powerCheckIntervalMs: 3_600_000,
});

/** ConfigureHAForCluster's parameters for `settings` (HealthCheckIntervalMs=500, ...). */
export function haSettingParams(settings: Readonly<Record<string, number>>): Record<string, string> {
  return Object.fromEntries(Object.entries(settings).map(([k, v]) => [settingParam(k), String(v)]));
}
const SCRIPT = join(REPO, 'scripts', 'fencing-lab.sh');

export interface LabBmcOptions {
  /** A loopback address (127.0.30.x-127.0.39.x in these tests). */
  readonly addr: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** The host's command; it starts powered on. */
  readonly hostCommand: readonly string[];
  /** The BMC's directory (created; removed by stop()); a new temp dir when absent. */
  readonly dir?: string;
}

export interface LabBmc {
  readonly dir: string;
  readonly opts: LabBmcOptions;
  readonly bmcPid: number;
  /** The host's process group id (its session leader's pid), or null before its first power-on. */
  hostPgid(): Promise<number | null>;
  stop(): Promise<void>;
}

export { groupAlive, isAlive } from '../../scripts/redfish-bmc/processGroup.js';

export function installFencingLab(): Promise<unknown> {
  return exec('bash', [SCRIPT, 'install'], { timeout: 300_000 });
}

export async function startLabBmc(opts: LabBmcOptions): Promise<LabBmc> {
  const dir = opts.dir ?? await mkdtemp(join(tmpdir(), 'ferry-bmc-'));
  await exec('bash', [SCRIPT, 'start-bmc', dir, opts.addr, String(opts.port), opts.user, ...opts.hostCommand], {
    env: { ...process.env, FENCING_LAB_PASSWORD: opts.password }, timeout: 20_000,
  });
  const bmcPid = Number(await readFile(join(dir, 'bmc.pid'), 'utf8'));
  return {
    dir, opts, bmcPid,
    async hostPgid() {
      try {
        return Number(await readFile(join(dir, 'host.pgid'), 'utf8')) || null;
      } catch {
        return null;
      }
    },
    async stop() {
      await exec('bash', [SCRIPT, 'stop-bmc', dir], { timeout: 20_000 });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
