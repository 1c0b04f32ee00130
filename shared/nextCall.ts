/**
 * A call shared by callers that must not take an answer older than their question (pure async
 * plumbing, no I/O of its own): a caller starts the call when none is in flight, else it joins the
 * one sent after the call in flight settles, never the one in flight (sent before it asked). So a
 * crowd of callers costs at most two calls at a time, each sent after its callers asked. Used by
 * host HA's shared health describes (clc/ha/cloud/ccSources.ts) and etcd leadership checks
 * (shared/leader/etcdElection.ts).
 */
export class NextCall<T> {
  private running: Promise<T> | undefined;
  private next: Promise<T> | undefined;

  constructor(private readonly send: () => Promise<T>) {}

  call(): Promise<T> {
    if (this.running === undefined) {
      const p: Promise<T> = this.send().finally(() => {
        if (this.running === p) this.running = undefined;
      });
      this.running = p;
      return p;
    }
    this.next ??= this.running.then(() => undefined, () => undefined).then(() => {
      this.next = undefined;
      return this.call();
    });
    return this.next;
  }
}
