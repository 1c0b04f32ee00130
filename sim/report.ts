/** What `npm run sim` prints: throughput, failing seeds with their shrunk replays, coverage. */
import type { CoverageCounts } from './coverage.js';
import { coverageReport } from './coverage.js';
import type { SeedViolation } from './runSeed.js';
import { describeEvent } from './schedule.js';
import type { Shrunk } from './shrink.js';

/** What a worker is sent: a seed, and the scale mode's host count (absent: the seed's own shape). */
export interface SeedJob {
  readonly seed: number;
  readonly hosts: number | undefined;
}

export interface SeedSummary {
  readonly seed: number;
  readonly violations: readonly SeedViolation[];
  /** Violations set aside as unsafe by a BMC lie or a careless operator (runSeed.ts). */
  readonly unsafe: number;
  readonly steps: number;
  readonly traceHash: string;
  readonly coverage: CoverageCounts;
}

export function throughputLine(seeds: number, workers: number, ms: number, failing: number, steps: number): string {
  const secs = Math.max(ms / 1000, 0.001);
  return `ferry sim: ${seeds} seeds on ${workers} worker(s) in ${(ms / 1000).toFixed(1)} s: ${(seeds / secs).toFixed(1)} seeds/s, `
    + `${steps} steps (${Math.round(steps / secs)} steps/s), ${failing} failing`;
}

export function violationLines(s: SeedSummary): string[] {
  return s.violations.slice(0, 3).map((v) => `  seed ${s.seed}: invariant ${v.invariant}: ${v.detail} (step ${v.step}, t+${v.atMs} ms)`);
}

export function shrunkLines(sh: Shrunk): string[] {
  const first = sh.result.violations[0];
  return [
    `  shrunk in ${sh.runs} runs to ${sh.keep.length} events; ${first ? `${first.invariant}: ${first.detail}` : ''}`,
    `  replay: npm run sim -- --seed ${sh.seed} --keep ${sh.keep.join(',') || 'none'} --trace`,
    ...sh.result.events.map((e, i) => `    [${sh.keep[i]}] ${describeEvent(e)}`),
  ];
}

export function coverageLines(c: CoverageCounts): string {
  return `coverage (states and transitions seen in the NC stores):\n${coverageReport(c)}`;
}
