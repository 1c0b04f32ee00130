/**
 * Versioned JSON stores over lowdb. The on-disk snapshot is `{ schemaVersion, kind, data }`, plain
 * JSON; services rebuild their state from it at start. A missing file starts from `initial()`; an
 * unreadable, corrupt, foreign or wrongly-shaped file stops start-up with a coded error. Temp files
 * a killed writer left beside the file are removed when it is opened. Updates are group-committed
 * (groupCommit.ts): those that arrive during a write share the next one. The file is compact JSON: it
 * is rewritten whole on every write, and indentation made it larger and slower to write and read.
 */
import { Low, Memory, type Adapter } from 'lowdb';
import { readFile, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { storeWrite } from '../metrics/channels.js';
import { removeLeftoverTemps, writeFileDurable } from './durableFile.js';
import { StoreErrors } from './errors.js';
import { GroupCommitStore, type Store } from './groupCommit.js';

export type { Store } from './groupCommit.js';

export interface StoreOptions<T> {
  /** Names what the file holds, e.g. 'ferry-nc'; a file of another kind is refused. */
  readonly kind: string;
  readonly schemaVersion: number;
  readonly initial: () => T;
  /** Checks the shape of loaded data; throws (any error) when wrong. */
  readonly validate?: (data: unknown) => T;
}

interface Envelope<T> {
  schemaVersion: number;
  kind: string;
  data: T;
}

class DurableJsonAdapter<T> implements Adapter<Envelope<T>> {
  constructor(private readonly file: string) {}

  async read(): Promise<Envelope<T> | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw StoreErrors.make('StoreUnreadable', { file: this.file, detail: (e as Error).message });
    }
    try {
      return JSON.parse(text) as Envelope<T>;
    } catch (e) {
      throw StoreErrors.make('StoreCorrupt', { file: this.file, detail: (e as Error).message });
    }
  }

  async write(data: Envelope<T>): Promise<void> {
    const t0 = performance.now();
    try {
      await writeFileDurable(this.file, JSON.stringify(data));
      storeWrite.publish({ kind: data.kind, seconds: (performance.now() - t0) / 1000 });
    } catch (e) {
      throw StoreErrors.make('StoreWriteFailed', { file: this.file, detail: (e as Error).message });
    }
  }
}

async function load<T>(db: Low<Envelope<T>>, label: string, opts: StoreOptions<T>): Promise<Store<T>> {
  await db.read();
  if (db.data === null || db.data === undefined) {
    db.data = { schemaVersion: opts.schemaVersion, kind: opts.kind, data: opts.initial() };
    await db.write();
  } else {
    const env = db.data as Partial<Envelope<T>>;
    if (env.kind !== opts.kind || env.schemaVersion !== opts.schemaVersion) {
      throw StoreErrors.make('StoreSchemaMismatch', {
        file: label, found: String(env.schemaVersion), kind: String(env.kind),
        expected: opts.schemaVersion, expectedKind: opts.kind,
      });
    }
    if (opts.validate) {
      try {
        db.data = { ...env, data: opts.validate(env.data) } as Envelope<T>;
      } catch (e) {
        throw StoreErrors.make('StoreInvalid', { file: label, detail: (e as Error).message });
      }
    }
  }
  const envelope = db.data;
  return new GroupCommitStore<T>(envelope.data, { persist: (data) => db.adapter.write({ ...envelope, data }) });
}

/** What opening a file store may want to tell its owner's log. */
export interface FileStoreHooks {
  /** Temp files of failed or interrupted writes, found beside the file and removed (never read). */
  readonly onLeftoverTemps?: (names: readonly string[]) => void;
}

/** Whether the store's file exists (a missing one would start from `initial()`); other failures are StoreUnreadable. */
export async function storeFileExists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw StoreErrors.make('StoreUnreadable', { file, detail: (e as Error).message });
  }
}

/** Opens (or creates) a durable store at `file`, removing its leftover temp files first. */
export async function openFileStore<T>(file: string, opts: StoreOptions<T>, hooks: FileStoreHooks = {}): Promise<Store<T>> {
  await mkdir(dirname(file), { recursive: true });
  let leftovers: string[];
  try {
    leftovers = await removeLeftoverTemps(file);
  } catch (e) {
    throw StoreErrors.make('StoreUnreadable', { file, detail: `cannot remove leftover temp files: ${(e as Error).message}` });
  }
  if (leftovers.length > 0) hooks.onLeftoverTemps?.(leftovers);
  const db = new Low<Envelope<T>>(new DurableJsonAdapter<T>(file), null as unknown as Envelope<T>);
  return load(db, file, opts);
}

/** An in-memory store with the same contract, for unit tests and the in-process simulator. */
export async function openMemoryStore<T>(opts: StoreOptions<T>): Promise<Store<T>> {
  const db = new Low<Envelope<T>>(new Memory<Envelope<T>>(), null as unknown as Envelope<T>);
  return load(db, `memory:${opts.kind}`, opts);
}
