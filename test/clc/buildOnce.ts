/** The CLI and process tests run the built JavaScript; build with tsc when dist/clc is older than clc/. */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

const PROBES = [join(ROOT, 'dist', 'clc', 'main.js'), join(ROOT, 'dist', 'clc', 'cli', 'describeNodes.js')];
/** Test files run in parallel workers: one builds while the others wait, so none runs a half-written file. */
const LOCK = join(ROOT, 'dist', '.clc-test-build.lock');
const STALE_LOCK_MS = 180_000;

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith('.ts')) newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs);
  }
  return newest;
}

function fresh(): boolean {
  const newest = newestSource(join(ROOT, 'clc'));
  return PROBES.every((p) => existsSync(p) && statSync(p).mtimeMs >= newest);
}

function tryLock(): boolean {
  try {
    mkdirSync(LOCK);
    return true;
  } catch {
    const held = statSync(LOCK, { throwIfNoEntry: false });
    if (held && Date.now() - held.mtimeMs > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
    return false;
  }
}

export async function ensureBuilt(): Promise<void> {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  while (!tryLock()) await new Promise((r) => setTimeout(r, 200));
  try {
    if (fresh()) return;
    // tsc emits even when another tier's files do not type-check yet; only the probes matter here.
    await new Promise<void>((resolve) => {
      execFile(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.json')], { cwd: ROOT }, () => resolve());
    });
    for (const p of PROBES) if (!existsSync(p)) throw new Error(`${p} was not built; run npx tsc -p tsconfig.json`);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
