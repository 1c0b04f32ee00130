/** Which partition holds a node: the node operations (nodeState.ts, planMigration.ts) and ConfigureHAForHost. */
import { askPartitions } from '../clusters/fanOut.js';
import { ClcErrors } from './errors.js';
import type { OperationContext } from './operationContext.js';

/**
 * The partition among `candidates` whose CC reports `host`. `named` is the partition the admin gave,
 * if any, for the NotFound message. A host not found while a candidate did not answer is
 * ServiceUnavailable: it may be a node of that partition, so not a NotFound we can vouch for.
 */
export async function findNodePartition(ctx: Pick<OperationContext, 'clusters' | 'logger'>, host: string, candidates: readonly string[], named?: string): Promise<string> {
  // Which hosts a CC has is its configuration, not news from the NCs: its cached view answers it
  // without polling a node (issue 19: a drain asked every CC for fresh node lists just to route).
  const fan = await askPartitions(ctx.clusters, candidates, 'ccDescribeNodes', { cached: true }, ctx.logger);
  for (const [partition, r] of fan.answers) {
    if (r.nodes.some((n) => n.host === host)) return partition;
  }
  if (fan.unavailable.size > 0) {
    throw ClcErrors.make('ServiceUnavailable', {
      partition: [...fan.unavailable.keys()].join(','), delivered: 'no',
      detail: `node ${host} is not in any answering partition, and ${[...fan.unavailable.values()].map((e) => e.message).join('; ')}`,
    });
  }
  throw ClcErrors.make('InvalidHost.NotFound', {
    host, scope: named !== undefined ? `partition ${named}` : `any partition (${candidates.join(', ')})`,
  });
}
