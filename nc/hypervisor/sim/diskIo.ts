/**
 * The narrow file interface of a simulated host (STYLE habit 4): the disk files its domains write
 * and its heartbeat. The real adapter writes files on (shared) storage; the in-memory one lets a
 * single process run thousands of hosts under a ManualClock.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock } from '../../../shared/clock.js';
import { writeFileAtomic } from '../../../shared/store/durableFile.js';

export interface DiskIo {
  /** Replaces the whole file (its mtime advances); creates parent directories as needed. */
  write(path: string, contents: string): Promise<void>;
  /** The file's contents, or undefined when it does not exist. */
  read(path: string): Promise<string | undefined>;
  /** Removes the file; a missing file is not an error. */
  remove(path: string): Promise<void>;
}

/**
 * Real files. Writes go to a temp file renamed over the target (writeFileAtomic), so a neighbour
 * reading the file never sees it torn. No fsync: this is an activity signal, not data that must survive a crash.
 */
export function fsDiskIo(): DiskIo {
  const made = new Set<string>();
  return {
    async write(path, contents) {
      const dir = dirname(path);
      if (!made.has(dir)) {
        await mkdir(dir, { recursive: true });
        made.add(dir);
      }
      await writeFileAtomic(path, contents);
    },
    async read(path) {
      try {
        return await readFile(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
    },
    async remove(path) {
      await rm(path, { force: true });
    },
  };
}

export interface MemoryFile {
  readonly contents: string;
  /** The clock's time at the last write: the in-memory mtime. */
  readonly mtimeMs: number;
}

/** Files in a Map, stamped with an injected clock: shared storage for in-process simulations. */
export class MemoryDiskIo implements DiskIo {
  readonly files = new Map<string, MemoryFile>();

  constructor(private readonly clock: Clock) {}

  async write(path: string, contents: string): Promise<void> {
    this.files.set(path, { contents, mtimeMs: this.clock.now() });
  }

  async read(path: string): Promise<string | undefined> {
    return this.files.get(path)?.contents;
  }

  async remove(path: string): Promise<void> {
    this.files.delete(path);
  }

  stat(path: string): MemoryFile | undefined {
    return this.files.get(path);
  }
}
