/**
 * A demo's detached daemons, shared by the demo cloud (demo.ts) and the replicated demo
 * (demoReplicated.ts): each started once, its PID recorded in `<runDir>/<name>.pid`, stopped by that
 * PID only; and the admin API asked as the CLI asks it (SigV4 with the admin credentials file).
 * Demo tooling: its errors are plain Errors printed to whoever runs the demo.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcessSpec } from './cloudLayout.js';
import { isAlive, spawnDaemon, stopPid } from './daemon.js';
import { readCredentialsFile } from '../shared/auth/credentialsFile.js';
import { signQuery } from '../shared/auth/sign.js';

export interface DemoDaemonsOptions {
  /** Project root (where dist/ is). */
  readonly root: string;
  /** Where the pid files go. */
  readonly runDir: string;
  /** Where each daemon's log goes (<name>.log). */
  readonly logDir: string;
}

export class DemoDaemons {
  constructor(private readonly o: DemoDaemonsOptions) {}

  private pidFile(name: string): string {
    return join(this.o.runDir, `${name}.pid`);
  }

  /** The recorded PID of `name` while that process lives. */
  pidOf(name: string): number | undefined {
    const f = this.pidFile(name);
    if (!existsSync(f)) return undefined;
    const pid = Number(readFileSync(f, 'utf8'));
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
  }

  /** Starts each spec not already running, in order, waiting for each to be ready; prints one line each. */
  async start(specs: readonly ProcessSpec[]): Promise<void> {
    mkdirSync(this.o.runDir, { recursive: true });
    for (const spec of specs) await this.startOne(spec);
  }

  async startOne(spec: ProcessSpec): Promise<void> {
    const running = this.pidOf(spec.name);
    if (running) {
      console.log(`  ${spec.name.padEnd(20)} already running (pid ${running})`);
      return;
    }
    const d = await spawnDaemon(spec, { root: this.o.root, logFile: join(this.o.logDir, `${spec.name}.log`), detached: true });
    writeFileSync(this.pidFile(spec.name), String(d.pid));
    console.log(`  ${spec.name.padEnd(20)} started (pid ${d.pid})`);
  }

  /** kill -9 of one daemon (a crash); false when it was not running. */
  async crash(name: string): Promise<boolean> {
    const pid = this.pidOf(name);
    rmSync(this.pidFile(name), { force: true });
    if (pid === undefined) return false;
    await stopPid(pid, 0, 'SIGKILL');
    return true;
  }

  /** Stops each spec's recorded process (in reverse order), by its PID, and forgets it. */
  async stop(specs: readonly ProcessSpec[]): Promise<void> {
    for (const spec of [...specs].reverse()) {
      const pid = this.pidOf(spec.name);
      if (pid) {
        await stopPid(pid);
        console.log(`  ${spec.name.padEnd(20)} stopped (pid ${pid})`);
      }
      rmSync(this.pidFile(spec.name), { force: true });
    }
  }

  status(specs: readonly ProcessSpec[]): void {
    for (const spec of specs) {
      const pid = this.pidOf(spec.name);
      console.log(`  ${spec.name.padEnd(20)} ${pid ? `running (pid ${pid})` : 'stopped'}`);
    }
  }
}

export interface AdminReply {
  readonly status: number;
  readonly text: string;
}

/** One signed admin request to the CLC at `url` (…/services/Eucalyptus); any status is an answer. */
export async function adminRequest(url: string, credentialsPath: string, params: Record<string, string>): Promise<AdminReply> {
  const creds = await readCredentialsFile(credentialsPath);
  const signed = signQuery({ Version: '2013-02-01', ...params }, { ...creds, url, now: Date.now() });
  const res = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body, signal: AbortSignal.timeout(120_000) });
  return { status: res.status, text: await res.text() };
}

/** A signed admin request that must succeed: the response body. */
export async function adminQuery(url: string, credentialsPath: string, params: Record<string, string>): Promise<string> {
  const r = await adminRequest(url, credentialsPath, params);
  // The demo's own failure, printed to whoever runs it with the CLC's coded error document in `text`.
  if (r.status !== 200) throw new Error(`${params.Action} failed (${r.status}): ${r.text}`);
  return r.text;
}

/**
 * Runs the demo command named by argv[2] (default start) from `commands`: a wrong name prints `usage`
 * and exits 2; a failure prints `<who>: <message>` and exits 1.
 */
export async function runDemoCommand(who: string, usage: string, commands: Readonly<Record<string, () => Promise<void> | void>>): Promise<void> {
  const run = commands[process.argv[2] ?? 'start'];
  if (!run) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  try {
    await run();
  } catch (e) {
    console.error(`${who}: ${(e as Error).message}`);
    process.exit(1);
  }
}
