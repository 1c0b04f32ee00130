/**
 * A real etcd cluster for integration tests and the bench (issue 21): Debian's /usr/bin/etcd
 * (scripts/etcd-lab.sh install), one member per loopback address, each with its own temp data dir,
 * stopped by PID (script tooling: its errors are plain Errors for the test or bench to show). Members
 * can be killed with SIGKILL and started again on the same data dir (they rejoin). Election timing is
 * generous: a busy 2-core machine must not make the members elect a new leader every few seconds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';

export const ETCD_BIN = '/usr/bin/etcd';

export function etcdInstalled(): boolean {
  return existsSync(ETCD_BIN);
}

export interface EtcdClusterOptions {
  /** One loopback address per member, e.g. ['127.0.82.1', '127.0.82.2', '127.0.82.3']. */
  readonly addrs: readonly string[];
  readonly clientPort: number;
  readonly peerPort: number;
  readonly heartbeatMs?: number;
  readonly electionMs?: number;
  /** etcd's --max-txn-ops (128 by default). */
  readonly maxTxnOps?: number;
}

export interface EtcdMember {
  readonly name: string;
  readonly addr: string;
  readonly clientUrl: string;
  pid(): number | undefined;
  /** SIGKILL; resolves once the process is gone. */
  kill9(): Promise<void>;
  /** Starts it again on its data dir (it rejoins the cluster). */
  restart(): Promise<void>;
}

export interface EtcdCluster {
  readonly members: readonly EtcdMember[];
  readonly endpoints: readonly string[];
  /** A client of every member, for the test's own reads (closed by stop()). */
  client(): Etcd3;
  /** Resolves once a write through `endpoints` succeeds (polls with a generous deadline). */
  waitWritable(deadlineMs?: number, endpoints?: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
  output: string;
}

export async function startEtcdCluster(opts: EtcdClusterOptions): Promise<EtcdCluster> {
  const root = await mkdtemp(join(tmpdir(), 'ferry-etcd-'));
  const names = opts.addrs.map((_, i) => `m${i + 1}`);
  const initialCluster = opts.addrs.map((a, i) => `${names[i]}=http://${a}:${opts.peerPort}`).join(',');
  const token = `ferry-${process.pid}-${opts.addrs[0]}`;
  const running = new Map<string, Running>();
  const clients: Etcd3[] = [];

  const launch = (i: number): void => {
    const addr = opts.addrs[i] as string;
    const name = names[i] as string;
    const args = [
      '--name', name, '--data-dir', join(root, name),
      '--listen-client-urls', `http://${addr}:${opts.clientPort}`, '--advertise-client-urls', `http://${addr}:${opts.clientPort}`,
      '--listen-peer-urls', `http://${addr}:${opts.peerPort}`, '--initial-advertise-peer-urls', `http://${addr}:${opts.peerPort}`,
      '--initial-cluster', initialCluster, '--initial-cluster-token', token, '--initial-cluster-state', 'new',
      '--heartbeat-interval', String(opts.heartbeatMs ?? 250), '--election-timeout', String(opts.electionMs ?? 2500),
      '--max-txn-ops', String(opts.maxTxnOps ?? 128),
      '--logger', 'zap', '--log-level', 'error', '--enable-v2=false',
    ];
    const child = spawn(ETCD_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const r: Running = { child, output: '', exited: new Promise((resolve) => child.once('exit', () => resolve())) };
    child.stderr?.on('data', (d: Buffer) => {
      r.output = (r.output + d.toString()).slice(-8000);
    });
    running.set(name, r);
  };
  opts.addrs.forEach((_, i) => launch(i));

  const endpoints = opts.addrs.map((a) => `http://${a}:${opts.clientPort}`);
  const members: EtcdMember[] = opts.addrs.map((addr, i) => {
    const name = names[i] as string;
    return {
      name, addr, clientUrl: endpoints[i] as string,
      pid: () => running.get(name)?.child.pid,
      async kill9() {
        const r = running.get(name);
        if (r === undefined || r.child.exitCode !== null || r.child.signalCode !== null) return;
        if (r.child.pid !== undefined) process.kill(r.child.pid, 'SIGKILL');
        await r.exited;
      },
      async restart() {
        const r = running.get(name);
        if (r !== undefined && r.child.exitCode === null && r.child.signalCode === null) throw new Error(`${name} is running`);
        launch(i);
        await Promise.resolve();
      },
    };
  });

  const cluster: EtcdCluster = {
    members, endpoints,
    client() {
      const c = new Etcd3({ hosts: [...endpoints], dialTimeout: 5000 });
      clients.push(c);
      return c;
    },
    async waitWritable(deadlineMs = 90_000, eps = endpoints) {
      const c = new Etcd3({ hosts: [...eps], dialTimeout: 3000, defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 3000 }) });
      const until = Date.now() + deadlineMs;
      let last: unknown;
      try {
        while (Date.now() < until) {
          try {
            await c.put('ferry-test/ready').value('1');
            return;
          } catch (e) {
            last = e;
            await new Promise((r) => setTimeout(r, 250));
          }
        }
      } finally {
        c.close();
      }
      const logs = [...running].map(([n, r]) => `${n}: ${r.output}`).join('\n');
      throw new Error(`etcd cluster not writable within ${deadlineMs} ms: ${String(last)}\n${logs}`);
    },
    async stop() {
      for (const c of clients.splice(0)) c.close();
      for (const r of running.values()) {
        if (r.child.pid !== undefined && r.child.exitCode === null && r.child.signalCode === null) process.kill(r.child.pid, 'SIGKILL');
        await r.exited;
      }
      await rm(root, { recursive: true, force: true });
    },
  };
  try {
    await cluster.waitWritable();
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}
