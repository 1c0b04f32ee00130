/** DescribeNodes (Eucalyptus): every node of every answering partition, with capacity, use and instances. */
import { z } from 'zod';
import { partitionNames } from '../../clusters/clusters.js';
import { askPartitions } from '../../clusters/fanOut.js';
import { defineAction, type ActionContext } from '../action.js';
import { parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { nodeItem, unavailableItems } from '../render/serviceItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { requireZone } from './zones.js';

const schema = z.strictObject({
  ByPartition: z.string().min(1).optional(),
  ByHost: z.string().min(1).optional(),
}).transform((p) => ({ partition: p.ByPartition, host: p.ByHost }));

export type DescribeNodesInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeNodes(params: ParamMap): DescribeNodesInput {
  return parseActionParams(schema, params);
}

async function run(input: DescribeNodesInput, ctx: ActionContext): Promise<XmlObject> {
  const partitions = input.partition !== undefined ? [requireZone(ctx.clusters, input.partition)] : partitionNames(ctx.clusters);
  const fan = await askPartitions(ctx.clusters, partitions, 'ccDescribeNodes', {}, ctx.logger);
  const nodes = [...fan.answers.values()].flatMap((r) => r.nodes).filter((n) => input.host === undefined || n.host === input.host);
  return { nodeSet: nodes.map(nodeItem), unavailablePartitionSet: unavailableItems(fan.unavailable) };
}

export const describeNodes = defineAction({ namespace: EUCA_NAMESPACE, parse: parseDescribeNodes, run });
