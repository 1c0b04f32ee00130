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
import { REPO } from './spawnDaemon.js';

const exec = promisify(execFile);
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
