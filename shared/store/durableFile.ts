/**
 * Atomic, durable file replacement (STYLE habit 5): write a temp file, fsync it, rename it over the
 * target, fsync the directory. A crash leaves either the old or the new file, never a torn one; a
 * failed write (a full disk, say) leaves no temp file behind, and a crash's leftovers are removed
 * by removeLeftoverTemps when the file's owner starts again.
 */
import { open, readdir, rename, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** `.<name>.<pid>.<8 hex>.tmp`, beside the file it replaces. */
function tempName(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether `name` (a directory entry) is one of writeFileDurable's temp files for `path`, by any process. */
export function isTempOf(path: string, name: string): boolean {
  return new RegExp(`^\\.${escapeRegExp(basename(path))}\\.\\d+\\.[0-9a-f]{8}\\.tmp$`).test(name);
}

export async function writeFileDurable(path: string, contents: string, mode = 0o600): Promise<void> {
  await replaceFile(path, contents, mode, true);
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/**
 * Atomic but NOT durable replacement: temp file renamed over the target, no fsync. A reader never
 * sees a torn file; a crash may lose the write. For signals rewritten every few seconds (a host's
 * heartbeat, a simulated guest's disk counter), not for data that must survive a crash.
 */
export async function writeFileAtomic(path: string, contents: string, mode = 0o666): Promise<void> {
  await replaceFile(path, contents, mode, false);
}

async function replaceFile(path: string, contents: string, mode: number, sync: boolean): Promise<void> {
  const tmp = tempName(path);
  try {
    const fh = await open(tmp, 'w', mode);
    try {
      await fh.writeFile(contents, 'utf8');
      if (sync) await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    // ENOSPC, EIO, EDQUOT…: the target is untouched; leave nothing behind (not even on a full disk,
    // where unlinking still works). A failed removal must not hide the write's own error.
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
}

/**
 * Removes the temp files writeFileDurable left beside `path` (a process killed between creating and
 * renaming one). Call it when the file's one owner starts, before it writes: a temp file is never
 * read, so whatever it holds was never acknowledged. Returns the names removed.
 */
export async function removeLeftoverTemps(path: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dirname(path));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const leftovers = names.filter((n) => isTempOf(path, n)).sort();
  for (const n of leftovers) await rm(join(dirname(path), n), { force: true });
  return leftovers;
}
