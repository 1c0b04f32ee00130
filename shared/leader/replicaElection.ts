/**
 * One role's replicas electing a leader (issue 21): etcdElection.ts under a prefix, each replica named by
 * its advertised URL, seen by the rest of the process as a leadership (who may change things, where the
 * leader is, this term's epoch) and by the stores as their WriteFence. The CLC's replicas use it under
 * `<etcd-prefix>clc/election/` (clc/replica/clcElection.ts), a partition's CCs under
 * `<etcd-prefix>cc/<partition>/election/` (cc/replicas.ts).
 */
import type { Etcd3 } from 'etcd3';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { EtcdElection } from './etcdElection.js';

export interface ReplicaElectionOptions {
  readonly client: Etcd3;
  /** The election's full key prefix, ending in '/'. */
  readonly prefix: string;
  /** This replica's URL as the others name it (--advertise-url). */
  readonly self: string;
  readonly ttlSeconds: number;
  /** The deadline of confirm()'s read (--etcd-timeout-ms). */
  readonly callTimeoutMs?: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Who campaigns, for the log ('CLC', 'CC cluster01'). */
  readonly role: string;
}

export interface ReplicaElection {
  readonly self: string;
  /** The store's fence. */
  readonly fence: EtcdElection;
  /** Leads now; false once the lease may have run out. */
  leading(): boolean;
  /** The leader's advertised URL as last observed in etcd; undefined while none is elected. */
  leaderUrl(): string | undefined;
  /** One quorum read proving this replica leads now (EtcdElection.confirm): StoreNotLeader or StoreUnavailable otherwise. */
  confirm(): Promise<void>;
  /** This replica's epoch (its key's create revision, decimal) while it leads; undefined otherwise. */
  epoch(): string | undefined;
  /** Every replica campaigning now (its advertised URL), the leader first, as last observed in etcd. */
  replicas(): readonly string[];
  /** Called on every change of leadership the election sees. */
  onChange(listener: () => void): void;
  start(): void;
  /** Resolves once this replica leads or another leader is seen, or after `timeoutMs` (then none is elected yet). */
  settled(timeoutMs: number): Promise<void>;
  /** Resigns: the lease is revoked, so another replica leads at once. */
  stop(): Promise<void>;
}

export function replicaElection(o: ReplicaElectionOptions): ReplicaElection {
  const listeners: Array<() => void> = [];
  let wasLeading = false;
  const election: EtcdElection = new EtcdElection({
    client: o.client, prefix: o.prefix, identity: o.self, ttlSeconds: o.ttlSeconds, clock: o.clock,
    ...(o.callTimeoutMs !== undefined ? { callTimeoutMs: o.callTimeoutMs } : {}),
    onChange: (status) => {
      if (status.leading !== wasLeading) o.logger.info({ leading: status.leading, epoch: status.epoch ?? null, leader: status.leader?.identity ?? null }, status.leading ? `this ${o.role} replica was elected leader` : `this ${o.role} replica is not the leader`);
      wasLeading = status.leading;
      for (const l of listeners) l();
    },
    onProblem: (e, what) => o.logger.warn({ err: e.message, what }, `${o.role} election: an etcd call failed; the election carries on`),
  });
  const leaderUrl = (): string | undefined => election.status().leader?.identity;
  return {
    self: o.self,
    fence: election,
    leading: () => election.leading(),
    leaderUrl,
    confirm: () => election.confirm(),
    epoch: () => election.status().epoch,
    replicas: () => election.status().candidates,
    onChange: (l) => { listeners.push(l); },
    start: () => election.start(),
    settled: (timeoutMs) => new Promise<void>((resolve) => {
      const check = (): boolean => election.leading() || leaderUrl() !== undefined;
      if (check()) return resolve();
      const timer = o.clock.setTimer(timeoutMs, () => resolve());
      listeners.push(() => {
        if (check()) {
          timer.cancel();
          resolve();
        }
      });
    }),
    stop: () => election.stop(),
  };
}
