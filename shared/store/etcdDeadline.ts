/**
 * One etcd call with a deadline on the injected clock (issue 21): etcd3's own call deadline covers one
 * attempt, not its retries across members, so the store and the election bound the whole call here.
 * A lost quorum or a dead cluster then ends in a coded error instead of a wait without end.
 */
import type { Clock } from '../clock.js';
import { isFerryError } from '../errors/registry.js';

export interface EtcdDeadline {
  readonly clock: Clock;
  readonly timeoutMs: number;
  /** The coded error when the deadline passes first. */
  readonly timedOut: () => Error;
  /** A foreign failure (etcd3's, grpc's) as a coded error; our own coded errors pass unchanged. */
  readonly translate: (e: unknown) => Error;
}

export function withEtcdDeadline<V>(p: Promise<V>, d: EtcdDeadline): Promise<V> {
  return new Promise<V>((resolve, reject) => {
    const timer = d.clock.setTimer(d.timeoutMs, () => reject(d.timedOut()));
    p.then((v) => {
      timer.cancel();
      resolve(v);
    }, (e: unknown) => {
      timer.cancel();
      reject(isFerryError(e) ? e : d.translate(e));
    });
  });
}
