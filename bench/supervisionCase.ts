/**
 * Issue 19's `supervision` case: a real CC and CLC (processes from dist/, mutual TLS) supervising
 * thousands of simulated hosts run by scale-mode processes (nc/scale/main.ts, each host a real NC on
 * its own address 127.64.X.Y with its own certificate), the CC polling every host every 10 s and
 * host HA on with its health pass. Measured:
 *   - CPU of the CC and of the CLC in steady state, from /proc/PID/stat (utime + stime) over a
 *     window, as a share of one core (1.0 = one core busy all the time), and their RSS;
 *   - CC CPU per host per poll round (ms) = CC CPU seconds / rounds in the window / hosts;
 *   - a burst of 100 hosts failing at once (listener and connections closed, heartbeat stopped):
 *     each host's time from its failure to SUSPECT (HA's suspectSince, DescribeHostHA), p50/p99;
 *   - the storm gate: MaxUnhealthy is set below the burst (50 of 100 failed), the activity checks
 *     are shortened so that failed hosts reach the point where HA would power-cycle or fence them
 *     within the observation, and the most hosts ever in RECOVERING, REMEDIATING, FENCING or FENCED
 *     at once must stay within the bound.
 *   - the CC's and the CLC's event-loop stalls over the window (their metrics' nodejs_eventloop_lag_max_seconds,
 *     scraped every SCRAPE_MS): how long a request (the CLC's health describe) can wait behind other work.
 * Everything on 127.0.90.0/24 (ports 19650-19654) and 127.64.0.0/18.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from '../scripts/adminQuery.js';
import { isHeld, REMEDIATING_STATES, SCALE_BURST, SCALE_MAX_UNHEALTHY, SCALE_POLL_MS, startScaleCloud } from '../scripts/scaleCloud.js';
import { measured, type CaseResult } from './report.js';

const LABEL = 'supervision';
const CONTROLLER = '127.0.90.1';
const PORTS = { cc: 19650, clc: 19651, nc: 19652, ccMetrics: 19653, clcMetrics: 19654 } as const;

export interface SupervisionResult {
  readonly hosts: number;
  readonly scaleProcesses: number;
  readonly windowS: number;
  readonly ccCores: number;
  readonly clcCores: number;
  readonly scaleCores: number;
  readonly ccRssMiB: number;
  readonly clcRssMiB: number;
  readonly suspectP50Ms: number;
  readonly suspectP99Ms: number;
  readonly suspectSeen: number;
  /** Hosts not AVAILABLE to HA just before the burst (a steady cloud has none: more means false suspicion under load). */
  readonly notAvailableBefore: number;
  /** Failed hosts already SUSPECT (or further) when they failed: not counted in the latencies. */
  readonly alreadySuspect: number;
  readonly maxRemediating: number;
  readonly heldSeen: number;
  readonly loadAverage: readonly number[];
  /** The longest event-loop stall seen in one scrape interval over the window, and the median of the per-interval maxima, ms. */
  readonly ccLagMaxMs: number;
  readonly ccLagMedianMs: number;
  readonly clcLagMaxMs: number;
  readonly clcLagMedianMs: number;
}

/**
 * How often the bench scrapes each daemon's metrics. A scrape is not free (the process metrics count
 * its handles and read /proc/self/fd: at 2,000 hosts, scraping every second was a sixth of the CC's
 * CPU); 5 s is still more often than a production Prometheus (15–60 s).
 */
const SCRAPE_MS = 5000;

/**
 * Scrapes a daemon's metrics every SCRAPE_MS until stopped: the maximum event-loop delay of each interval
 * (prom-client resets its histogram at each collect, so each scrape is the second since the last).
 */
function lagSampler(url: string, tokenFile: string): { stop(): Promise<{ maxima: number[]; requests: Map<string, number> }> } {
  const token = readFileSync(tokenFile, 'utf8').trim();
  const maxima: number[] = [];
  let running = true;
  const scrape = async (): Promise<string> => (await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5000) })).text();
  let first = '';
  let last = '';
  const loop = (async () => {
    // The first scrape answers for everything since the daemon started (HA switched on for every host,
    // a fence agent's status asked of each): discarded, so that the window counts only its own seconds.
    first = await scrape().catch(() => '');
    while (running) {
      try {
        const text = await scrape();
        last = text;
        const m = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})?\s+(\S+)/m.exec(text);
        if (m) maxima.push(Number(m[1]) * 1000);
      } catch {
        // A scrape that did not answer within 5 s is itself a stall: counted as such.
        maxima.push(5000);
      }
      await new Promise((r) => setTimeout(r, SCRAPE_MS));
    }
  })();
  // The requests the daemon answered over the window, by operation (ferry_wire_requests_total).
  const counts = (text: string): Map<string, number> => {
    const out = new Map<string, number>();
    for (const m of text.matchAll(/^ferry_wire_requests_total\{([^}]*)\}\s+(\S+)/gm)) {
      const op = /op="([^"]*)"/.exec(m[1]!)?.[1] ?? '?';
      out.set(op, (out.get(op) ?? 0) + Number(m[2]));
    }
    return out;
  };
  return {
    stop: async () => {
      running = false;
      await loop;
      const before = counts(first);
      return { maxima, requests: new Map([...counts(last)].map(([op, n]) => [op, n - (before.get(op) ?? 0)] as const).filter(([, n]) => n > 0)) };
    },
  };
}

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
};

