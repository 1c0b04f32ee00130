/**
 * One operation at a time on the node (after XState's Mailbox): two runs can never both pass the
 * capacity check before either is recorded. Tasks run in arrival order; a failure does not stop
 * the ones behind it.
 */
export class Mailbox {
  private tail: Promise<unknown> = Promise.resolve();
  private depth = 0;

  /** Runs `task` after every task posted before it has settled. */
  post<T>(task: () => Promise<T>): Promise<T> {
    this.depth++;
    const run = async (): Promise<T> => {
      try {
        return await task();
      } finally {
        this.depth--;
      }
    };
    const p = this.tail.then(run, run);
    this.tail = p.catch(() => undefined);
    return p;
  }

  /** Tasks posted and not yet settled. */
  get size(): number {
    return this.depth;
  }

  /** Resolves once every task posted so far has settled. */
  async idle(): Promise<void> {
    await this.tail;
  }
}
