/**
 * Test side of the Redfish lab: starts the lab BMC (scripts/redfish-bmc/main.ts) as its own process,
 * talks to it over its stdin/stdout control lines, and stops it by PID (it powers its host off first;
 * the host's group is killed here too in case the BMC died). Nothing here matches processes by name.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BmcFault, RedfishPower } from '../../scripts/redfish-bmc/redfishModel.js';
import { builtEntry, REPO } from './spawnDaemon.js';

export interface RedfishBmcOptions {
  /** A loopback address (127.0.35.x in these tests). */
  readonly addr: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** The host's command; it starts powered on. */
  readonly hostCommand: readonly string[];
  readonly fault?: BmcFault;
}

export interface BmcState {
  readonly power: RedfishPower;
  readonly hostPgid: number | null;
  readonly fault: BmcFault;
}

export interface RedfishLabBmc {
  readonly opts: RedfishBmcOptions;
  readonly pid: number;
  /** The BMC's self-signed certificate (PEM file), for a client that verifies it. */
  readonly certFile: string;
  state(): Promise<BmcState>;
  setFault(fault: BmcFault): Promise<BmcState>;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 20_000;
/** The BMC powers its host off and closes within milliseconds; past this it is killed. */
const STOP_TIMEOUT_MS = 5000;

export async function startRedfishBmc(opts: RedfishBmcOptions): Promise<RedfishLabBmc> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-redfish-'));
  const certFile = join(dir, 'bmc.pem');
  const child = spawn(process.execPath, [
    builtEntry('scripts/redfish-bmc/main.ts'), '--address', opts.addr, '--port', String(opts.port), '--user', opts.user,
    '--fault', opts.fault ?? 'none', '--cert-out', certFile, '--', ...opts.hostCommand,
  ], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, FENCING_LAB_PASSWORD: opts.password } });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Answers arrive in order, one JSON line per control line.
  const waiting: ((o: Record<string, unknown>) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.(JSON.parse(line) as Record<string, unknown>));
  const next = (): Promise<Record<string, unknown>> => new Promise((resolve) => waiting.push(resolve));

  const ready = await Promise.race([
    next(),
    exited.then(() => Promise.reject(new Error(`redfish-bmc exited: ${stderr}`))),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`redfish-bmc not ready: ${stderr}`)), READY_TIMEOUT_MS).unref()),
  ]);
  if (ready.event !== 'ready' || child.pid === undefined) throw new Error(`redfish-bmc: unexpected first line ${JSON.stringify(ready)}`);
  const pid = child.pid;

  const ask = async (line: string): Promise<BmcState> => {
    const answer = next();
    child.stdin.write(`${line}\n`);
    const o = await answer;
    if (o.event !== 'state') throw new Error(`redfish-bmc: ${JSON.stringify(o)}`);
    return o as unknown as BmcState;
  };

  return {
    opts, pid, certFile,
    state: () => ask('state'),
    setFault: (fault) => ask(`fault ${fault}`),
    async stop() {
      const { hostPgid } = await ask('state').catch(() => ({ hostPgid: null }));
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(pid, 'SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(killer);
      }
      if (hostPgid !== null) {
        try {
          process.kill(-hostPgid, 'SIGKILL');
        } catch {
          // Already powered off by the BMC.
        }
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
