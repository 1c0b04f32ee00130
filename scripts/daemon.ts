/**
 * Starting and stopping Ferry daemons as real processes: stdout and stderr go to a log file and
 * readiness is the daemon's "listening" line appearing there. Used by the demo (detached daemons
 * that outlive it) and by integration tests (children stopped by PID in afterAll).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, fchmodSync, fstatSync, readFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ProcessSpec } from './cloudLayout.js';

export interface RunningDaemon {
  readonly spec: ProcessSpec;
  readonly pid: number;
  readonly child: ChildProcess;
  readonly logFile: string;
}

export interface SpawnOptions {
  /** Project root (where dist/ is). */
  readonly root: string;
  readonly logFile: string;
  /** Detached daemons keep running after this process exits (the demo). */
  readonly detached?: boolean;
  readonly readyTimeoutMs?: number;
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Starts it with the soft open-file limit raised to the hard one (a daemon holding thousands of
   * connections: the CC of the supervision bench); Node itself cannot raise it.
   */
  readonly raiseOpenFileLimit?: boolean;
  /** Flags for node itself, before the entry (e.g. --cpu-prof). */
  readonly nodeArgs?: readonly string[];
}

/** The command line of a daemon: node and its entry, behind `sh -c 'ulimit -n <hard>'` when asked. */
export function daemonCommand(entry: string, args: readonly string[], raiseOpenFileLimit = false, nodeArgs: readonly string[] = []): [string, string[]] {
  if (!raiseOpenFileLimit) return [process.execPath, [...nodeArgs, entry, ...args]];
  // exec: the shell becomes node, so the PID is the daemon's.
  return ['/bin/sh', ['-c', 'ulimit -n "$(ulimit -Hn)" && exec "$0" "$@"', process.execPath, ...nodeArgs, entry, ...args]];
}

function logTail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Daemon logs may name hosts, keys' ids and refused callers: owner and group only. */
export const LOG_FILE_MODE = 0o640;
export const LOG_DIR_MODE = 0o750;

/** Opens `file` for appending, created LOG_FILE_MODE; one an older version left wider is narrowed (never widened). */
export function openLogFile(file: string): number {
  mkdirSync(dirname(file), { recursive: true, mode: LOG_DIR_MODE });
  const fd = openSync(file, 'a', LOG_FILE_MODE);
  fchmodSync(fd, fstatSync(fd).mode & LOG_FILE_MODE);
  return fd;
}

export async function spawnDaemon(spec: ProcessSpec, o: SpawnOptions): Promise<RunningDaemon> {
  const fd = openLogFile(o.logFile);
  const startOffset = readFileSync(o.logFile).length;
  const [command, argv] = daemonCommand(resolve(o.root, spec.entry), spec.args, o.raiseOpenFileLimit, o.nodeArgs);
  const child = spawn(command, argv, {
    cwd: o.root,
    stdio: ['ignore', fd, fd],
    detached: o.detached ?? false,
    env: { ...process.env, ...o.env },
  });
  closeSync(fd);
  if (o.detached) child.unref();
  let exited: string | undefined;
  child.once('exit', (code, signal) => { exited = `exited with ${code ?? signal}`; });
  // Generous: a Node daemon's start (module loading, key files) takes many seconds on a busy 2-core machine.
  const deadline = Date.now() + (o.readyTimeoutMs ?? 45_000);
  for (;;) {
    const text = readFileSync(o.logFile).subarray(startOffset).toString('utf8');
    if (text.includes(spec.ready)) break;
    if (exited !== undefined || Date.now() > deadline) {
      if (exited === undefined) child.kill('SIGKILL');
      // Test and demo tooling (starts daemons): its failure goes to the developer's terminal, not to a client.
      throw new Error(`${spec.name} ${exited ?? 'did not become ready in time'}; log tail:\n${logTail(o.logFile)}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  if (child.pid === undefined) throw new Error(`${spec.name} has no pid`); // spawn's invariant after a ready line
  return { spec, pid: child.pid, child, logFile: o.logFile };
}

/** True while a process with this PID exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops one process we started, by PID: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopPid(pid: number, graceMs = 5000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  if (isAlive(pid)) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
    while (isAlive(pid)) await new Promise((r) => setTimeout(r, 10));
  }
}
