/**
 * One task at a time, in arrival order (a mailbox): the CC places instances through one queue so
 * two requests can never both take the last slot on a node.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  /** Runs `task` after every task queued before it has settled; settles with the task's outcome. */
  run<T>(task: () => Promise<T>): Promise<T> {
    this.waiting++;
    const result = this.tail.then(task).finally(() => { this.waiting--; });
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Tasks queued or running. */
  get length(): number {
    return this.waiting;
  }
}
