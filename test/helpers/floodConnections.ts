/**
 * What the connection tests need: a daemon started under a low open-file limit (a shell's
 * `ulimit -n`, so that exhausting it takes hundreds of sockets, not 20,000), and a flood of idle or
 * half-sent connections whose every close is an event the test can await.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import tls from 'node:tls';
import { expect } from 'vitest';

export interface LimitedDaemon {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Everything it wrote on stderr so far (its JSON log lines). */
  stderr(): string;
  /** Resolves with the exit code once it has exited. */
  readonly exited: Promise<number | null>;
}

/**
 * Runs `node entry args` with its soft and hard RLIMIT_NOFILE lowered to `openFiles` by /bin/sh's
 * ulimit (any user may lower its own limits), exec'd so the PID is the daemon's. Resolves once a
 * stdout line contains `ready`.
 */
export function spawnWithFileLimit(entry: string, args: readonly string[], openFiles: number, ready: string, env: NodeJS.ProcessEnv = {}): Promise<LimitedDaemon> {
  const child = spawn('/bin/sh', ['-c', `ulimit -n ${openFiles} && exec "$0" "$@"`, process.execPath, entry, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', ...env },
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => { err += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(ready) && child.pid !== undefined) resolve({ pid: child.pid, child, stderr: () => err, exited });
    });
    void exited.then((code) => reject(new Error(`${entry} exited ${code} before it was ready: ${err}`)));
  });
}

/** Parsed JSON log lines of a daemon's stderr (other lines, such as the plaintext banner, skipped). */
export function logLines(stderr: string): Record<string, unknown>[] {
  return stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

export interface HeldConnection {
  readonly socket: net.Socket;
  /** When the connection was established (ms, Date.now()), or undefined if it never was. */
  readonly openedAt: number | undefined;
  /** Resolves when the socket is closed, with what the server sent and when. */
  readonly closed: Promise<{ readonly at: number; readonly received: string; readonly opened: boolean }>;
}

export interface FloodOptions {
  readonly host: string;
  readonly port: number;
  /** Source addresses to spread the connections over (anyone on the host may use all of 127/8). */
  readonly from: readonly string[];
  readonly count: number;
  /** What each sends once connected: '' for an idle connection. */
  readonly send: (i: number) => string;
  /** Connect with TLS (a stolen certificate), else plain TCP. */
  readonly tls?: tls.ConnectionOptions;
}

/** Opens `count` connections, at most 100 connecting at once; each is held until the server closes it or the test destroys it. */
export async function flood(o: FloodOptions): Promise<HeldConnection[]> {
  const out: HeldConnection[] = [];
  const one = (i: number): Promise<void> => new Promise((settled) => {
    const localAddress = o.from[i % o.from.length];
    const socket = o.tls
      ? tls.connect({ ...o.tls, host: o.host, port: o.port, ...(localAddress ? { localAddress } : {}) })
      : net.connect({ host: o.host, port: o.port, ...(localAddress ? { localAddress } : {}) });
    let received = '';
    let openedAt: number | undefined;
    socket.on('data', (d: Buffer) => { received += d.toString(); });
    socket.on('error', () => undefined);
    const closed = new Promise<{ at: number; received: string; opened: boolean }>((resolve) => socket.once('close', () => {
      resolve({ at: Date.now(), received, opened: openedAt !== undefined });
      settled();
    }));
    socket.once(o.tls ? 'secureConnect' : 'connect', () => {
      openedAt = Date.now();
      const bytes = o.send(i);
      if (bytes !== '') socket.write(bytes);
      settled();
    });
    out.push({ socket, get openedAt() { return openedAt; }, closed });
  });
  for (let i = 0; i < o.count; i += 100) await Promise.all(Array.from({ length: Math.min(100, o.count - i) }, (_, k) => one(i + k)));
  return out;
}

/**
 * Awaits the close of every held connection (events, no timer of the test's own) and checks that
 * those the server answered with 408 lived at least the header timeout and far less than Node's
 * default (60 s plus a 30 s check), with room for a loaded machine. Returns how many got the 408.
 */
export async function expectClosedByHeaderTimeout(held: readonly HeldConnection[], headersTimeoutMs: number): Promise<{ timedOut: number; closed: number }> {
  const closes = await Promise.all(held.map((h) => h.closed));
  let timedOut = 0;
  closes.forEach((c, i) => {
    if (!c.received.startsWith('HTTP/1.1 408')) return;
    timedOut++;
    const lifetime = c.at - (held[i]?.openedAt ?? 0);
    expect(lifetime).toBeGreaterThanOrEqual(headersTimeoutMs - 50);
    expect(lifetime).toBeLessThan(headersTimeoutMs + 10_000);
  });
  expect(timedOut).toBeGreaterThan(0);
  return { timedOut, closed: closes.length };
}
