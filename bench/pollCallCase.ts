/**
 * `supervision/poll-call`: what one node poll costs the CC's process, the call alone: the CC's own
 * client (cc/nodeClient.ts WireNodeClient.describe over HttpWireTransport, mutual TLS, kept-alive
 * connections, the answer decoded and validated) / a bare HTTPS POST on the same kind of connection
 * (same certificates and agent options, the answer read and dropped). CPU of this process per call
 * (process.cpuUsage), not wall time: a poll's cost is what it takes from the CC's core. 200 hosts of
 * one scale-mode process (nc/scale) on 127.64.40.0/24 (port 19655), called 64 at a time, alternating
 * rounds, medians.
 *
 * What it tells: a CC polling 10,000 hosts every 10 s makes 1,000 calls a second, so the bare call's
 * cost times 1,000 is the floor of "cores per 10,000 hosts" for polling as it is done now.
 */
import https from 'node:https';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { WireNodeClient } from '../cc/nodeClient.js';
import { loadTlsIdentity } from '../shared/pki/tlsIdentity.js';
import { HttpWireTransport } from '../shared/wire/httpTransport.js';
import { clientTlsOptions } from '../shared/wire/tls.js';
import { NC_PATH } from '../shared/wire/transport.js';
import { ensureScalePki, scaleHosts, startScaleProcess } from '../scripts/scaleFarm.js';
import { measured, type CaseResult } from './report.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const CONTROLLER = '127.0.90.2';
const PORT = 19655;
const HOSTS = 200;
const BATCH = 64;

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** µs of this process's CPU per call over `rounds` passes over every host. */
async function cpuPerCall(hosts: readonly string[], call: (h: string) => Promise<unknown>, rounds: number): Promise<number> {
  const c0 = process.cpuUsage();
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < hosts.length; i += BATCH) await Promise.all(hosts.slice(i, i + BATCH).map(call));
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / (rounds * hosts.length);
}

export async function pollCallCase(quick: boolean): Promise<CaseResult> {
  const baseDir = mkdtempSync(join(tmpdir(), 'ferry-bench-poll-call-'));
  mkdirSync(join(baseDir, 'logs'));
  mkdirSync(join(baseDir, 'storage'));
  const hosts = scaleHosts(HOSTS, 40);
  ensureScalePki(baseDir, CONTROLLER, hosts);
  // No CC listens at ccUrl: the hosts' start-up hints are refused at once, which is all they need.
  const farm = await startScaleProcess({
    root: ROOT, baseDir, name: 'scale-poll', hosts, port: PORT, ccUrl: `https://${CONTROLLER}:${PORT + 1}`, storageDir: join(baseDir, 'storage'),
    env: { FERRY_LOG_LEVEL: 'error' },
  });
  try {
    const tls = clientTlsOptions(loadTlsIdentity(join(baseDir, 'certs'), 'cc', CONTROLLER));
    const nodes = new WireNodeClient(new HttpWireTransport({ path: NC_PATH, defaultTimeoutMs: 10_000, tls }), (h) => `https://${h}:${PORT}`);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 64, ...tls });
    const bare = (host: string): Promise<void> => new Promise((res, rej) => {
      const req = https.request({ host, port: PORT, method: 'POST', path: NC_PATH, agent, headers: { 'content-type': 'application/json' } }, (r) => {
        r.resume();
        r.on('end', () => res());
      });
      req.on('error', rej);
      req.end('{}');
    });
    const ferry = (h: string): Promise<unknown> => nodes.describe(h);
    // Connections made and code warmed on both sides first, not counted.
    await cpuPerCall(hosts, ferry, 2);
    await cpuPerCall(hosts, bare, 2);
    const f: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < (quick ? 5 : 9); r++) {
      f.push(await cpuPerCall(hosts, ferry, 5));
      b.push(await cpuPerCall(hosts, bare, 5));
    }
    agent.destroy();
    const [fm, bm] = [median(f), median(b)];
    return measured({
      name: 'supervision/poll-call', partOf: 'supervision',
      what: `one node poll, the caller's CPU: the CC's describe (mutual TLS, kept alive, decoded and validated) / a bare HTTPS POST on the same connections (${HOSTS} hosts, ${BATCH} at a time; at 10,000 hosts every 10 s, the bare call alone is ${(bm / 1000).toFixed(2)} cores)`,
      ferry: fm, baseline: bm, unit: 'µs', target: null, better: 'lower',
    });
  } finally {
    await farm.stop();
    rmSync(baseDir, { recursive: true, force: true });
  }
}
