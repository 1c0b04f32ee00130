/**
 * EnableService / DisableService for `Type=NODE` (Eucalyptus 3.3 node maintenance mode). The node
 * is named by `Host=<address>` or by `ServiceId=<full name>` as DescribeServices prints it
 * (`arn:euca:eucalyptus:<partition>:node:<host>/`), never both, and optionally its `Partition`.
 * The change itself (finding the node, the gate, host HA's hooks, the CC's answer after the NC
 * persisted the state) is the core operation changeNodeState (clc/core/nodeState.ts), which host
 * HA's DisableService of a failing host runs too. Eucalyptus 4's ModifyService ENABLE/DISABLE
 * (modifyServiceByName.ts) makes the same change.
 */
import { z } from 'zod';
import type { NodeState } from '../../../shared/protocol/common.js';
import { hostSchema, partitionSchema } from '../../../shared/protocol/common.js';
import { changeNodeState, type NodeStateChange } from '../../core/nodeState.js';
import { parseServiceFullName } from '../../core/services.js';
import { defineAction, type ActionContext } from '../action.js';
import { coded, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { matrixItems } from '../render/matrixItems.js';
import { nodeItem, nodeServiceStatus, serviceStatusItem } from '../render/serviceItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { textParam } from './haCommon.js';

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
  /** Why (Ferry's extension): recorded with the change in the event stream. */
  Reason: textParam.optional(),
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
    reason: p.Reason,
  }))
  .refine((p) => p.partitionFromServiceId === undefined || p.partition === p.partitionFromServiceId, {
    path: ['Partition'], ...coded('InvalidParameterCombination', 'Partition differs from the partition in ServiceId'),
  })
  .refine((p) => hostSchema.safeParse(p.host).success, { path: ['ServiceId'], message: 'the node name in ServiceId is not an IPv4 address' })
  .transform((p) => ({ host: p.host, partition: p.partition, reason: p.reason }));

export type ModifyServiceInput = Readonly<z.infer<typeof schema>>;

export function parseModifyService(params: ParamMap): ModifyServiceInput {
  return parseActionParams(schema, params);
}

/** The core operation's answer (clc/core/nodeState.ts) as EnableService, DisableService and ModifyService reply. */
export function nodeChangeXml({ changed }: NodeStateChange): XmlObject {
  return {
    serviceStatuses: [serviceStatusItem(nodeServiceStatus(changed.node))],
    previousState: changed.previousState,
    node: nodeItem(changed.node),
    resourceMatrix: matrixItems(changed.matrix),
  };
}

function modifyNode(action: 'EnableService' | 'DisableService', stateName: NodeState) {
  return async (input: ModifyServiceInput, ctx: ActionContext): Promise<XmlObject> => nodeChangeXml(await changeNodeState(ctx, input, stateName, `${action} of node ${input.host}`));
}

export const enableService = defineAction({ namespace: EUCA_NAMESPACE, parse: parseModifyService, run: modifyNode('EnableService', 'enabled') });
export const disableService = defineAction({ namespace: EUCA_NAMESPACE, parse: parseModifyService, run: modifyNode('DisableService', 'disabled') });
