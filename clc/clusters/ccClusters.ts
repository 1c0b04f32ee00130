/** The real Clusters adapter: typed CC calls over a WireTransport, failures translated at this edge. */
import { LeaderRoute } from '../../shared/leader/leaderRouting.js';
import { CC_EPOCH_OPS } from '../../shared/protocol/ccProtocol.js';
import { TypedClient } from '../../shared/protocol/typedClient.js';
import type { WireTransport } from '../../shared/wire/transport.js';
import { ClcErrors } from '../core/errors.js';
import { notLeaderError, SOLE_REPLICA, type Leadership } from '../core/leadership.js';
import { CLC_CC_OPS, type ClcCcOp, type ClcCcRequest, type ClcCcResponse } from './ccContract.js';
import { translateCcFailure } from './ccFaults.js';
import type { Clusters, PartitionInfo, ReplicaAnswer } from './clusters.js';
import { ListingCache } from './listingCache.js';

export interface CcClustersOptions {
  readonly partitions: readonly PartitionInfo[];
  readonly transport: WireTransport;
  readonly timeoutMs: number;
  /**
   * The bound on the calls that start or stop guests (the CC waits for each NC's hypervisor, and
   * re-places an instance a node could not start): longer than `timeoutMs`, the bound of quick calls.
   */
  readonly instanceTimeoutMs?: number;
  /**
   * Who may send changes, with which epoch (issue 21): every CC_EPOCH_OPS request carries the leader's
   * epoch, and a replica that does not lead sends none (NotLeader). Absent: the single CLC (SOLE_REPLICA).
   */
  readonly leadership?: Leadership;
}

const GUEST_OPS: ReadonlySet<ClcCcOp> = new Set<ClcCcOp>(['ccRunInstances', 'ccTerminateInstances', 'ccStartInstances', 'ccPauseInstance', 'ccStopInstance', 'ccStartInstance', 'ccRebootInstance']);

export function createCcClusters(opts: CcClustersOptions): Clusters {
  const client = new TypedClient(opts.transport, CLC_CC_OPS);
  // Each partition's CC replicas (issue 21): sent to the one that answered last, following NotLeader.
  const routes = new Map(opts.partitions.map((p) => [p.name, new LeaderRoute(p.endpoints ?? [p.endpoint])]));
  const listings = new ListingCache();
  const leadership = opts.leadership ?? SOLE_REPLICA;
  return {
    partitions: Object.freeze(opts.partitions.map((p) => Object.freeze({ ...p }))),
    async call<O extends ClcCcOp>(partition: string, op: O, req: ClcCcRequest<O>): Promise<ClcCcResponse<O>> {
      const route = routes.get(partition);
      if (route === undefined) throw ClcErrors.make('InternalError', { detail: `no cluster controller is configured for partition ${partition}` });
      const epoch = CC_EPOCH_OPS.has(op) ? leadership.epoch() : undefined;
      // A replica that does not lead (its lease may be gone) sends no change at all.
      if (CC_EPOCH_OPS.has(op) && epoch === undefined && !leadership.leading()) {
        const refused = notLeaderError(leadership);
        throw ClcErrors.withMessage('NotLeader', refused.message, { ...refused.fields, partition, delivered: 'no' });
      }
      const sent = epoch === undefined ? req : { ...req, clcEpoch: epoch };
      try {
        const timeoutMs = GUEST_OPS.has(op) ? Math.max(opts.timeoutMs, opts.instanceTimeoutMs ?? 0) : opts.timeoutMs;
        if (op === 'ccDescribeInstances') {
          const listing = await listings.describe(partition, req as ClcCcRequest<'ccDescribeInstances'>, (r) => route.send((url) => client.call(url, 'ccDescribeInstances', r, { timeoutMs })));
          return listing as ClcCcResponse<O>;
        }
        return await route.send((url) => client.call(url, op, sent, { timeoutMs }));
      } catch (e) {
        const failure = translateCcFailure(e, partition, op);
        // The CC has seen a newer leader's epoch: this replica is deposed, whatever its lease says.
        if (failure.fields.remoteCode === 'StaleLeaderEpoch') {
          const refused = notLeaderError(leadership);
          throw ClcErrors.withMessage('NotLeader', `${refused.message} (the cluster controller of partition ${partition} has seen a newer leader)`, { ...failure.fields, ...refused.fields });
        }
        throw failure;
      }
    },
    async describeReplicas(partition: string): Promise<readonly ReplicaAnswer[]> {
      const p = opts.partitions.find((x) => x.name === partition);
      if (p === undefined) throw ClcErrors.make('InternalError', { detail: `no cluster controller is configured for partition ${partition}` });
      // Each replica directly (not through the route): a follower's answer is the point.
      return Promise.all((p.endpoints ?? [p.endpoint]).map((url) => client.call(url, 'ccDescribeReplica', {}, { timeoutMs: opts.timeoutMs }).then(
        (report): ReplicaAnswer => ({ url, report }),
        (e: unknown): ReplicaAnswer => ({ url, failure: translateCcFailure(e, partition, 'ccDescribeReplica') }),
      )));
    },
  };
}
