/**
 * The CLC replicas' election (issue 21): shared/leader/replicaElection.ts under `<etcd-prefix>clc/election/`,
 * each replica named by its advertised URL, seen by the rest of the CLC as a Leadership (who may
 * change things, and where the leader is) and by the stores as their WriteFence.
 */
import type { Etcd3 } from 'etcd3';
import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import { replicaElection, type ReplicaElection } from '../../shared/leader/replicaElection.js';
import type { Leadership } from '../core/leadership.js';

export interface ClcElectionOptions {
  readonly client: Etcd3;
  /** The cloud's etcd key prefix (--etcd-prefix), ending in '/'. */
  readonly etcdPrefix: string;
  /** This replica's admin API URL (--advertise-url). */
  readonly self: string;
  readonly ttlSeconds: number;
  /** The deadline of a leadership check's read (--etcd-timeout-ms). */
  readonly callTimeoutMs?: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

export type ClcElection = ReplicaElection & Leadership;

export const CLC_ELECTION_KEY = 'clc/election/';

export function clcElection(o: ClcElectionOptions): ClcElection {
  return replicaElection({ ...o, prefix: `${o.etcdPrefix}${CLC_ELECTION_KEY}`, role: 'CLC' });
}
