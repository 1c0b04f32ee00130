/**
 * One task at a time, in arrival order (after XState's Mailbox): a check and the change it guards
 * can never interleave with another task's, so two requests never both take the last slot. A failed
 * task does not stop the ones behind it.
 */
export class Mailbox {
  private tail: Promise<unknown> = Promise.resolve();
  private depth = 0;

  /** Runs `task` after every task posted before it has settled; settles with the task's outcome. */
  run<T>(task: () => Promise<T> | T): Promise<T> {
    this.depth++;
    const result = this.tail.then(() => task()).finally(() => { this.depth--; });
    this.tail = result.catch(() => undefined);
    return result;
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
