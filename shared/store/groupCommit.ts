/**
 * Group commit for Ferry's JSON document stores (issue 19). Updates that arrive while a write is in
 * flight wait for it, then are applied in call order to ONE draft (one copy of the snapshot per batch,
 * not per update) and made durable by ONE write; each caller's promise settles only after that write.
 * With 1,000 launches queued at the CLC, one clone, stringify and fsync per update made each launch
 * cost O(whole state) (docs/PERFORMANCE.md, api/queued).
 *
 * Same contract as one update at a time: call order kept; read() shows only what is durable; a failed
 * write rejects every caller of its batch and leaves read() at the last durable state; no bound (a
 * burst is queued, never refused). A mutate that throws rejects only its caller and leaves no trace:
 * its partial changes are dropped by starting the batch again from a fresh draft without it, so the
 * mutates before it in the batch run again (a mutate must change only its draft and return a value
 * computed from it, as every Ferry store's callers do; the value the persisted run returned is given).
 */

/** The narrow interface services use: read the snapshot, apply a change that is durable on return. */
export interface Store<T> {
  /** The current snapshot. Treat as read-only; change it through update(). */
  read(): T;
  /**
   * Applies `mutate` to a copy and persists it; the change is visible and durable once this resolves.
   * `mutate` may run more than once (when another update of its batch throws): it must only change
   * its draft.
   */
  update<R>(mutate: (draft: T) => R): Promise<R>;
}

export interface GroupCommitOptions<T> {
  /** The draft a batch works on, made once per batch from the durable snapshot (default structuredClone). */
  readonly draftOf?: (snapshot: T) => T;
  /** Makes `next` durable; rejects with a coded error when it could not (nothing is then visible). */
  readonly persist: (next: T) => Promise<void>;
}

interface Pending<T> {
  readonly mutate: (draft: T) => unknown;
  readonly resolve: (result: unknown) => void;
  readonly reject: (e: unknown) => void;
}

interface Applied<T> {
  readonly op: Pending<T>;
  readonly result: unknown;
}

export class GroupCommitStore<T> implements Store<T> {
  private queue: Pending<T>[] = [];
  private running = false;
  private readonly draftOf: (snapshot: T) => T;

  constructor(private current: T, private readonly opts: GroupCommitOptions<T>) {
    this.draftOf = opts.draftOf ?? structuredClone;
  }

  read(): T {
    return this.current;
  }

  update<R>(mutate: (draft: T) => R): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ mutate, resolve: resolve as (r: unknown) => void, reject });
      if (this.running) return;
      this.running = true;
      // Started on the next microtask: updates called in the same tick share the first batch, and a
      // mutate never runs inside update() itself (as before group commit).
      queueMicrotask(() => void this.drain());
    });
  }

  /** Writes batches until nothing waits; one runs at a time. */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        const applied = this.apply(batch);
        if (applied === undefined) continue;
        try {
          await this.opts.persist(applied.draft);
        } catch (e) {
          for (const a of applied.done) a.op.reject(e);
          continue;
        }
        // Durable first, visible second.
        this.current = applied.draft;
        for (const a of applied.done) a.op.resolve(a.result);
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * Runs the batch's mutates in order on one draft. A mutate that throws is rejected and the batch
   * starts again on a fresh draft without it (its partial changes are in the old one); undefined when
   * none is left to write.
   */
  private apply(batch: readonly Pending<T>[]): { draft: T; done: Applied<T>[] } | undefined {
    let ops = batch;
    while (ops.length > 0) {
      let draft: T;
      try {
        draft = this.draftOf(this.current);
      } catch (e) {
        for (const op of ops) op.reject(e);
        return undefined;
      }
      const done: Applied<T>[] = [];
      let failed = -1;
      for (let i = 0; i < ops.length && failed < 0; i++) {
        const op = ops[i]!;
        try {
          done.push({ op, result: op.mutate(draft) });
        } catch (e) {
          op.reject(e);
          failed = i;
        }
      }
      if (failed < 0) return { draft, done };
      ops = [...ops.slice(0, failed), ...ops.slice(failed + 1)];
    }
    return undefined;
  }
}
