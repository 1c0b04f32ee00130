/**
 * `node dist/bench/wireAttack.js` (after the build): issue 16 item 2 measured on real daemons.
 * One host's simhv and NC and a CC, over mutual TLS on 127.0.49.0/24 (the cloud layout and its PKI).
 * Three kinds of round alternate side by side, each timing a legitimate ccDescribeNodes with the
 * CLC's certificate:
 *   no attack  nothing else going on
 *   decoy      8 clients with an NC's certificate (one stolen node key) send 1 MiB documents back
 *              to back to a decoy in the bench that refuses them unread: the attackers' own load on
 *              the machine, with the CC left alone (the baseline of the ratio)
 *   cc         the same 8 clients send them to the CC's ccDescribeNodes (CLC-only)
 * Prints the legitimate call's latencies per kind of round, the ratio of medians cc / decoy (what
 * the CC's handling of the attack adds) and cc / none, and the CC's CPU time per refused request
 * (from /proc/<pid>/stat). The attackers run in a worker thread, so their own TLS work does not hold
 * up the legitimate client's event loop. Absolute numbers depend on the machine; the ratios less.
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
/** Where the decoy listens: the same kind of refusal, off the CC. */
const DECOY = '127.0.49.253';

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
  /** The CC's wire URL. */
  readonly url: string;
  readonly tls: https.AgentOptions;
  /** The decoy's certificate and key (it refuses everything, reading nothing) and where it listens. */
  readonly decoy: { readonly host: string; readonly port: number; readonly key: Uint8Array; readonly cert: Uint8Array; readonly ca: Uint8Array };
}

type Target = 'cc' | 'decoy';
type Order = { readonly start: Target } | 'stop' | 'close';

/**
 * The worker's side: eight attackers against the CC, eight against a decoy in this worker that
 * answers 403 at once and hangs up (what a refusal costs when nothing is parsed). On order: start
 * one set, or stop and report how many were answered and how.
 */
async function attackWorker(o: AttackOrders): Promise<void> {
  const doc = attackDocument();
  const decoy = https.createServer({ key: Buffer.from(o.decoy.key), cert: Buffer.from(o.decoy.cert), ca: Buffer.from(o.decoy.ca), requestCert: true, rejectUnauthorized: true }, (_req, res) => {
    res.writeHead(403, { 'content-type': 'text/xml', connection: 'close' }).end('<Fault><code>PeerNotAuthorized</code></Fault>');
  });
  await new Promise<void>((r) => decoy.listen(o.decoy.port, o.decoy.host, r));
  const decoyUrl = new URL(new URL(o.url).pathname, `https://${o.decoy.host}:${o.decoy.port}`);
  const sets: Record<Target, Attacker[]> = {
    cc: Array.from({ length: ATTACKERS }, () => new Attacker(o.tls, new URL(o.url), doc)),
    // The decoy's certificate is the CC's, which does not name the decoy's address.
    decoy: Array.from({ length: ATTACKERS }, () => new Attacker({ ...o.tls, checkServerIdentity: () => undefined }, decoyUrl, doc)),
  };
  let active: Attacker[] = [];
  parentPort?.on('message', (m: Order) => {
    if (typeof m === 'object') {
      active = sets[m.start];
      for (const a of active) a.start();
    } else if (m === 'stop') {
      void Promise.all(active.map((a) => a.stop())).then(() => {
        const statuses: Record<string, number> = {};
        for (const a of active) for (const [k, v] of a.statuses) statuses[k] = (statuses[k] ?? 0) + v;
        parentPort?.postMessage({ answered: active.reduce((n, a) => n + a.answered, 0), statuses, bytes: doc.length });
      });
    } else {
      for (const a of [...sets.cc, ...sets.decoy]) a.close();
      decoy.closeAllConnections();
      decoy.close();
      parentPort?.close();
    }
  });
}

interface AttackReport { readonly answered: number; readonly statuses: Record<string, number>; readonly bytes: number }

/** Latencies of one kind of round. */
function line(name: string, xs: readonly number[]): string {
  const fmt = (x: number): string => x.toFixed(1).padStart(8);
  return `  ${name.padEnd(26)} median ${fmt(quantile(xs, 0.5))} ms   p90 ${fmt(quantile(xs, 0.9))} ms   max ${fmt(quantile(xs, 1))} ms`;
}