export async function supervision(hostCount: number, windowS: number, observeS: number): Promise<SupervisionResult> {
  // FERRY_BENCH_PROFILE=<dir>: the CC and CLC write CPU profiles there when they stop (node --cpu-prof).
  const profile = process.env.FERRY_BENCH_PROFILE;
  const cloud = await startScaleCloud({
    label: LABEL, hostCount, firstBlock: 0, controller: CONTROLLER, ports: PORTS, pollMs: SCALE_POLL_MS, maxUnhealthy: SCALE_MAX_UNHEALTHY,
    nodeArgs: profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profile],
    env: { FERRY_LOG_LEVEL: 'warn' }, availableWithinMs: 900_000,
  });
  const { baseDir, hosts, cc, clc, farms, haStates } = cloud;
  const clcDir = join(baseDir, 'clc');
  try {
    // Steady state: a full poll period and an HA health interval past the last host's enable.
    await new Promise((r) => setTimeout(r, 2 * SCALE_POLL_MS));

    const farmPids = farms.map((f) => f.pid);
    const before = { cc: cpuSeconds(cc.pid), clc: cpuSeconds(clc.pid), farms: farmPids.map(cpuSeconds) };
    const lags = {
      cc: lagSampler(`http://${CONTROLLER}:${PORTS.ccMetrics}/metrics`, join(baseDir, 'cc', 'metrics.token')),
      clc: lagSampler(`http://${CONTROLLER}:${PORTS.clcMetrics}/metrics`, join(clcDir, 'metrics.token')),
    };
    const t0 = performance.now();
    const windowFrom = new Date().toISOString();
    await new Promise((r) => setTimeout(r, windowS * 1000));
    // For reading a CPU profile (FERRY_BENCH_PROFILE) of the window alone.
    console.log(`supervision: window ${windowFrom} to ${new Date().toISOString()}`);
    const ccSeen = await lags.cc.stop();
    const clcSeen = await lags.clc.stop();
    const ccLags = ccSeen.maxima;
    const clcLags = clcSeen.maxima;
    console.log(`supervision: requests answered over the window: CC ${JSON.stringify(Object.fromEntries(ccSeen.requests))}; CLC ${JSON.stringify(Object.fromEntries(clcSeen.requests))}`);
    console.log(`supervision: event-loop stalls over the window, maxima per ${SCRAPE_MS / 1000} s (ms): CC median ${percentile(ccLags, 50).toFixed(0)} max ${Math.max(...ccLags).toFixed(0)}; CLC median ${percentile(clcLags, 50).toFixed(0)} max ${Math.max(...clcLags).toFixed(0)}`);
    const seconds = (performance.now() - t0) / 1000;
    const ccCores = (cpuSeconds(cc.pid) - before.cc) / seconds;
    const clcCores = (cpuSeconds(clc.pid) - before.clc) / seconds;
    const scaleCores = farmPids.reduce((a, p, i) => a + cpuSeconds(p) - before.farms[i]!, 0) / seconds;
    const ccRssMiB = rssMiB(cc.pid);
    const clcRssMiB = rssMiB(clc.pid);
    const loadAverage = (await import('node:os')).loadavg();

    // The burst: every (hostCount / SCALE_BURST)-th host, spread over the scale processes, failed at once.
    const failed = Array.from({ length: SCALE_BURST }, (_, i) => hosts[Math.floor((i * hostCount) / SCALE_BURST)]!);
    const notAvailableBefore = (await haStates()).filter((r) => r.state !== 'AVAILABLE').length;
    const failedAt = await cloud.fail(failed);
    const suspectAt = new Map<string, number>();
    let maxRemediating = 0;
    const held = new Set<string>();
    const observe = async (): Promise<void> => {
      const recs = await haStates(failed);
      for (const r of recs) {
        const host = String(r.host);
        if (typeof r.suspectSince === 'string' && !suspectAt.has(host)) suspectAt.set(host, Date.parse(r.suspectSince));
        else if (r.suspectSince === undefined && !suspectAt.has(host) && r.state !== 'AVAILABLE') suspectAt.set(host, Number.NaN);
        if (isHeld(r)) held.add(host);
      }
      maxRemediating = Math.max(maxRemediating, recs.filter((r) => REMEDIATING_STATES.has(String(r.state))).length);
    };
    await until(LABEL, 'every failed host SUSPECT', async () => {
      await observe();
      return suspectAt.size === SCALE_BURST ? true : undefined;
    }, 250, 180_000);
    const observeUntil = Date.now() + observeS * 1000;
    while (Date.now() < observeUntil) {
      await observe();
      await new Promise((r) => setTimeout(r, 500));
    }
    // A host already suspected before it failed (its suspectSince predates the failure) tells nothing of detection.
    const detected = failed.filter((h) => suspectAt.get(h)! >= failedAt.get(h)!);
    const latencies = detected.map((h) => suspectAt.get(h)! - failedAt.get(h)!);
    const alreadySuspect = failed.length - detected.length;
    return {
      hosts: hostCount, scaleProcesses: farms.length, windowS: seconds, ccCores, clcCores, scaleCores, ccRssMiB, clcRssMiB,
      suspectP50Ms: percentile(latencies, 50), suspectP99Ms: percentile(latencies, 99), suspectSeen: detected.length, notAvailableBefore, alreadySuspect,
      maxRemediating, heldSeen: held.size, loadAverage,
      ccLagMaxMs: Math.max(...ccLags), ccLagMedianMs: percentile(ccLags, 50), clcLagMaxMs: Math.max(...clcLags), clcLagMedianMs: percentile(clcLags, 50),
    };
  } finally {
    // FERRY_BENCH_KEEP=1 keeps the state and logs.
    await cloud.close();
  }
}

