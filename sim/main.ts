/**
 * `npm run sim -- --seeds N [--from S] [--workers W]`: runs seeds in parallel on worker threads and
 * prints seeds/second, failing seeds (shrunk to a replayable schedule) and state-machine coverage.
 * `--hosts H` runs each seed as one cloud of H hosts (the scale mode, scale.ts).
 * `npm run sim -- --seed S [--keep 1,4,9] [--trace]`: replays one seed, optionally shrunk, printing
 * its trace. Exits 1 when any seed violates an invariant. `--careless` adds an operator who confirms
 * fences without looking (outside the safety envelope: such seeds end "unsafe", not failing).
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { mergeCoverage, type CoverageCounts } from './coverage.js';
import { coverageLines, shrunkLines, throughputLine, violationLines, type SeedJob, type SeedSummary } from './report.js';
import { runSeed, type SeedOptions } from './runSeed.js';
import { MAX_HOSTS, scaleSettings } from './scale.js';
import { shrink } from './shrink.js';

const USAGE = `usage: npm run sim -- [--seeds N] [--from S] [--workers W] [--shrink K] [--hosts H] [--careless]
       npm run sim -- --seed S [--hosts H] [--keep 1,4,9|none] [--trace] [--watch i-xxxxxxxx] [--careless]`;

const OPTIONS = {
  seeds: { type: 'string', default: '1000' },
  from: { type: 'string', default: '1' },
  workers: { type: 'string' },
  seed: { type: 'string' },
  keep: { type: 'string' },
  trace: { type: 'boolean', default: false },
  careless: { type: 'boolean', default: false },
  watch: { type: 'string' },
  shrink: { type: 'string', default: '3' },
  hosts: { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;

/** Bad flags or numbers: say which, print the usage, exit 2 (nothing runs). */
function parseFlags(): ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'] {
  let values;
  try {
    values = parseArgs({ options: OPTIONS }).values;
  } catch (e) {
    process.stderr.write(`sim: ${(e as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  for (const name of ['seeds', 'from', 'workers', 'seed', 'shrink', 'hosts'] as const) {
    const v = values[name];
    if (v !== undefined && !/^\d+$/.test(v)) {
      process.stderr.write(`sim: --${name} must be a whole number, not ${JSON.stringify(v)}\n${USAGE}\n`);
      process.exit(2);
    }
  }
  const hosts = values.hosts === undefined ? undefined : Number(values.hosts);
  if (hosts !== undefined && (hosts < 1 || hosts > MAX_HOSTS)) {
    process.stderr.write(`sim: --hosts must be between 1 and ${MAX_HOSTS}, not ${hosts}\n${USAGE}\n`);
    process.exit(2);
  }
  return values;
}

const values = parseFlags();
const hosts = values.hosts === undefined ? undefined : Number(values.hosts);
/** The seed's own shape (3-6 hosts), or the scale mode's cloud. */
const shape = (seed: number): SeedOptions => ({ carelessOperator: values.careless, ...(hosts === undefined ? {} : { settings: scaleSettings(seed, hosts) }) });

async function replay(seed: number): Promise<number> {
  const keep = values.keep === undefined ? undefined : new Set(values.keep === 'none' ? [] : values.keep.split(',').map(Number));
  const r = await runSeed(seed, { ...shape(seed), collectTrace: values.trace, ...(keep ? { keep } : {}), ...(values.watch ? { watch: values.watch } : {}) });
  if (values.trace) process.stdout.write(`${r.trace.join('\n')}\n`);
  process.stdout.write(`seed ${seed}: ${r.steps} steps, trace ${r.traceHash}, ${r.violations.length === 0 ? 'no violations' : 'VIOLATED'}\n`);
  for (const l of violationLines({ seed, violations: r.violations, unsafe: r.unsafe.length, steps: r.steps, traceHash: r.traceHash, coverage: r.coverage })) process.stdout.write(`${l}\n`);
  if (r.unsafe.length > 0) process.stdout.write(`  unsafe by a BMC lie or a careless operator (not Ferry's): ${r.unsafe[0]?.invariant}: ${r.unsafe[0]?.detail}\n`);
  return r.violations.length === 0 ? 0 : 1;
}

function runPool(from: number, count: number, workers: number, onResult: (s: SeedSummary) => void): Promise<void> {
  let nextSeed = from;
  const end = from + count;
  return new Promise((resolve, reject) => {
    let open = workers;
    for (let w = 0; w < workers; w++) {
      const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: { carelessOperator: values.careless } });
      const feed = (): void => {
        const job: SeedJob | null = nextSeed < end ? { seed: nextSeed++, hosts } : null;
        worker.postMessage(job);
      };
      worker.on('message', (s: SeedSummary) => {
        onResult(s);
        feed();
      });
      worker.on('error', reject);
      worker.on('exit', () => {
        if (--open === 0) resolve();
      });
      feed();
    }
  });
}

async function sweep(): Promise<number> {
  const from = Number(values.from);
  const count = Number(values.seeds);
  const workers = Math.max(1, Math.min(count, Number(values.workers ?? availableParallelism())));
  const started = Date.now();
  const coverage: CoverageCounts = {};
  const failing: SeedSummary[] = [];
  let steps = 0;
  let done = 0;
  let unsafe = 0;
  await runPool(from, count, workers, (s) => {
    done++;
    steps += s.steps;
    if (s.unsafe > 0) unsafe++;
    mergeCoverage(coverage, s.coverage);
    if (s.violations.length > 0) {
      failing.push(s);
      for (const l of violationLines(s)) process.stdout.write(`${l}\n`);
    }
    if (done % 500 === 0) process.stderr.write(`  ${done}/${count} seeds\n`);
  });
  const ms = Date.now() - started;
  process.stdout.write(`${throughputLine(count, workers, ms, failing.length, steps)}\n`);
  if (unsafe > 0) process.stdout.write(`${unsafe} seed(s) unsafe by a BMC lie or a careless operator: outside the safety envelope, not counted as failing\n`);
  failing.sort((a, b) => a.seed - b.seed);
  if (failing.length > 0) process.stdout.write(`failing seeds: ${failing.map((f) => f.seed).join(' ')}\n`);
  for (const f of failing.slice(0, Number(values.shrink))) {
    const full = await runSeed(f.seed, shape(f.seed));
    if (full.violations.length === 0) continue;
    process.stdout.write(`seed ${f.seed}:\n${shrunkLines(await shrink(f.seed, full, 120, shape(f.seed))).join('\n')}\n`);
  }
  process.stdout.write(`${coverageLines(coverage)}\n`);
  return failing.length === 0 ? 0 : 1;
}

const code = values.seed !== undefined ? await replay(Number(values.seed)) : await sweep();
process.exitCode = code;
