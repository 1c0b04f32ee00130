/**
 * `node dist/bench/wireAttack.js` (after the build): issue 16 item 2 measured on real daemons.
 * One host's simhv and NC and a CC, over mutual TLS on 127.0.49.0/24 (the cloud layout and its PKI).
 * Rounds alternate side by side:
 *   baseline  a legitimate ccDescribeNodes with the CLC's certificate, nothing else going on
 *   case      the same call while 8 clients with an NC's certificate (one stolen node key) send
 *             1 MiB documents to ccDescribeNodes (CLC-only) back to back
 * Prints the legitimate call's median and worst latency both ways, their ratio, and the CC's CPU
 * time per refused 1 MiB request (from /proc/<pid>/stat). The attackers run in a worker thread, so
 * their own TLS work does not hold up the legitimate client's event loop. Absolute numbers depend on
 * the machine; the ratio says how much the attack slows a legitimate caller.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { ccUrl, certsDirOf, cloudLayout, ensureCloudPki } from '../scripts/cloudLayout.js';
import { spawnDaemon, stopPid, type RunningDaemon } from '../scripts/daemon.js';
import { loadTlsIdentity } from '../shared/pki/tlsIdentity.js';
import { HttpWireTransport } from '../shared/wire/httpTransport.js';
import { clientTlsOptions } from '../shared/wire/tls.js';
import { CC_PATH } from '../shared/wire/transport.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const ATTACKERS = 8;
const ROUNDS = 3;
const CALLS_PER_ROUND = 6;
const HOST = '127.0.49.1';
const CONTROLLER = '127.0.49.254';

/** Just under the CC's 1 MiB default: many small elements, the costliest shape for a tree-building parser. */
function attackDocument(): Buffer {
  const head = '<?xml version="1.0" encoding="UTF-8"?><ccDescribeNodes xmlns="urn:ferry:wire:1"><pad t="o">';
  const tail = '</pad></ccDescribeNodes>';
  const parts: string[] = [head];
  let size = head.length + tail.length;
  for (let i = 0; ; i++) {
    const el = `<a${i} t="z"/>`;
    if (size + el.length > 1024 * 1024 - 64) break;
    parts.push(el);
    size += el.length;
  }
  parts.push(tail);
  return Buffer.from(parts.join(''), 'utf8');
}

/** utime + stime of a process, ms (USER_HZ is 100 on Linux). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}

/** An attacker: POSTs the document again and again with an NC's certificate until stopped; counts answers. */
class Attacker {
  private stopped = false;
  private readonly agent: https.Agent;
  answered = 0;
  statuses = new Map<string, number>();
  private loop: Promise<void> | undefined;

  constructor(tls: https.AgentOptions, private readonly url: URL, private readonly doc: Buffer) {
    this.agent = new https.Agent({ ...tls, keepAlive: true, maxSockets: 1 });
  }

