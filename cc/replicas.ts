/**
 * CC replicas (issue 21): with `--store etcd` several CC processes of one partition campaign under
 * `<etcd-prefix>cc/<partition>/election/` (shared/leader/replicaElection.ts). Only the leader serves
 * changes, runs the background loops (node polling, the plan driver, move repair: leaderDuties in
 * daemon.ts) and writes the view cache; a follower answers reads and refuses the rest with NotLeader,
 * naming the leader. With the file store the one CC is SOLE_CC, which always leads with epoch "0".
 *
 * Every NC command that changes something carries the leader's epoch (shared/protocol/leaderEpoch.ts):
 * `stampEpochs` adds it where the CC's calls leave, and refuses to send one at all once this replica
 * does not lead (its lease may have run out), so a deposed leader's work under way stops at its next call.
 */
import type { Etcd3 } from 'etcd3';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import type { FerryError } from '../shared/errors/registry.js';
import { notLeaderText } from '../shared/leader/leaderRouting.js';
import { replicaElection, type ReplicaElection } from '../shared/leader/replicaElection.js';
import type { CcOp, CcResponse } from '../shared/protocol/ccProtocol.js';
import { LEADER_EPOCH_FIELD, NC_CHANGE_OPS, NO_EPOCH } from '../shared/protocol/leaderEpoch.js';
import type { WireHandlers, WireTransport } from '../shared/wire/transport.js';
import { isFerryError } from '../shared/errors/registry.js';
import { CC_EPOCH_OPS } from '../shared/protocol/ccProtocol.js';
import { CcErrors } from './errors.js';

/** The narrow view the server, the loops and the NC calls need. */
export interface CcLeadership {
  /** Leads now; false once the lease may have run out. */
  leading(): boolean;
  /** The leader's advertised URL as last observed; undefined while none is elected. */
  leaderUrl(): string | undefined;
  /** This term's epoch while leading; undefined otherwise. */
  epoch(): string | undefined;
  /** This replica's advertised URL, for the messages. */
  readonly self: string;
  /**
   * Proves with etcd that this replica still leads (one quorum read of its election key,
   * EtcdElection.confirm), before a change from the CLC starts: rejects with the store's
   * StoreNotLeader or StoreUnavailable. Absent for the sole CC: nothing to prove.
   */
  confirm?(): Promise<void>;
}

/** The one CC of a file-store partition: always leads, with epoch "0" (the NCs' default). */
export const SOLE_CC: CcLeadership = Object.freeze({ leading: () => true, leaderUrl: () => undefined, epoch: () => NO_EPOCH, self: 'this CC' });

export const CC_ELECTION_KEY = (partition: string): string => `cc/${partition}/election/`;

export function ccElection(o: {
  readonly client: Etcd3; readonly etcdPrefix: string; readonly partition: string; readonly self: string;
  readonly ttlSeconds: number; readonly callTimeoutMs?: number; readonly clock: Clock; readonly logger: Logger;
}): ReplicaElection {
  return replicaElection({ ...o, prefix: `${o.etcdPrefix}${CC_ELECTION_KEY(o.partition)}`, role: `CC ${o.partition}` });
}

/** What a follower serves: the operations that change nothing (at the CC or at an NC). */
export const CC_READ_OPS: ReadonlySet<CcOp> = new Set<CcOp>([
  'ccDescribeNodes', 'ccDescribeNodeHealth', 'ccDescribeInstances', 'ccDescribeResources', 'ccDescribeMigrations', 'ccCheckHostActivity', 'ccDescribeReplica',
]);

/** What ccDescribeReplica answers: this replica, whether it leads (with its epoch), and the leader it observes. */
export function replicaReport(l: CcLeadership, partition: string): CcResponse<'ccDescribeReplica'> {
  const leading = l.leading();
  const epoch = leading ? l.epoch() : undefined;
  const leaderUrl = l.leaderUrl();
  return { partition, self: l.self, leading, ...(leaderUrl !== undefined ? { leaderUrl } : {}), ...(epoch !== undefined ? { epoch } : {}) };
}

export function notLeaderError(l: CcLeadership, partition: string): FerryError {
  return CcErrors.make('NotLeader', { replica: l.self, partition, leaderIs: notLeaderText(l.self, l.leaderUrl()) });
}

/**
 * Still the leader in etcd, proven now (not only by the lease), as the CLC proves it before a change:
 * a CC leader cut off from etcd's quorum keeps its lease for up to a TTL, and a change it started
 * would reach a node. StoreNotLeader becomes NotLeader (naming the leader), StoreUnavailable
 * LeadershipUnconfirmed (naming the store); nothing was done in either case.
 */
export async function confirmLeading(l: CcLeadership, partition: string): Promise<void> {
  if (l.confirm === undefined) return;
  try {
    await l.confirm();
  } catch (e) {
    if (isFerryError(e) && e.code === 'StoreNotLeader') throw notLeaderError(l, partition);
    if (isFerryError(e) && e.code === 'StoreUnavailable') throw CcErrors.make('LeadershipUnconfirmed', { replica: l.self, partition, detail: e.message });
    throw e;
  }
}

/**
 * Every operation but CC_READ_OPS refused with NotLeader while this replica does not lead, before its
 * body is looked at; a change from the CLC (CC_EPOCH_OPS) also waits for confirmLeading. An NC's hint
 * (ccNodeEvent) only schedules a poll, which the loops run under the lease and the epochs.
 */
export function leaderOnly(handlers: WireHandlers, l: CcLeadership, partition: string): WireHandlers {
  const out: WireHandlers = Object.fromEntries(Object.entries(handlers).map(([op, handle]) => [op, CC_READ_OPS.has(op as CcOp) ? handle : async (body, ctx) => {
    if (!l.leading()) throw notLeaderError(l, partition);
    if (CC_EPOCH_OPS.has(op as CcOp)) await confirmLeading(l, partition);
    return handle(body, ctx);
  }]));
  return Object.freeze(out);
}

/** The CC's calls to its NCs with this term's epoch on every change; none is sent while this replica does not lead. */
export function stampEpochs(transport: WireTransport, l: CcLeadership, partition: string): WireTransport {
  return {
    call(endpoint, operation, body, opts) {
      if (!NC_CHANGE_OPS.has(operation)) return transport.call(endpoint, operation, body, opts);
      const epoch = l.epoch();
      if (epoch === undefined) return Promise.reject(notLeaderError(l, partition));
      return transport.call(endpoint, operation, { ...body, [LEADER_EPOCH_FIELD]: epoch }, opts);
    },
  };
}
