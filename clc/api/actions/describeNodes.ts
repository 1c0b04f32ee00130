/**
 * DescribeNodes (Eucalyptus): every node of every answering partition, with capacity, use and
 * instances, and for a migrating instance where it moves from and to.
 */
import { z } from 'zod';
import type { ClcCcResponse } from '../../clusters/ccContract.js';
import { partitionNames } from '../../clusters/clusters.js';
import { askPartitions, type FanOut } from '../../clusters/fanOut.js';
import { requireZone } from '../../core/zones.js';
import { defineAction, type ActionContext } from '../action.js';
import { parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { nodeItem, unavailableItems, type InstanceMove } from '../render/serviceItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';

const schema = z.strictObject({
  ByPartition: z.string().min(1).optional(),
  ByHost: z.string().min(1).optional(),
}).transform((p) => ({ partition: p.ByPartition, host: p.ByHost }));

export type DescribeNodesInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeNodes(params: ParamMap): DescribeNodesInput {
  return parseActionParams(schema, params);
}

/**
 * Where each migrating instance moves: ccDescribeNodes carries the NCs' own records, ccDescribeInstances
 * the CC's reading of the plans. A partition that answers only the first shows its nodes without moves.
 */
function movesOf(instances: FanOut<ClcCcResponse<'ccDescribeInstances'>>): Map<string, InstanceMove> {
  const moves = new Map<string, InstanceMove>();
  for (const r of instances.answers.values()) {
    for (const i of r.instances) {
      if (!i.migrationSource && !i.migrationDestination) continue;
      moves.set(i.instanceId, {
        ...(i.migrationSource ? { source: i.migrationSource } : {}), ...(i.migrationDestination ? { destination: i.migrationDestination } : {}),
      });
    }
  }
  return moves;
}

async function run(input: DescribeNodesInput, ctx: ActionContext): Promise<XmlObject> {
  const partitions = input.partition !== undefined ? [requireZone(ctx.clusters, input.partition)] : partitionNames(ctx.clusters);
  const [fan, instances] = await Promise.all([
    askPartitions(ctx.clusters, partitions, 'ccDescribeNodes', {}, ctx.logger),
    askPartitions(ctx.clusters, partitions, 'ccDescribeInstances', {}, ctx.logger),
  ]);
  const moves = movesOf(instances);
  const nodes = [...fan.answers.values()].flatMap((r) => r.nodes).filter((n) => input.host === undefined || n.host === input.host);
  return { nodeSet: nodes.map((n) => nodeItem(n, moves)), unavailablePartitionSet: unavailableItems(fan.unavailable) };
}

export const describeNodes = defineAction({ namespace: EUCA_NAMESPACE, parse: parseDescribeNodes, run });
