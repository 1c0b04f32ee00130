/**
 * The CLC replicas' election (issue 21): shared/leader/etcdElection.ts under `<etcd-prefix>clc/election/`,
 * each replica named by its advertised URL, seen by the rest of the CLC as a Leadership (who may
 * change things, and where the leader is) and by the stores as their WriteFence.
 */
import type { Etcd3 } from 'etcd3';
import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import { EtcdElection } from '../../shared/leader/etcdElection.js';
import type { Leadership } from '../core/leadership.js';

export interface ClcElectionOptions {
  readonly client: Etcd3;
  /** The cloud's etcd key prefix (--etcd-prefix), ending in '/'. */
  readonly etcdPrefix: string;
  /** This replica's admin API URL (--advertise-url). */
  readonly self: string;
  readonly ttlSeconds: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

export interface ClcElection extends Leadership {
  /** The store's fence. */
  readonly fence: EtcdElection;
  /** Called on every change of leadership the election sees (set once, by the duties). */
  onChange(listener: () => void): void;
  start(): void;
  /** Resolves once this replica leads or another leader is seen, or after `timeoutMs` (then none is elected yet). */
  settled(timeoutMs: number): Promise<void>;
  /** Resigns: the lease is revoked, so another replica leads at once. */
  stop(): Promise<void>;
}

export const CLC_ELECTION_KEY = 'clc/election/';

export function clcElection(o: ClcElectionOptions): ClcElection {
  const listeners: Array<() => void> = [];
  let wasLeading = false;
  const election: EtcdElection = new EtcdElection({
    client: o.client, prefix: `${o.etcdPrefix}${CLC_ELECTION_KEY}`, identity: o.self, ttlSeconds: o.ttlSeconds, clock: o.clock,
    onChange: (status) => {
      if (status.leading !== wasLeading) o.logger.info({ leading: status.leading, epoch: status.epoch ?? null, leader: status.leader?.identity ?? null }, status.leading ? 'this CLC replica was elected leader' : 'this CLC replica is not the leader');
      wasLeading = status.leading;
      for (const l of listeners) l();
    },
    onProblem: (e, what) => o.logger.warn({ err: e.message, what }, 'CLC election: an etcd call failed; the election carries on'),
  });
  const leaderUrl = (): string | undefined => election.status().leader?.identity;
  return {
    self: o.self,
    fence: election,
    leading: () => election.leading(),
    epoch: () => election.status().epoch,
    leaderUrl,
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
