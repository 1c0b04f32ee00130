/** Side-by-side timing: each case runs against its baseline in alternating rounds, reported as a ratio. */
import { performance } from 'node:perf_hooks';

export interface BenchCase {
  readonly name: string;
  readonly baselineName: string;
  readonly run: () => Promise<void> | void;
  readonly baseline: () => Promise<void> | void;
  /** Operations per round. */
  readonly iterations: number;
}

async function timeOnce(fn: () => Promise<void> | void, n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return (performance.now() - t0) / n;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

export async function runCase(c: BenchCase, rounds = 7): Promise<{ name: string; msPerOp: number; baselineMsPerOp: number; ratio: number }> {
  await timeOnce(c.run, Math.max(1, Math.floor(c.iterations / 10)));
  await timeOnce(c.baseline, Math.max(1, Math.floor(c.iterations / 10)));
  const a: number[] = [];
  const b: number[] = [];
  // Alternate so drift in machine load hits both sides alike.
  for (let r = 0; r < rounds; r++) {
    a.push(await timeOnce(c.run, c.iterations));
    b.push(await timeOnce(c.baseline, c.iterations));
  }
  const msPerOp = median(a);
  const baselineMsPerOp = median(b);
  return { name: c.name, msPerOp, baselineMsPerOp, ratio: msPerOp / baselineMsPerOp };
}
