/**
 * Whether this CLC replica may change things now (issue 21). With the file store there is one CLC and
 * it always leads (SOLE_REPLICA); with `--store etcd` the replicas elect one leader through etcd
 * (shared/leader/etcdElection.ts, adapted in clc/replica/) and only it serves changes and runs the
 * background loops. A follower serves reads from its watch-fed store and refuses changes with
 * NotLeader, naming the leader's URL so a client can go there.
 */
import type { FerryError } from '../../shared/errors/registry.js';
import { ClcErrors } from './errors.js';

/** The narrow view the API, the gate and the loops need. */
export interface Leadership {
  /** Leads now; false once the lease may have run out (reading it after that moment ends the leadership). */
  leading(): boolean;
  /** The leader's advertised URL (scheme://host:port) as last observed in etcd; undefined while none is elected. */
  leaderUrl(): string | undefined;
  /** This replica's own advertised URL, for the messages. */
  readonly self: string;
  /**
   * The fencing token sent with every change to a CC (issue 21, shared/protocol/clcEpoch.ts): this
   * replica's epoch while it leads, undefined otherwise; always undefined for the single CLC, which
   * sends none (nothing to fence).
   */
  epoch(): string | undefined;
  /**
   * Proves with etcd, before a change acts, that this replica still leads (one quorum read): the lease
   * alone lets a leader that lost etcd's quorum go on for up to a TTL, and a change it started would
   * reach a node and then fail to be recorded. Rejects with the store's StoreNotLeader or
   * StoreUnavailable. Absent for the single CLC: nothing to prove.
   */
  confirm?(): Promise<void>;
  /** Every replica campaigning now, the leader first (DescribeServices lists them); absent: the single CLC. */
  replicas?(): readonly string[];
}

/** The one CLC of a file-store deployment: always the leader, nobody else to name. */
export const SOLE_REPLICA: Leadership = Object.freeze({ leading: () => true, leaderUrl: () => undefined, self: 'this CLC', epoch: () => undefined });

/** NotLeader for a change this replica refuses: the leader's URL in the message and in `fields.leaderUrl` (the X-Ferry-Leader header). */
export function notLeaderError(l: Leadership): FerryError {
  const url = l.leaderUrl();
  const leaderIs = url === undefined || url === l.self
    ? 'no leader is elected now (retry in a few seconds)'
    : `the leader is ${url}: send changes there (reads are served here)`;
  return ClcErrors.make('NotLeader', { replica: l.self, leaderIs, ...(url !== undefined && url !== l.self ? { leaderUrl: url } : {}) });
}

/**
 * Where every CLC replica answers a liveness probe (issue 21): GET answers 204, no authentication, no
 * body. A follower's DescribeServices asks the replicas it lists: a leader killed with -9 keeps its
 * election key until its lease runs out, and must not be shown ENABLED meanwhile.
 */
export const REPLICA_ALIVE_PATH = '/replica/alive';

/** The narrow view DescribeServices needs of the other replicas: whether one answers now (adapter: clc/replica/replicaProbe.ts). */
export interface ReplicaProbe {
  /** True when the replica at `url` (its advertised URL) answered the probe in time; never rejects. */
  answers(url: string): Promise<boolean>;
}
