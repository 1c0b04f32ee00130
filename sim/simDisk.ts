/**
 * A process's disk in the simulator: what survives a crash. A SimStore is the Store<T> one
 * incarnation sees over it. Each write takes a little simulated time; a write in flight when its
 * process dies either landed or was lost (decided by the seed) — the store never acknowledged it,
 * so either is allowed. An acknowledged write always survives (the real store fsyncs before it
 * resolves and renames atomically, so there is no torn write to model).
 */
import type { Clock } from '../shared/clock.js';
import type { Store, StoreOptions } from '../shared/store/store.js';
import { never, type Incarnation } from './incarnation.js';
import type { Prng } from './prng.js';

/**
 * What is on disk, per file. Contents are kept as the (never mutated) snapshot objects a store
 * wrote; opening a file round-trips it through JSON, as reading the real file would.
 */
export class SimDisk {
  private readonly files = new Map<string, unknown>();

  /** The durable contents; read-only. */
  read(name: string): unknown {
    return this.files.get(name);
  }

  /** What a process finds at start: a fresh copy through JSON. */
  load(name: string): unknown {
    const data = this.files.get(name);
    return data === undefined ? undefined : JSON.parse(JSON.stringify(data));
  }

  write(name: string, data: unknown): void {
    this.files.set(name, data);
  }

  /** The file is gone (a lost store): the next open finds it missing. */
  delete(name: string): void {
    this.files.delete(name);
  }
}

export interface SimStoreOptions<T> {
  readonly disk: SimDisk;
  readonly file: string;
  readonly store: StoreOptions<T>;
  readonly life: Incarnation;
  readonly clock: Clock;
  /** Draws write latencies and whether a write in flight at a crash landed. */
  readonly rng: Prng;
  readonly maxLatencyMs: number;
  /** Called after each write is durable, before the writer hears of it (a crash here keeps the write). */
  readonly onDurable?: () => void;
}

/** Opens the file like the real store: missing → initial; present → validated (a bad file throws). */
export function openSimStore<T>(o: SimStoreOptions<T>): Store<T> {
  const stored = o.disk.load(o.file);
  let current: T;
  if (stored === undefined) {
    current = o.store.initial();
    o.disk.write(o.file, current);
  } else {
    current = o.store.validate ? o.store.validate(stored) : (stored as T);
  }
  let chain: Promise<unknown> = Promise.resolve();
  let inFlight: T | undefined;
  o.life.whenDead(() => {
    if (inFlight !== undefined && o.rng.chance(0.5)) o.disk.write(o.file, inFlight);
    inFlight = undefined;
  });
  return {
    read: () => current,
    update<R>(mutate: (draft: T) => R): Promise<R> {
      const run = async (): Promise<R> => {
        if (!o.life.isAlive) return never<R>();
        const draft = structuredClone(current);
        const result = mutate(draft);
        inFlight = draft;
        const ms = o.rng.int(0, o.maxLatencyMs);
        if (ms > 0) await new Promise<void>((resolve) => o.clock.setTimer(ms, resolve));
        if (!o.life.isAlive) return never<R>();
        inFlight = undefined;
        o.disk.write(o.file, draft);
        current = draft;
        o.onDurable?.();
        return o.life.isAlive ? result : never<R>();
      };
      const p = chain.then(run, run);
      chain = p.catch(() => undefined);
      return p;
    },
  };
}
