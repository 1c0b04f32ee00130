/** A set of listeners; one listener throwing must not stop the others or the host. */
export class EventHub<E> {
  private readonly listeners = new Set<(e: E) => void>();

  constructor(private readonly onListenerError: (e: unknown) => void = () => undefined) {}

  on(listener: (e: E) => void): () => void {
    // Wrap so the same function can subscribe twice and unsubscribe each independently.
    const entry = (e: E): void => listener(e);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  emit(e: E): void {
    for (const l of [...this.listeners]) {
      try {
        l(e);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  get size(): number {
    return this.listeners.size;
  }
}
