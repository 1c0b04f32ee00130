/**
 * EnableService / DisableService for `Type=NODE` (Eucalyptus 3.3 node maintenance mode). The node
 * is found (in `Partition`, or in whichever partition reports it), its CC is asked to change it, and
 * the reply goes out only after the CC answered, which it does once the NC has persisted the state.
 *
 * Gating: DisableService is exclusive in the node's partition, EnableService an ordinary change
 * (clc/core/gate.ts).
 *
 * The node is named by `Host=<address>` or by `ServiceId=<full name>` as DescribeServices prints it
 * (`arn:euca:eucalyptus:<partition>:node:<host>/`), never both.
 */
import { z } from 'zod';
import type { NodeState } from '../../../shared/protocol/common.js';
import { hostSchema, partitionSchema } from '../../../shared/protocol/common.js';
import { partitionNames } from '../../clusters/clusters.js';
import { parseServiceFullName } from '../../core/services.js';
import { defineAction, type ActionContext } from '../action.js';
import { coded, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { matrixItems } from '../render/matrixItems.js';
import { nodeItem, nodeServiceStatus, serviceStatusItem } from '../render/serviceItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { findNodePartition } from './nodeLookup.js';
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

function modifyNode(action: 'EnableService' | 'DisableService', stateName: NodeState) {
  return async (input: ModifyServiceInput, ctx: ActionContext): Promise<XmlObject> => {
    const candidates = input.partition !== undefined ? [requireZone(ctx.clusters, input.partition)] : partitionNames(ctx.clusters);
    // Disabling takes capacity away: it runs alone in its partition and the changes that arrive
    // meanwhile wait for its reply. Enabling only adds capacity, so it is an ordinary change.
    const ticket = ctx.gate.enter(stateName === 'disabled' ? 'exclusive' : 'change', `${action} of node ${input.host}`, candidates);
    const partition = await findNodePartition(ctx, input.host, candidates, input.partition);
    await ticket.ready([partition]);
    if (stateName === 'enabled') await ctx.haHooks?.beforeEnable(input.host, partition);
    const r = await ctx.clusters.call(partition, 'ccModifyNode', { host: input.host, stateName, vmTypes: ctx.store.read().vmTypes });
    if (stateName === 'enabled') await ctx.haHooks?.afterEnable(input.host, partition);
    ctx.logger.info({ partition, host: input.host, previousState: r.previousState, stateName }, 'node state changed');
    return {
      serviceStatuses: [serviceStatusItem(nodeServiceStatus(r.node))],
      previousState: r.previousState,
      node: nodeItem(r.node),
      resourceMatrix: matrixItems(r.matrix),
    };
  };
}

export const enableService = defineAction({ namespace: EUCA_NAMESPACE, parse: parseModifyService, run: modifyNode('EnableService', 'enabled') });
export const disableService = defineAction({ namespace: EUCA_NAMESPACE, parse: parseModifyService, run: modifyNode('DisableService', 'disabled') });
