/**
 * The benchmark's result: issue 19's named cases, each `{name, ferry, baseline, unit, ratio, target}`
 * (ratio = ferry / baseline in the case's unit), written to bench/results/latest.json as
 * `{machine, commit, cases}` and printed as a table. A case not measured is listed with the reason
 * (`skipped`), never with a number; sub-measurements name the case they belong to (`partOf`).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';

/** Which way is better for a case's ratio: times are lower-is-better, rates (req/s) higher. */
export type Better = 'lower' | 'higher';

export interface MeasuredCase {
  readonly name: string;
  /** What the two numbers are, in a line. */
  readonly what: string;
  readonly ferry: number;
  readonly baseline: number;
  readonly unit: string;
  readonly ratio: number;
  /** The target for the ratio; null for a sub-measurement without one. */
  readonly target: number | null;
  readonly better: Better;
  /** Whether the ratio meets the target (null without one). */
  readonly met: boolean | null;
  readonly partOf?: string;
}

export interface SkippedCase {
  readonly name: string;
  readonly what: string;
  readonly target: number | null;
  readonly better: Better;
  readonly skipped: string;
}

export type CaseResult = MeasuredCase | SkippedCase;

export function measured(c: Omit<MeasuredCase, 'ratio' | 'met'>): MeasuredCase {
  const ratio = c.ferry / c.baseline;
  const met = c.target === null ? null : c.better === 'lower' ? ratio <= c.target : ratio >= c.target;
  return { ...c, ratio, met };
}

export function skipped(name: string, what: string, target: number | null, better: Better, reason: string): SkippedCase {
  return { name, what, target, better, skipped: reason };
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

export function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    cpus: cpus.length, cpuModel: cpus[0]?.model ?? 'unknown', memoryMiB: Math.round(os.totalmem() / 2 ** 20),
    node: process.version, platform: `${os.platform()} ${os.release()}`, loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
    date: new Date().toISOString(),
  };
}

export function commit(): string {
  const head = git(['rev-parse', 'HEAD']);
  return git(['status', '--porcelain', '--untracked-files=no']) === '' ? head : `${head}+dirty`;
}

const num = (x: number): string => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(3));
const targetText = (c: CaseResult): string => (c.target === null ? '' : `${c.better === 'lower' ? '<=' : '>='} ${c.target}`);

/** One line per case: measured ones with their numbers and whether they meet the target, skipped ones with why. */
export function table(cases: readonly CaseResult[]): string {
  const rows = cases.map((c) => ('skipped' in c
    ? [c.name, '', '', '', '', targetText(c), `skipped: ${c.skipped}`]
    : [c.name, num(c.ferry), num(c.baseline), c.unit, `${num(c.ratio)}x`, targetText(c), c.met === null ? '' : c.met ? 'met' : 'NOT met']));
  const head = ['case', 'ferry', 'baseline', 'unit', 'ratio', 'target', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.filter((r) => !r[6]!.startsWith('skipped')).map((r) => r[i]!.length)));
  const line = (r: string[]): string => r.map((x, i) => (i === 6 ? x : i === 0 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

export function writeResults(path: string, cases: readonly CaseResult[]): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ machine: machine(), commit: commit(), cases }, null, 2)}\n`);
}
