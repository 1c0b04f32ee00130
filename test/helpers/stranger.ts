/**
 * An attacker with a local shell who is not the owner of the cloud's daemons: a separate process
 * run as uid/gid 65534 (nobody, no supplementary groups) through util-linux's setpriv, which tries
 * a list of HTTP requests (on Unix sockets, plain TCP or TLS without a certificate) and reports what
 * each got: a status and error code, or the socket error that stopped it. It uses Node's built-ins
 * only, so it needs nothing from the checkout it attacks. Needs root (to switch users); CI is root.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export const STRANGER_UID = 65534;
const SETPRIV = '/usr/bin/setpriv';

/** Whether this process can start another user's process (root and setpriv). */
export const canRunAsStranger = process.getuid?.() === 0 && existsSync(SETPRIV);

interface AttemptBase {
  readonly name: string;
  readonly method?: string;
  readonly path: string;
  readonly body?: unknown;
}

export type Attempt =
  | (AttemptBase & { readonly via: 'socket'; readonly socketPath: string })
  | (AttemptBase & { readonly via: 'tcp'; readonly host: string; readonly port: number })
  /** TLS without a client certificate, naming `servername` in SNI (how simhv picks a migration). */
  | (AttemptBase & { readonly via: 'tls'; readonly host: string; readonly port: number; readonly servername: string });

export interface AttemptResult {
  readonly name: string;
  readonly status?: number;
  /** The coded error of the answer's body, when it had one. */
  readonly code?: string;
  /** What stopped the request before an answer: EACCES, ECONNREFUSED, a TLS alert... */
  readonly error?: string;
}

export interface StrangerReport {
  readonly uid: number;
  readonly gid: number;
  readonly groups: number[];
  /** lstat of each path asked about, as the stranger sees it (proves it reaches the socket itself). */
  readonly seen: Record<string, { socket: boolean; mode: number; uid: number } | { error: string }>;
  readonly results: AttemptResult[];
  /** Connections that reached the stranger's own "hypervisor" listener while the attempts ran. */
  readonly connections: number;
}

export interface StrangerPlan {
  readonly attempts: readonly Attempt[];
  /** Paths to lstat first. */
  readonly inspect?: readonly string[];
  /** A listener of the stranger's own, standing in for a hypervisor it controls. */
  readonly ownHypervisor?: { readonly host: string; readonly port: number };
}

const SCRIPT = `
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { lstatSync } from 'node:fs';
const plan = JSON.parse(process.argv[1]);
let connections = 0;
let own;
if (plan.ownHypervisor) {
  own = net.createServer((c) => { connections++; c.destroy(); });
  await new Promise((resolve, reject) => { own.once('error', reject); own.listen(plan.ownHypervisor.port, plan.ownHypervisor.host, resolve); });
}
const seen = {};
for (const p of plan.inspect ?? []) {
  try { const s = lstatSync(p); seen[p] = { socket: s.isSocket(), mode: s.mode & 0o7777, uid: s.uid }; } catch (e) { seen[p] = { error: e.code }; }
}
function attempt(a) {
  return new Promise((resolve) => {
    const body = a.body === undefined ? undefined : JSON.stringify(a.body);
    const headers = body === undefined ? {} : { 'content-type': 'application/json' };
    const opts = { method: a.method ?? 'POST', path: a.path, headers, agent: false, timeout: 10000 };
    if (a.via === 'socket') opts.socketPath = a.socketPath; else Object.assign(opts, { host: a.host, port: a.port });
    if (a.via === 'tls') Object.assign(opts, { servername: a.servername, rejectUnauthorized: false });
    const req = (a.via === 'tls' ? https : http).request(opts, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        let code;
        try { code = JSON.parse(text).error?.code; } catch {}
        resolve({ name: a.name, status: res.statusCode, ...(code ? { code } : {}) });
      });
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' })));
    req.on('error', (e) => resolve({ name: a.name, error: e.code ?? e.message }));
    req.end(body);
  });
}
const results = [];
for (const a of plan.attempts) results.push(await attempt(a));
own?.close();
process.stdout.write(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), groups: process.getgroups(), seen, results, connections }));
`;

/** Runs `plan` as uid/gid 65534 in a process of its own; resolves with its report. */
export function runAsStranger(plan: StrangerPlan, timeoutMs = 60_000): Promise<StrangerReport> {
  if (!canRunAsStranger) throw new Error('running as another user needs root and setpriv');
  const args = [`--reuid=${STRANGER_UID}`, `--regid=${STRANGER_UID}`, '--clear-groups', '--', process.execPath, '--input-type=module', '-e', SCRIPT, JSON.stringify(plan)];
  const child = spawn(SETPRIV, args, { cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`stranger exited ${code}: ${err}`));
      resolve(JSON.parse(out) as StrangerReport);
    });
  });
}
