/**
 * EnableService / DisableService for `Type=NODE` (Eucalyptus 3.3 node maintenance mode). The node
 * is found (in `Partition`, or in whichever partition reports it), its CC is asked to change it, and
 * the reply goes out only after the CC answered, which it does once the NC has persisted the state.
 *
 * The node is named by `Host=<address>` or by `ServiceId=<full name>` as DescribeServices prints it
 * (`arn:euca:eucalyptus:<partition>:node:<host>/`), never both.
 */
import { z } from 'zod';
import type { NodeState } from '../../../shared/protocol/common.js';
import { hostSchema, partitionSchema } from '../../../shared/protocol/common.js';
import { partitionNames } from '../../clusters/clusters.js';
import { askPartitions } from '../../clusters/fanOut.js';
import { parseServiceFullName } from '../../core/services.js';
import { defineAction, type ActionContext } from '../action.js';
import { coded, parseActionParams } from '../actionParams.js';
import { ClcErrors } from '../errors.js';
import type { ParamMap } from '../queryParams.js';
import { matrixItems } from '../render/matrixItems.js';
import { nodeItem, nodeServiceStatus, serviceStatusItem } from '../render/serviceItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { requireZone } from './zones.js';

/** The only service type whose state Ferry changes; others are Eucalyptus's and out of scope. */
const MODIFIABLE_TYPE = 'node';

const wrongType = coded('InvalidServiceType', 'only node services can be enabled or disabled here', { expected: MODIFIABLE_TYPE.toUpperCase() });

const serviceIdParam = z.string()
  .refine((s) => parseServiceFullName(s) !== undefined, `expected a service full name such as arn:euca:eucalyptus:cluster01:${MODIFIABLE_TYPE}:127.0.1.1/`)
  .transform((s) => parseServiceFullName(s) as NonNullable<ReturnType<typeof parseServiceFullName>>)
  .refine((id) => id.type === MODIFIABLE_TYPE, wrongType);

const schema = z.strictObject({
  Type: z.string().refine((s) => s.toLowerCase() === MODIFIABLE_TYPE, wrongType),
  Host: hostSchema.optional(),
  ServiceId: serviceIdParam.optional(),
  Partition: partitionSchema.optional(),
})
  .refine((p) => !(p.Host !== undefined && p.ServiceId !== undefined), {
    path: ['ServiceId'], ...coded('InvalidParameterCombination', 'Give Host or ServiceId, not both'),
  })
  .refine((p) => p.Host !== undefined || p.ServiceId !== undefined, {
    path: ['Host'], ...coded('MissingParameter', 'Host or ServiceId is required', { parameter: 'Host (or ServiceId)' }),
  })
  .transform((p) => ({
    host: p.Host ?? p.ServiceId?.name ?? '',
    partition: p.Partition ?? p.ServiceId?.partition,
    partitionFromServiceId: p.ServiceId?.partition,
  }))
  .refine((p) => p.partitionFromServiceId === undefined || p.partition === p.partitionFromServiceId, {
    path: ['Partition'], ...coded('InvalidParameterCombination', 'Partition differs from the partition in ServiceId'),
  })
  .refine((p) => hostSchema.safeParse(p.host).success, { path: ['ServiceId'], message: 'the node name in ServiceId is not an IPv4 address' })
  .transform((p) => ({ host: p.host, partition: p.partition }));

export type ModifyServiceInput = Readonly<z.infer<typeof schema>>;

export function parseModifyService(params: ParamMap): ModifyServiceInput {
  return parseActionParams(schema, params);
}

/** The partition whose CC reports `host`; checked before anything is changed. */
async function findNodePartition(ctx: ActionContext, input: ModifyServiceInput): Promise<string> {
  const candidates = input.partition !== undefined ? [requireZone(ctx.clusters, input.partition)] : partitionNames(ctx.clusters);
  const fan = await askPartitions(ctx.clusters, candidates, 'ccDescribeNodes', {}, ctx.logger);
  for (const [partition, r] of fan.answers) {
    if (r.nodes.some((n) => n.host === input.host)) return partition;
  }
  if (fan.unavailable.size > 0) {
    // It may be a node of a partition that did not answer: not a NotFound we can vouch for.
    throw ClcErrors.make('ServiceUnavailable', {
      partition: [...fan.unavailable.keys()].join(','), delivered: 'no',
      detail: `node ${input.host} is not in any answering partition, and ${[...fan.unavailable.values()].map((e) => e.message).join('; ')}`,
    });
  }
  throw ClcErrors.make('InvalidHost.NotFound', {
    host: input.host, scope: input.partition !== undefined ? `partition ${input.partition}` : `any partition (${candidates.join(', ')})`,
  });
}

function modifyNode(stateName: NodeState) {
  return async (input: ModifyServiceInput, ctx: ActionContext): Promise<XmlObject> => {
    const partition = await findNodePartition(ctx, input);
    const r = await ctx.clusters.call(partition, 'ccModifyNode', { host: input.host, stateName, vmTypes: ctx.store.read().vmTypes });
    ctx.logger.info({ partition, host: input.host, previousState: r.previousState, stateName }, 'node state changed');
    return {
      serviceStatuses: [serviceStatusItem(nodeServiceStatus(r.node))],
      previousState: r.previousState,
      node: nodeItem(r.node),
      resourceMatrix: matrixItems(r.matrix),
    };
  };
}

export const enableService = defineAction({ namespace: EUCA_NAMESPACE, parse: parseModifyService, run: modifyNode('enabled') });
export const disableService = defineAction({ namespace: EUCA_NAMESPACE, parse: parseModifyService, run: modifyNode('disabled') });