  start(): void {
    this.stopped = false;
    this.loop = (async () => {
      while (!this.stopped) {
        const outcome = await this.once();
        this.answered++;
        this.statuses.set(outcome, (this.statuses.get(outcome) ?? 0) + 1);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  close(): void {
    this.agent.destroy();
  }

  private once(): Promise<string> {
    return new Promise((done) => {
      const req = https.request(this.url, {
        method: 'POST', agent: this.agent,
        headers: { 'content-type': 'text/xml; charset=utf-8', 'content-length': this.doc.length, soapaction: '"urn:ferry:wire:1#ccDescribeNodes"' },
      }, (res) => {
        res.resume();
        res.on('end', () => done(String(res.statusCode)));
        res.on('error', () => done('reset'));
      });
      req.on('error', (e: NodeJS.ErrnoException) => done(e.code ?? 'error'));
      req.end(this.doc);
    });
  }
}

interface AttackOrders {
  readonly url: string;
  readonly tls: https.AgentOptions;
}

/** The worker's side: start or stop the attackers on order, report how many were answered and how. */
function attackWorker(o: AttackOrders): void {
  const doc = attackDocument();
  const attackers = Array.from({ length: ATTACKERS }, () => new Attacker(o.tls, new URL(o.url), doc));
  parentPort?.on('message', (m: 'start' | 'stop' | 'close') => {
    if (m === 'start') for (const a of attackers) a.start();
    if (m === 'stop') {
      void Promise.all(attackers.map((a) => a.stop())).then(() => {
        const statuses: Record<string, number> = {};
        for (const a of attackers) for (const [k, v] of a.statuses) statuses[k] = (statuses[k] ?? 0) + v;
        parentPort?.postMessage({ answered: attackers.reduce((n, a) => n + a.answered, 0), statuses, bytes: doc.length });
      });
    }
    if (m === 'close') {
      for (const a of attackers) a.close();
      parentPort?.close();
    }
  });
}

interface AttackReport { readonly answered: number; readonly statuses: Record<string, number>; readonly bytes: number }

async function main(): Promise<void> {
  const baseDir = mkdtempSync(join(tmpdir(), 'ferry-bench-wire-'));
  const layout = { baseDir, controllerHost: CONTROLLER, nodeHosts: [HOST] };
  ensureCloudPki(layout);
  const running: RunningDaemon[] = [];
  const clc = new HttpWireTransport({ path: CC_PATH, defaultTimeoutMs: 60_000, tls: clientTlsOptions(loadTlsIdentity(certsDirOf(layout), 'clc', CONTROLLER)) });
  const url = new URL(CC_PATH, ccUrl(layout));
  const nodeTls = clientTlsOptions(loadTlsIdentity(certsDirOf(layout), 'nc', HOST));
  const worker = new Worker(new URL(import.meta.url), { workerData: { url: url.href, tls: nodeTls } satisfies AttackOrders });
  const order = (m: 'start' | 'stop'): Promise<AttackReport | undefined> => new Promise((done) => {
    if (m === 'start') {
      worker.postMessage(m);
      done(undefined);
    } else {
      worker.once('message', (r: AttackReport) => done(r));
      worker.postMessage(m);
    }
  });
  let report: AttackReport = { answered: 0, statuses: {}, bytes: 0 };
  try {
    for (const spec of cloudLayout(layout).filter((s) => s.name !== 'clc')) {
      running.push(await spawnDaemon(spec, { root: ROOT, logFile: join(baseDir, 'logs', `${spec.name}.log`) }));
    }
    const ccPid = running.find((d) => d.spec.name === 'cc')?.pid ?? 0;
    let failed = 0;
    /** One legitimate call's latency; a failed one counts with the time it took to fail. */
    const legit = async (): Promise<number> => {
      const t0 = performance.now();
      await clc.call(ccUrl(layout), 'ccDescribeNodes', {}).catch(() => { failed++; });
      return performance.now() - t0;
    };
    for (let i = 0; i < 10; i++) await legit(); // warm: TLS sessions, the CC's first polls
    const idle: number[] = [];
    const attacked: number[] = [];
    let attackCpuMs = 0;
    let attackAnswers = 0;
    let attackMs = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < CALLS_PER_ROUND; i++) idle.push(await legit());
      const cpu0 = cpuMsOf(ccPid);
      const answered0 = report.answered;
      const t0 = performance.now();
      await order('start');
      // Let the attackers get going (their first documents are on the wire) before the legitimate calls.
      await new Promise((r) => setTimeout(r, 200));
      for (let i = 0; i < CALLS_PER_ROUND; i++) attacked.push(await legit());
      report = (await order('stop')) ?? report;
      attackMs += performance.now() - t0;
      attackAnswers += report.answered - answered0;
      attackCpuMs += cpuMsOf(ccPid) - cpu0;
    }
    const statuses = new Map(Object.entries(report.statuses));
    const fmt = (x: number): string => x.toFixed(1).padStart(8);
    console.log(`legit ccDescribeNodes (CLC certificate), ${ROUNDS}x${CALLS_PER_ROUND} calls each way, alternating rounds`);
    console.log(`  idle              median ${fmt(quantile(idle, 0.5))} ms   p90 ${fmt(quantile(idle, 0.9))} ms   max ${fmt(quantile(idle, 1))} ms`);
    console.log(`  under attack      median ${fmt(quantile(attacked, 0.5))} ms   p90 ${fmt(quantile(attacked, 0.9))} ms   max ${fmt(quantile(attacked, 1))} ms`);
    console.log(`  failed calls      ${failed}`);
    console.log(`  ratio (median)    ${(quantile(attacked, 0.5) / quantile(idle, 0.5)).toFixed(1)}x`);
    console.log(`attack: ${ATTACKERS} NC-certificate clients, ${report.bytes} bytes each to ccDescribeNodes`);
    console.log(`  answered ${attackAnswers} in ${(attackMs / 1000).toFixed(1)} s (${[...statuses].map(([k, v]) => `${k}: ${v}`).join(', ')})`);
    console.log(`  CC CPU during attack rounds ${attackCpuMs} ms = ${(attackCpuMs / Math.max(1, attackAnswers)).toFixed(1)} ms per refused request, ${(attackCpuMs / attackMs * 100).toFixed(0)}% of one core`);
  } finally {
    worker.postMessage('close');
    await worker.terminate();
    clc.close();
    for (const d of running.reverse()) await stopPid(d.pid);
    rmSync(baseDir, { recursive: true, force: true });
  }
}

if (isMainThread) await main();
else attackWorker(workerData as AttackOrders);
