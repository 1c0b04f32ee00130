/**
 * Builds dist/ once before any test file runs: integration tests spawn the built entry points as
 * real processes. Incremental, so an up-to-date tree costs about a second.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

export default function setup(): void {
  const root = resolve(import.meta.dirname, '..');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: root, stdio: 'pipe' });
  } catch (e) {
    // tsc still emits on type errors; scripts/test.sh fails on them in its typecheck step.
    process.stderr.write(`globalSetup: tsc reported errors (tests run on what it emitted):\n${(e as { stdout?: Buffer }).stdout?.toString() ?? ''}\n`);
  }
}
