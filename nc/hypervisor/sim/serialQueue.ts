/**
 * One change at a time per host (like xstate's Mailbox): each queued step checks the state it finds,
 * persists, then applies, so two racing requests never both pass a check meant for one.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(step: () => Promise<T> | T): Promise<T> {
    const p = this.tail.then(() => step());
    this.tail = p.catch(() => undefined);
    return p;
  }

  /** Resolves once every step queued so far has finished. */
  drain(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
