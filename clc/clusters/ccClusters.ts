/** The real Clusters adapter: typed CC calls over a WireTransport, failures translated at this edge. */
import { LeaderRoute } from '../../shared/leader/leaderRouting.js';
import { TypedClient } from '../../shared/protocol/typedClient.js';
import type { WireTransport } from '../../shared/wire/transport.js';
import { ClcErrors } from '../core/errors.js';
import { CLC_CC_OPS, type ClcCcOp, type ClcCcRequest, type ClcCcResponse } from './ccContract.js';
import { translateCcFailure } from './ccFaults.js';
import type { Clusters, PartitionInfo } from './clusters.js';
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
}

const GUEST_OPS: ReadonlySet<ClcCcOp> = new Set<ClcCcOp>(['ccRunInstances', 'ccTerminateInstances', 'ccStartInstances', 'ccPauseInstance', 'ccStopInstance', 'ccStartInstance', 'ccRebootInstance']);

export function createCcClusters(opts: CcClustersOptions): Clusters {
  const client = new TypedClient(opts.transport, CLC_CC_OPS);
  // Each partition's CC replicas (issue 21): sent to the one that answered last, following NotLeader.
  const routes = new Map(opts.partitions.map((p) => [p.name, new LeaderRoute(p.endpoints ?? [p.endpoint])]));
  const listings = new ListingCache();
  return {
    partitions: Object.freeze(opts.partitions.map((p) => Object.freeze({ ...p }))),
    async call<O extends ClcCcOp>(partition: string, op: O, req: ClcCcRequest<O>): Promise<ClcCcResponse<O>> {
      const route = routes.get(partition);
      if (route === undefined) throw ClcErrors.make('InternalError', { detail: `no cluster controller is configured for partition ${partition}` });
      try {
        const timeoutMs = GUEST_OPS.has(op) ? Math.max(opts.timeoutMs, opts.instanceTimeoutMs ?? 0) : opts.timeoutMs;
        if (op === 'ccDescribeInstances') {
          const listing = await listings.describe(partition, req as ClcCcRequest<'ccDescribeInstances'>, (r) => route.send((url) => client.call(url, 'ccDescribeInstances', r, { timeoutMs })));
          return listing as ClcCcResponse<O>;
        }
        return await route.send((url) => client.call(url, op, req, { timeoutMs }));
      } catch (e) {
        throw translateCcFailure(e, partition, op);
      }
    },
  };
}
