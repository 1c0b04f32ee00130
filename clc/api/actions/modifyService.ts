/**
 * EnableService / DisableService for `Type=NODE` (Eucalyptus 3.3 node maintenance mode). The node
 * is found (in `Partition`, or in whichever partition reports it), its CC is asked to change it, and
 * the reply goes out only after the CC answered, which it does once the NC has persisted the state.
 *
 * Gating: DisableService is exclusive in the node's partition, EnableService an ordinary change
 * (clc/core/gate.ts).
 *
 * The node is named by `Host=<address>` or by `ServiceId=<full name>` as DescribeServices prints it
 * (`arn:euca:eucalyptus:<partition>:node:<host>/`), never both. Eucalyptus 4's ModifyService
 * ENABLE/DISABLE (modifyServiceByName.ts) makes the same change through changeNodeState.
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

/** A node to change: its address, and its partition when the admin named it. */
export interface NodeTarget {
  readonly host: string;
  readonly partition: string | undefined;
}

/**
 * Puts a node in or out of maintenance mode, as EnableService/DisableService and ModifyService do:
 * through the change gate, with host HA's hooks, answering after its CC answered (after the NC
 * persisted the state). `label` names the request to whoever waits behind it in the gate.
 */
export async function changeNodeState(ctx: ActionContext, target: NodeTarget, stateName: NodeState, label: string): Promise<XmlObject> {
  const candidates = target.partition !== undefined ? [requireZone(ctx.clusters, target.partition)] : partitionNames(ctx.clusters);
  // Disabling takes capacity away: it runs alone in its partition and the changes that arrive
  // meanwhile wait for its reply. Enabling only adds capacity, so it is an ordinary change.
  const ticket = ctx.gate.enter(stateName === 'disabled' ? 'exclusive' : 'change', label, candidates);
  const partition = await findNodePartition(ctx, target.host, candidates, target.partition);
  await ticket.ready([partition]);
  if (stateName === 'enabled') await ctx.haHooks?.beforeEnable(target.host, partition);
  const r = await ctx.clusters.call(partition, 'ccModifyNode', { host: target.host, stateName, vmTypes: ctx.store.read().vmTypes });
  if (stateName === 'enabled') await ctx.haHooks?.afterEnable(target.host, partition);
  ctx.logger.info({ partition, host: target.host, previousState: r.previousState, stateName }, 'node state changed');
  return {
    serviceStatuses: [serviceStatusItem(nodeServiceStatus(r.node))],
    previousState: r.previousState,
    node: nodeItem(r.node),
    resourceMatrix: matrixItems(r.matrix),
  };
}

function modifyNode(action: 'EnableService' | 'DisableService', stateName: NodeState) {
  return (input: ModifyServiceInput, ctx: ActionContext): Promise<XmlObject> => changeNodeState(ctx, input, stateName, `${action} of node ${input.host}`);
}

export const enableService = defineAction({ namespace: EUCA_NAMESPACE, parse: parseModifyService, run: modifyNode('EnableService', 'enabled') });
export const disableService = defineAction({ namespace: EUCA_NAMESPACE, parse: parseModifyService, run: modifyNode('DisableService', 'disabled') });
