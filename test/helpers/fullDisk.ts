/**
 * A real, small file system that a test can fill up: a tmpfs mounted on a directory of the test's
 * own (needs root, as CI has). Every mount is undone by its path in `unmount()`; `fill()` writes a
 * filler file until the kernel answers ENOSPC, `free()` removes it again.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SmallDisk {
  readonly path: string;
  /** Writes a filler file until the disk is full (ENOSPC); returns the bytes written. */
  fill(): number;
  /** Removes the filler: the disk has room again. */
  free(): void;
  /** Unmounts (lazily, should a daemon still hold a file there) and removes the mount point. */
  unmount(): void;
}

const FILLER = '.filler';

/** Mounts a tmpfs of `sizeKiB` on `dir` (created if missing). Throws when mounting is not possible. */
export function mountSmallDisk(dir: string, sizeKiB: number): SmallDisk {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k,mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  let mounted = true;
  return {
    path: dir,
    fill() {
      const fd = openSync(join(dir, FILLER), 'a');
      const chunk = Buffer.alloc(4096, 0x61);
      let written = 0;
      try {
        for (;;) written += writeSync(fd, chunk);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
      } finally {
        closeSync(fd);
      }
      return written;
    },
    free() {
      rmSync(join(dir, FILLER), { force: true });
    },
    unmount() {
      if (!mounted) return;
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      mounted = false;
      rmdirSync(dir);
    },
  };
}

/** Whether this machine lets the test mount a tmpfs (root on Linux); tried once, on a throw-away dir. */
export function canMountSmallDisk(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  const probe = mkdtempSync(join(tmpdir(), 'ferry-mount-probe-'));
  try {
    mountSmallDisk(join(probe, 'disk'), 64).unmount();
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