/** The case and its sub-measurements; quick mode supervises 2,000 hosts (the full run 10,000). */
export async function supervisionCases(quick: boolean): Promise<CaseResult[]> {
  const r = await supervision(quick ? 2000 : 10_000, quick ? 30 : 60, quick ? 20 : 30);
  const n = r.hosts.toLocaleString('en');
  const where = `${n} hosts in ${r.scaleProcesses} scale processes (${r.scaleCores.toFixed(2)} cores), load ${r.loadAverage.map((l) => l.toFixed(2)).join(' ')}`;
  return [
    measured({
      name: 'supervision', what: `CC CPU supervising ${where}, 10 s polls, HA on, ${r.windowS.toFixed(0)} s window: cores used / 1 core (target: half a core, room to spare)`,
      ferry: r.ccCores, baseline: 1, unit: 'cores', target: 0.5, better: 'lower',
    }),
    measured({
      name: 'supervision/clc-cpu', partOf: 'supervision', what: `CLC CPU over the same window (host HA's health pass of ${n} hosts every 10 s) / 1 core`,
      ferry: r.clcCores, baseline: 1, unit: 'cores', target: 0.5, better: 'lower',
    }),
    measured({
      name: 'supervision/cc-per-host', partOf: 'supervision', what: 'CC CPU per host per poll round (CPU time / rounds in the window / hosts) / the issue\'s 1 ms bound',
      ferry: (r.ccCores * SCALE_POLL_MS) / r.hosts, baseline: 1, unit: 'ms', target: 1, better: 'lower',
    }),
    measured({
      name: 'supervision/memory', partOf: 'supervision', what: `RSS of the CC (${r.ccRssMiB.toFixed(0)} MiB) and CLC (${r.clcRssMiB.toFixed(0)} MiB) together, MiB per 1,000 hosts / 1 MiB (no baseline: the figure itself)`,
      ferry: ((r.ccRssMiB + r.clcRssMiB) * 1000) / r.hosts, baseline: 1, unit: 'MiB', target: null, better: 'lower',
    }),
    measured({
      name: 'supervision/cc-stall', partOf: 'supervision', what: `the CC's longest event-loop stall in one ${SCRAPE_MS / 1000} s scrape interval of the window (median interval ${r.ccLagMedianMs.toFixed(0)} ms; the CLC's: ${r.clcLagMaxMs.toFixed(0)} ms, median ${r.clcLagMedianMs.toFixed(0)} ms) / the CLC's 10 s call timeout`,
      ferry: r.ccLagMaxMs, baseline: 10_000, unit: 'ms', target: null, better: 'lower',
    }),
    measured({
      name: 'supervision/suspect-p50', partOf: 'supervision', what: `${SCALE_BURST} hosts failed at once: median time from a host's failure to SUSPECT (${r.suspectSeen} seen; ${r.alreadySuspect} already suspect, ${r.notAvailableBefore} of all hosts not AVAILABLE before the burst) / the 10 s poll period`,
      ferry: r.suspectP50Ms, baseline: SCALE_POLL_MS, unit: 'ms', target: null, better: 'lower',
    }),
    measured({
      name: 'supervision/suspect-p99', partOf: 'supervision', what: `the same, 99th percentile / the 10 s poll period`,
      ferry: r.suspectP99Ms, baseline: SCALE_POLL_MS, unit: 'ms', target: null, better: 'lower',
    }),
    measured({
      name: 'supervision/storm-gate', partOf: 'supervision', what: `most of the ${SCALE_BURST} failed hosts in RECOVERING/REMEDIATING/FENCING/FENCED at once (${r.heldSeen} held by the gate) / MaxUnhealthy ${SCALE_MAX_UNHEALTHY}`,
      ferry: r.maxRemediating, baseline: SCALE_MAX_UNHEALTHY, unit: 'hosts', target: 1, better: 'lower',
    }),
  ];
}
