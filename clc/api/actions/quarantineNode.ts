/**
 * QuarantineNode / UnquarantineNode (issue 18): isolate a node suspected compromised, or lift that.
 * Eucalyptus has no such service state, so these are actions of their own beside DescribeNodes
 * (`euca-describe-nodes`) and EnableService/DisableService, named by what they do to a node. The node
 * is named like EnableService's: `Host=<address>` or `ServiceId=<full name>` (never both), optionally
 * `Partition`. QuarantineNode takes an optional `Reason` (shown by DescribeServices and DescribeNodes).
 *
 * A quarantined node is disabled in the same write, takes no instance (not by placement, not as a
 * migration destination even when named), is not drained (its instances move only with
 * MigrateInstances InstanceId=...) and host HA neither drains it nor restarts its instances
 * elsewhere. Lifting the quarantine leaves the node disabled; EnableService returns it to service.
 * The change itself is the core operation changeNodeQuarantine (clc/core/nodeQuarantine.ts).
 */
import { z } from 'zod';
import { hostSchema, partitionSchema } from '../../../shared/protocol/common.js';
import { QUARANTINE_REASON_MAX } from '../../../shared/protocol/ncProtocol.js';
import { changeNodeQuarantine, type NodeQuarantineChange } from '../../core/nodeQuarantine.js';
import { parseServiceFullName } from '../../core/services.js';
import { defineAction, type ActionContext } from '../action.js';
import { coded, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { quarantineFields } from '../render/serviceItems.js';
import { nodeChangeXml } from './modifyService.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';

const serviceIdParam = z.string()
  .transform((s, c) => {
    const id = parseServiceFullName(s);
    if (id === undefined || id.type !== 'node' || !hostSchema.safeParse(id.name).success) {
      c.addIssue({ code: 'custom', message: 'expected a node service full name such as arn:euca:eucalyptus:cluster01:node:127.0.1.1/' });
      return z.NEVER;
    }
    return id;
  });

/** Printable text: a reason is shown in XML answers and logs, so no control characters. */
const reasonParam = z.string()
  .max(QUARANTINE_REASON_MAX, `at most ${QUARANTINE_REASON_MAX} characters`)
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'control characters are not allowed');

const target = {
  Host: hostSchema.optional(),
  ServiceId: serviceIdParam.optional(),
  Partition: partitionSchema.optional(),
};

type TargetParams = { Host?: string | undefined; ServiceId?: { partition: string; name: string } | undefined; Partition?: string | undefined };

/** Host or ServiceId (not both), and a Partition that agrees with ServiceId's. */
function withTarget<S extends z.ZodType<TargetParams>>(schema: S) {
  return schema
    .refine((p) => !(p.Host !== undefined && p.ServiceId !== undefined), {
      path: ['ServiceId'], ...coded('InvalidParameterCombination', 'Give Host or ServiceId, not both'),
    })
    .refine((p) => p.Host !== undefined || p.ServiceId !== undefined, {
      path: ['Host'], ...coded('MissingParameter', 'Host or ServiceId is required', { parameter: 'Host (or ServiceId)' }),
    })
    .refine((p) => p.ServiceId === undefined || p.Partition === undefined || p.Partition === p.ServiceId.partition, {
      path: ['Partition'], ...coded('InvalidParameterCombination', 'Partition differs from the partition in ServiceId'),
    });
}

const quarantineSchema = withTarget(z.strictObject({ ...target, Reason: reasonParam.optional() }))
  .transform((p) => ({ host: p.Host ?? p.ServiceId?.name ?? '', partition: p.Partition ?? p.ServiceId?.partition, reason: p.Reason ?? '' }));

const releaseSchema = withTarget(z.strictObject(target))
  .transform((p) => ({ host: p.Host ?? p.ServiceId?.name ?? '', partition: p.Partition ?? p.ServiceId?.partition }));

export type QuarantineNodeInput = Readonly<z.infer<typeof quarantineSchema>>;
export type UnquarantineNodeInput = Readonly<z.infer<typeof releaseSchema>>;

export function parseQuarantineNode(params: ParamMap): QuarantineNodeInput {
  return parseActionParams(quarantineSchema, params);
}

export function parseUnquarantineNode(params: ParamMap): UnquarantineNodeInput {
  return parseActionParams(releaseSchema, params);
}

/** The answer of both: EnableService's (the node's service status and item, its previous state, the matrix), and what quarantine it held. */
export function quarantineChangeXml(change: NodeQuarantineChange): XmlObject {
  return { ...nodeChangeXml(change), ...quarantineFields(change.changed.previousQuarantine, 'previous') };
}

export const quarantineNode = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: parseQuarantineNode,
  run: async (input: QuarantineNodeInput, ctx: ActionContext) => quarantineChangeXml(await changeNodeQuarantine(
    ctx, input, { quarantined: true, reason: input.reason }, `QuarantineNode of node ${input.host}`,
  )),
});

export const unquarantineNode = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: parseUnquarantineNode,
  run: async (input: UnquarantineNodeInput, ctx: ActionContext) => quarantineChangeXml(await changeNodeQuarantine(
    ctx, input, { quarantined: false }, `UnquarantineNode of node ${input.host}`,
  )),
});
