/**
 * Starts and stops the project's libvirt lab (scripts/libvirt-lab.sh): two libvirtd "hosts" on
 * loopback, each in its own mount namespace. Used by the integration tests (test/helpers/libvirtLab.ts)
 * and by the bench (bench/migrationLibvirtCase.ts). A lab that cannot start is an error carrying the
 * script's output, never a silent skip.
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { findRepoRoot } from '../clc/cli/clientCredentials.js';

const run = promisify(execFile);
// From the sources (vitest) or from dist/scripts: the checkout holding package.json either way.
const SCRIPT = join(findRepoRoot(import.meta.dirname) ?? resolve(import.meta.dirname, '..'), 'scripts', 'libvirt-lab.sh');

export interface LabHost {
  readonly uri: string;
  readonly tlsDir: string;
}

export interface Lab {
  readonly dir: string;
  readonly hosts: readonly [LabHost, LabHost];
  /** The script's settings for this lab (FERRY_LIBVIRT_*). */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * A lab of its own (directory, addresses, ports), so a developer's lab on the defaults is left
 * alone: both hosts on 127.0.0.1 at basePort+1 and +2, or each on its own address at one port.
 */
export function labLayout(dir: string, at: { readonly basePort: number } | { readonly addrs: readonly [string, string]; readonly port: number }): Lab {
  const uri = (n: 1 | 2): string => ('basePort' in at
    ? `qemu+tcp://127.0.0.1:${at.basePort + n}/system`
    : `qemu+tcp://${at.addrs[n - 1]}:${at.port}/system`);
  const host = (n: 1 | 2): LabHost => ({ uri: uri(n), tlsDir: join(dir, `host${n}`, 'tls') });
  const env: Record<string, string> = 'basePort' in at
    ? { FERRY_LIBVIRT_BASE_PORT: String(at.basePort) }
    : { FERRY_LIBVIRT_ADDRS: at.addrs.join(' '), FERRY_LIBVIRT_PORT: String(at.port) };
  return { dir, hosts: [host(1), host(2)], env };
}

async function script(cmd: string, lab: Lab): Promise<string> {
  try {
    const { stdout, stderr } = await run('bash', [SCRIPT, cmd, lab.dir], { env: { ...process.env, ...lab.env }, timeout: 600_000 });
    return stdout + stderr;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    // Test and bench tooling: the failure goes to the developer's terminal, not to a client.
    throw new Error(`scripts/libvirt-lab.sh ${cmd} failed; the libvirt lab cannot run on this machine:\n${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
}

/** Installs what is missing, then starts the lab from a clean slate (a crashed run's daemons and guests go first). */
export async function startLab(lab: Lab): Promise<void> {
  await script('install', lab);
  await script('stop', lab);
  await script('start', lab);
}

/** Installs what is missing and stops whatever a crashed run left, without starting the daemons (a test runs them itself: `run-host`). */
export async function prepareLab(lab: Lab): Promise<void> {
  await script('install', lab);
  await script('stop', lab);
}

/** The command that runs lab host `n`'s libvirtd in the foreground, in the caller's process group (a BMC's host). */
export function runHostCommand(lab: Lab, n: 1 | 2): string[] {
  return ['env', ...Object.entries(lab.env).map(([k, v]) => `${k}=${v}`), 'bash', SCRIPT, 'run-host', String(n), lab.dir];
}

export async function stopLab(lab: Lab): Promise<void> {
  await script('stop', lab);
}

/** Builds (once per lab directory) the lab's tiny Linux guest: a Debian cloud kernel and a busybox initrd. */
export async function buildGuest(lab: Lab): Promise<{ kernel: string; initrd: string }> {
  await script('guest', lab);
  return { kernel: join(lab.dir, 'guest', 'vmlinuz'), initrd: join(lab.dir, 'guest', 'initrd.img') };
}

/** virsh, as an independent witness of what libvirt holds (not the driver under test). */
export async function virsh(uri: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('virsh', ['-q', '-c', uri, ...args], { timeout: 30_000 }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
  return stdout.trim();
}
