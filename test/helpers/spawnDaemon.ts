/**
 * Integration-test helpers: find a built entry point, spawn it as a real process, wait for its
 * ready line, and kill it by PID. Nothing here matches processes by name.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The built .js of `entryTs` (a path relative to the repo); test/globalSetup.ts builds dist/ first. */
export function builtEntry(entryTs: string): string {
  const built = join(REPO, 'dist', entryTs.replace(/\.ts$/, '.js'));
  if (!existsSync(built)) throw new Error(`${built} is missing: the test global setup builds dist/`);
  return built;
}

function run(cmd: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

export interface SpawnedProcess {
  readonly pid: number;
  /** The ready line's first capture group (e.g. the URL). */
  readonly ready: string;
  stderr(): string;
  /** Whether the process has exited. */
  readonly exited: boolean;
  /** Sends `signal` to this PID and resolves with the exit code once it is gone. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface SpawnOptions {
  readonly script: string;
  readonly args: readonly string[];
  /** Matched against each stdout line; group 1 is returned as `ready`. */
  readonly readyLine: RegExp;
  readonly timeoutMs?: number;
  readonly env?: NodeJS.ProcessEnv;
}

/** Spawns `node script args`, resolving once a stdout line matches `readyLine`. */
export function spawnBuilt(opts: SpawnOptions): Promise<SpawnedProcess> {
  const child: ChildProcess = spawn(process.execPath, [opts.script, ...opts.args], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FERRY_LOG_LEVEL: 'warn', ...opts.env },
  });
  let stderr = '';
  let exitCode: number | null = null;
  let exited = false;
  const exit = new Promise<number | null>((resolve) => {
    child.on('exit', (code, signal) => {
      exited = true;
      exitCode = code ?? (signal ? 128 : null);
      resolve(exitCode);
    });
  });
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const pid = child.pid;
  return new Promise((resolve, reject) => {
    if (pid === undefined) return reject(new Error(`could not spawn ${opts.script}`));
    const handle = {
      pid,
      ready: '',
      stderr: () => stderr,
      get exited() {
        return exited;
      },
      async kill(signal: NodeJS.Signals = 'SIGKILL') {
        if (!exited) {
          try {
            process.kill(pid, signal);
          } catch {
            // already gone
          }
        }
        return exit;
      },
    };
    const timer = setTimeout(() => {
      void handle.kill();
      reject(new Error(`${relative(REPO, opts.script)} not ready within ${opts.timeoutMs ?? 15_000} ms; stderr:\n${stderr}`));
    }, opts.timeoutMs ?? 15_000);
    let buf = '';
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const m = opts.readyLine.exec(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        if (m) {
          clearTimeout(timer);
          handle.ready = m[1] ?? m[0];
          resolve(handle);
        }
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${relative(REPO, opts.script)} exited (${code}) before it was ready; stderr:\n${stderr}`));
    });
  });
}

/** Runs a built script to completion: for testing start-up failures. */
export function runBuilt(script: string, args: readonly string[], timeoutMs = 15_000): Promise<{ code: number | null; stderr: string }> {
  return run(process.execPath, [script, ...args], timeoutMs).then(({ code, output }) => ({ code, stderr: output }));
}
