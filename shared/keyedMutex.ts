/**
 * One at a time per key: `run(key, work)` starts `work` once every earlier `run` with the same key
 * has settled. The CLC's RunInstances holds its ClientToken's key while it decides and launches, so
 * two requests carrying one token cannot both launch; the CC moves one stopped instance at a time
 * (cc/rehome.ts), so two starts of it cannot both re-home it. Requests with other keys never wait. Nothing is
 * bounded here: a key's queue is as long as the requests that carry it at once, and an idle key
 * keeps no entry.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => { release = resolve; });
    const tail = before.then(() => mine);
    this.tails.set(key, tail);
    try {
      await before;
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with a request running or waiting (for tests). */
  get size(): number {
    return this.tails.size;
  }
}
