/**
 * ConfigureHAForInstance: one instance's auto-repair level (Ganeti harep's per-instance tag): `off`,
 * `migrate` or `failover`, or `inherit` to drop its own and follow its cluster's. The least
 * destructive of the instance's and the cluster's applies (clc/ha/repairPolicy.ts); HA's drains and
 * restarts elsewhere read it from clc.json (clc/ha/cloud/serviceActions.ts storedRepairPolicies).
 */
import { z } from 'zod';
import { instanceNotFound } from '../../core/instanceLookup.js';
import { autoRepairSchema } from '../../ha/repairPolicy.js';
import { defineAction, type ActionContext } from '../action.js';
import { coded, instanceIdParam, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { operatorOf, requireHa } from './haCommon.js';

const LEVELS = [...autoRepairSchema.options, 'inherit'] as const;

const schema = z.strictObject({
  InstanceId: instanceIdParam.optional(),
  AutoRepair: z.string().refine((s): s is (typeof LEVELS)[number] => (LEVELS as readonly string[]).includes(s), `expected one of ${LEVELS.join(', ')}`).optional(),
})
  .refine((p) => p.InstanceId !== undefined, { path: ['InstanceId'], ...coded('MissingParameter', 'InstanceId is required', { parameter: 'InstanceId' }) })
  .refine((p) => p.AutoRepair !== undefined, { path: ['AutoRepair'], ...coded('MissingParameter', 'AutoRepair is required', { parameter: 'AutoRepair' }) })
  .transform((p) => ({ instanceId: p.InstanceId as string, autoRepair: p.AutoRepair as (typeof LEVELS)[number] }));

type Input = Readonly<z.infer<typeof schema>>;

export function parseConfigureHAForInstance(params: ParamMap): Input {
  return parseActionParams(schema, params);
}

export const configureHAForInstance = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: parseConfigureHAForInstance,
  async run(p: Input, ctx: ActionContext): Promise<XmlObject> {
    const ha = requireHa(ctx);
    const record = ctx.store.read().instances[p.instanceId];
    if (!record) throw instanceNotFound([p.instanceId]);
    const v = await ha.configureInstance({ instanceId: p.instanceId, partition: record.partition, autoRepair: p.autoRepair, by: operatorOf(ctx) });
    ctx.logger.info({ instanceId: v.instanceId, autoRepair: v.autoRepair ?? 'inherit', effective: v.effective }, 'instance auto-repair configured');
    return { instanceId: v.instanceId, partition: v.partition, autoRepair: v.autoRepair ?? 'inherit', clusterAutoRepair: v.clusterAutoRepair ?? 'inherit', effectiveAutoRepair: v.effective };
  },
});
