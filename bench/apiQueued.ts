/**
 * The second half of issue 19's `api` case: 1,000 RunInstances queued behind a pending drain must
 * all complete, in order, none lost. A real CLC (sigv4, its partition gate) in front of the gate CC
 * (bench/gateCc.ts) whose ccModifyNode waits for the bench: a DisableService of the partition's one
 * node is sent first and stays pending; then 1,000 RunInstances, each with its own ClientToken, each
 * sent once the CLC's gate counts the one before it as waiting (ferry_gate_waiting on the CLC's
 * metrics listener), so the order they queued in is known; then the DisableService is released.
 * Counted: answers 200, requests the CC read before one that queued ahead of them (the CLC sends
 * them in queue order; concurrent connections may still swap two sent in the same moment), and none
 * lost (every reservation answered is one the CC started, once). Timed: the queue's drain, from the
 * release to the last answer, against the same 1,000 RunInstances sent with nothing pending
 * (baseline), 8 in flight both ways. Everything on 127.0.64.0/24 (ports 18776-18778), or on the
 * /24 and from the port FERRY_BENCH_QUEUED_NET and FERRY_BENCH_QUEUED_PORT name (e.g. `127.0.98` and
 * `19900`, so a helper can run it beside another bench). Alone:
 * `node dist/bench/apiQueued.js [--quick]` (200 launches instead of 1,000); FERRY_BENCH_PROFILE=<dir>
 * profiles the CLC.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readCredentialsFile, type Credentials } from '../shared/auth/credentialsFile.js';
import { signQuery } from '../shared/auth/sign.js';
import { METRICS_TOKEN_FILE } from '../shared/config/metricsFlags.js';
import { start, stop } from './apiCase.js';
import { measured, type CaseResult } from './report.js';

const NET = process.env.FERRY_BENCH_QUEUED_NET ?? '127.0.64';
const PORT0 = Number(process.env.FERRY_BENCH_QUEUED_PORT ?? 18776);
const HOST = { clc: `${NET}.250`, cc: `${NET}.251`, node: `${NET}.50` };
const PORT = { clc: PORT0 + 1, cc: PORT0, metrics: PORT0 + 2 };
const DIST = join(import.meta.dirname, '..');
const IN_FLIGHT = 8;

interface Answer { readonly status: number; readonly body: string }

async function query(url: string, creds: Credentials, params: Record<string, string>): Promise<Answer> {
  const signed = signQuery({ Version: '2013-02-01', ...params }, { ...creds, url, now: Date.now() });
  const res = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
  return { status: res.status, body: await res.text() };
}

const reservationOf = (a: Answer): string | undefined => /<reservationId>([^<]+)<\/reservationId>/.exec(a.body)?.[1];

/** Non-200 answers by `status Code: message` (its first 160 characters). */
function failuresOf(answers: readonly Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    if (a.status === 200) continue;
    const key = `${a.status} ${/<Code>([^<]+)<\/Code>/.exec(a.body)?.[1] ?? '?'}: ${/<Message>([^<]{0,160})/.exec(a.body)?.[1] ?? ''}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

async function until<T>(what: string, look: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const v = await look();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`api/queued bench: ${what} within 120 s`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Runs `count` RunInstances, `IN_FLIGHT` at a time; the answers by request index. */
async function runMany(url: string, creds: Credentials, count: number, tokenPrefix: string): Promise<Answer[]> {
  const out: Answer[] = new Array(count);
  let next = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < count) {
      const i = next++;
      out[i] = await query(url, creds, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '1', MaxCount: '1', ClientToken: `${tokenPrefix}-${i}` });
    }
  }));
  return out;
}

export interface QueuedResult {
  readonly requests: number;
  readonly answered200: number;
  /** Requests the CC received before one that had queued ahead of them. */
  readonly overtook: number;
  readonly lost: number;
  /** The queued launches answered other than 200, by `status Code: message` (empty when none). */
  readonly failures: Readonly<Record<string, number>>;
  readonly drainMs: number;
  readonly unqueuedMs: number;
}

export async function apiQueued(requests: number): Promise<QueuedResult> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-api-queued-'));
  const children: ChildProcess[] = [];
  try {
    children.push(await start([join(DIST, 'bench', 'apiServers.js'), 'gate', HOST.cc, String(PORT.cc), HOST.node], /listening/));
    const cc = `http://${HOST.cc}:${PORT.cc}`;
    const url = `http://${HOST.clc}:${PORT.clc}/services/Eucalyptus`;
    // FERRY_BENCH_PROFILE=<dir>: the CLC writes a CPU profile there when it stops (node --cpu-prof), as in bench/supervisionCase.ts.
    const profile = process.env.FERRY_BENCH_PROFILE;
    const nodeArgs = profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profile];
    children.push(await start([...nodeArgs, join(DIST, 'clc', 'main.js'), '--host', HOST.clc, '--port', String(PORT.clc), '--state-dir', dir, '--auth', 'sigv4',
      '--insecure-plaintext', '--clusters', `cluster01=${cc}`, '--metrics-port', String(PORT.metrics),
      // The gate CC holds the DisableService for as long as queueing one by one takes (a real one answers
      // once its NC persisted, and a real burst queues within a second): neither bound may end it first.
      '--cc-timeout-ms', '600000', '--gate-max-wait-ms', '600000'], /clc listening/));
    const creds = await readCredentialsFile(join(dir, 'admin.credentials'));
    const token = readFileSync(join(dir, METRICS_TOKEN_FILE), 'utf8').trim();
    const waiting = async (): Promise<number> => {
      const text = await (await fetch(`http://${HOST.clc}:${PORT.metrics}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
      return Number(/^ferry_gate_waiting\{partition="cluster01"[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
    };

    // Baseline: the same launches with nothing pending (and the CLC warmed up).
    const t0 = performance.now();
    const plain = await runMany(url, creds, requests, 'plain');
    const unqueuedMs = performance.now() - t0;
    const refused = plain.find((a) => a.status !== 200);
    if (refused) throw new Error(`api/queued bench: a RunInstances with nothing pending answered ${refused.status}: ${refused.body.slice(0, 400)}`);
    const before = (await (await fetch(`${cc}/seen`)).json() as { runs: string[] }).runs.length;

    // The drain: DisableService of the node, held at the CC until released.
    const disable = query(url, creds, { Action: 'DisableService', Type: 'node', Host: HOST.node, Partition: 'cluster01' });
    await until('the DisableService at the CC', async () => ((await (await fetch(`${cc}/seen`)).json() as { modifyCalls: number }).modifyCalls > 0 ? true : undefined));
    const answers: Promise<Answer>[] = [];
    for (let i = 0; i < requests; i++) {
      answers.push(query(url, creds, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '1', MaxCount: '1', ClientToken: `queued-${i}` }));
      const settled = answers[i]!.then((a) => a);
      await until(`RunInstances ${i} waiting at the gate`, async () => {
        if ((await waiting()) >= i + 1) return true;
        const early = await Promise.race([settled, Promise.resolve(undefined)]);
        if (early) {
          const d = await Promise.race([disable, Promise.resolve(undefined)]);
          throw new Error(`api/queued bench: RunInstances ${i} answered ${early.status} before the DisableService was released (the DisableService: ${d ? `${d.status} ${d.body.slice(0, 300)}` : 'pending'}; gate waiting ${await waiting()})`);
        }
        return undefined;
      });
    }
    const t1 = performance.now();
    await fetch(`${cc}/release`, { method: 'POST' });
    const got = await Promise.all(answers);
    const drainMs = performance.now() - t1;
    const disabled = await disable;
    if (disabled.status !== 200) throw new Error(`api/queued bench: DisableService answered ${disabled.status}: ${disabled.body.slice(0, 300)}`);

    const runs = (await (await fetch(`${cc}/seen`)).json() as { runs: string[] }).runs.slice(before);
    const reservations = got.map(reservationOf);
    const position = new Map(runs.map((r, i) => [r, i]));
    const order = reservations.map((r) => (r === undefined ? -1 : position.get(r) ?? -1));
    // A request the CC received before one that queued ahead of it. The CLC sends them in queue order
    // (PartitionGate.sendTurn); calls sent within the same moment on different connections may still
    // be read by the CC in the other order.
    let ahead = -1;
    let overtook = 0;
    for (const p of order) {
      if (p < ahead) overtook++;
      ahead = Math.max(ahead, p);
    }
    const started = new Set(runs);
    const lost = reservations.filter((r) => r === undefined || !started.has(r)).length + (runs.length - started.size);
    return { requests, answered200: got.filter((a) => a.status === 200).length, overtook, lost, failures: failuresOf(got), drainMs, unqueuedMs };
  } finally {
    for (const c of children.reverse()) await stop(c);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench's row: queued drain time / the same launches with nothing pending; the counts in `what`. */
export function apiQueuedRow(r: QueuedResult): CaseResult {
  return measured({
    name: 'api/queued', partOf: 'api',
    what: `${r.requests} RunInstances queued behind a pending DisableService, then released: ${r.answered200}/${r.requests} answered 200, ` +
      `sent on in the order they queued (${r.overtook} read by the CC before one queued ahead of it), ${r.lost} lost` +
      `${Object.keys(r.failures).length > 0 ? ` (answers not 200: ${Object.entries(r.failures).map(([k, n]) => `${n}x ${k}`).join(', ')})` : ''}; the queue's drain / the same launches with nothing pending (${IN_FLIGHT} in flight)`,
    ferry: r.drainMs, baseline: r.unqueuedMs, unit: 'ms', target: null, better: 'lower',
  });
}

// Run alone: `node dist/bench/apiQueued.js [--quick]`.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const r = await apiQueued(process.argv.includes('--quick') ? 200 : 1000);
  console.log(JSON.stringify(r));
  console.log(JSON.stringify(apiQueuedRow(r)));
}