async function main(): Promise<void> {
  const baseDir = mkdtempSync(join(tmpdir(), 'ferry-bench-wire-'));
  const layout = { baseDir, controllerHost: CONTROLLER, nodeHosts: [HOST] };
  ensureCloudPki(layout);
  const running: RunningDaemon[] = [];
  const clc = new HttpWireTransport({ path: CC_PATH, defaultTimeoutMs: 60_000, tls: clientTlsOptions(loadTlsIdentity(certsDirOf(layout), 'clc', CONTROLLER)) });
  const url = new URL(CC_PATH, ccUrl(layout));
  const nodeTls = clientTlsOptions(loadTlsIdentity(certsDirOf(layout), 'nc', HOST));
  const ccId = loadTlsIdentity(certsDirOf(layout), 'cc', CONTROLLER);
  const orders: AttackOrders = { url: url.href, tls: nodeTls, decoy: { host: DECOY, port: 8774, key: ccId.key, cert: ccId.cert, ca: ccId.ca } };
  const worker = new Worker(new URL(import.meta.url), { workerData: orders });
  const stop = (): Promise<AttackReport> => new Promise((done) => {
    worker.once('message', (r: AttackReport) => done(r));
    worker.postMessage('stop');
  });
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
    const rounds: Record<'idle' | Target, number[]> = { idle: [], decoy: [], cc: [] };
    let ccCpuMs = 0;
    let ccAnswers = 0;
    let ccMs = 0;
    let last: AttackReport = { answered: 0, statuses: {}, bytes: 0 };
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < CALLS_PER_ROUND; i++) rounds.idle.push(await legit());
      for (const target of ['decoy', 'cc'] as const) {
        const cpu0 = cpuMsOf(ccPid);
        const t0 = performance.now();
        worker.postMessage({ start: target } satisfies Order);
        // Let the attackers get going (their first documents are on the wire) before the legitimate calls.
        await new Promise((done) => setTimeout(done, 200));
        for (let i = 0; i < CALLS_PER_ROUND; i++) rounds[target].push(await legit());
        const report = await stop();
        if (target === 'cc') {
          ccMs += performance.now() - t0;
          ccAnswers += report.answered - last.answered;
          ccCpuMs += cpuMsOf(ccPid) - cpu0;
          last = report;
        }
      }
    }
    const median = (xs: readonly number[]): number => quantile(xs, 0.5);
    console.log(`legit ccDescribeNodes (CLC certificate), ${ROUNDS}x${CALLS_PER_ROUND} calls per kind of round, rounds alternating`);
    console.log(line('no attack', rounds.idle));
    console.log(line('attack aimed at a decoy', rounds.decoy));
    console.log(line('attack aimed at the CC', rounds.cc));
    console.log(`  failed calls      ${failed}`);
    console.log(`  ratio of medians: CC attacked / decoy attacked ${(median(rounds.cc) / median(rounds.decoy)).toFixed(1)}x, CC attacked / no attack ${(median(rounds.cc) / median(rounds.idle)).toFixed(1)}x`);
    console.log(`attack: ${ATTACKERS} NC-certificate clients, ${last.bytes} bytes each to ccDescribeNodes`);
    console.log(`  CC answered ${ccAnswers} in ${(ccMs / 1000).toFixed(1)} s (${Object.entries(last.statuses).map(([k, v]) => `${k}: ${v}`).join(', ')})`);
    console.log(`  CC CPU during its attack rounds ${ccCpuMs} ms = ${(ccCpuMs / Math.max(1, ccAnswers)).toFixed(1)} ms per refused request, ${(ccCpuMs / ccMs * 100).toFixed(0)}% of one core`);
  } finally {
    worker.postMessage('close' satisfies Order);
    await worker.terminate();
    clc.close();
    for (const d of running.reverse()) await stopPid(d.pid);
    rmSync(baseDir, { recursive: true, force: true });
  }
}

if (isMainThread) await main();
else await attackWorker(workerData as AttackOrders);
