/**
 * The `api` case: signed DescribeInstances over 1,000 instances, requests per second of a real CLC
 * (dist/clc/main.js, SigV4, calling its CC over the wire in compact JSON) against a bare express
 * server returning the same XML. The CC is a wire service answering from memory (apiServers.ts), so
 * what is measured is the CLC's path: signature check, validation, its call to the CC, the join with
 * its records and the XML. Both servers are processes of their own on 127.0.64.0/24; the load
 * (8 requests in flight, each signed afresh, alike for both) alternates between them in rounds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readCredentialsFile, type Credentials } from '../shared/auth/credentialsFile.js';
import { signQuery } from '../shared/auth/sign.js';
import { measured, type CaseResult } from './report.js';

const HOST = { clc: '127.0.64.254', cc: '127.0.64.253', bare: '127.0.64.252' };
const PORT = { clc: 18773, cc: 18774, bare: 18775 };
const INSTANCES = 1000;
const IN_FLIGHT = 8;
const DIST = join(import.meta.dirname, '..');

export function start(args: string[], ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start: ${out.slice(-500)}`)), 60_000);
    const look = (c: Buffer): void => {
      out += c.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        child.stdout!.off('data', look);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve(child);
      }
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}: ${out.slice(-500)}`)));
  });
}

export function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.pid === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Keep-alive within one load() only: a connection idle between phases may be closed by the server under the client. */
function post(agent: http.Agent | false, url: string, creds: Credentials, signFor: string): Promise<{ status: number; body: string }> {
  const signed = signQuery({ Action: 'DescribeInstances', Version: '2013-02-01' }, { ...creds, url: signFor, now: Date.now() });
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...signed.headers, 'content-length': Buffer.byteLength(signed.body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(signed.body);
  });
}

/** Requests per second over `ms`, IN_FLIGHT at a time; every answer must be a 200. */
async function load(url: string, creds: Credentials, signFor: string, ms: number): Promise<number> {
  let done = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const end = performance.now() + ms;
  const t0 = performance.now();
  try {
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < end) {
        const r = await post(agent, url, creds, signFor);
        if (r.status !== 200) throw new Error(`HTTP ${r.status} from ${url}: ${r.body.slice(0, 300)}`);
        done++;
      }
    }));
  } finally {
    agent.destroy();
  }
  return done / ((performance.now() - t0) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export async function apiCase(o: { readonly quick: boolean }): Promise<CaseResult> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-api-'));
  const children: ChildProcess[] = [];
  try {
    children.push(await start([join(DIST, 'bench', 'apiServers.js'), 'cc', HOST.cc, String(PORT.cc), String(INSTANCES)], /listening/));
    const clcUrl = `http://${HOST.clc}:${PORT.clc}/services/Eucalyptus`;
    children.push(await start([join(DIST, 'clc', 'main.js'), '--host', HOST.clc, '--port', String(PORT.clc), '--state-dir', dir, '--auth', 'sigv4',
      '--insecure-plaintext', '--clusters', `cluster01=http://${HOST.cc}:${PORT.cc}`], /clc listening/));
    const creds = await readCredentialsFile(join(dir, 'admin.credentials'));
    const sample = await post(false, clcUrl, creds, clcUrl);
    const items = sample.body.match(/<instanceId>/g)?.length ?? 0;
    if (sample.status !== 200 || items !== INSTANCES) throw new Error(`the CLC answered ${sample.status} with ${items} instances, not ${INSTANCES}`);
    const file = join(dir, 'describe.xml');
    writeFileSync(file, sample.body);
    children.push(await start([join(DIST, 'bench', 'apiServers.js'), 'bare', HOST.bare, String(PORT.bare), file], /listening/));
    const bareUrl = `http://${HOST.bare}:${PORT.bare}/services/Eucalyptus`;
    const rounds = o.quick ? 3 : 5;
    const ms = o.quick ? 2000 : 4000;
    await load(clcUrl, creds, clcUrl, 500);
    await load(bareUrl, creds, bareUrl, 500);
    const ferry: number[] = [];
    const baseline: number[] = [];
    for (let r = 0; r < rounds; r++) {
      ferry.push(await load(clcUrl, creds, clcUrl, ms));
      baseline.push(await load(bareUrl, creds, bareUrl, ms));
    }
    return measured({
      name: 'api', what: `signed DescribeInstances over ${INSTANCES} instances (${sample.body.length} B of XML), ${IN_FLIGHT} in flight: a real CLC / a bare express server returning the same XML`,
      ferry: median(ferry), baseline: median(baseline), unit: 'req/s', target: 0.5, better: 'higher',
    });
  } finally {
    for (const c of children.reverse()) await stop(c);
    rmSync(dir, { recursive: true, force: true });
  }
}
