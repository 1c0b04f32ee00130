/**
 * MigrateInstances (Eucalyptus 3.3, extended): drain a node (`SourceHost`) or move one instance
 * (`InstanceId`), exactly one of the two. The work (routing, the gate, fenced hosts, the CC's plan)
 * is the core operation clc/core/planMigration.ts, which host HA's drain runs too; this action
 * parses and renders. The migrations run afterwards (DescribeMigrations follows them).
 */
import { z } from 'zod';
import { hostSchema } from '../../../shared/protocol/common.js';
import { viewOfPlan } from '../../core/migrationView.js';
import { planMigration } from '../../core/planMigration.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, coded, instanceIdParam, paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { matrixItems } from '../render/matrixItems.js';
import { migrationXml } from '../render/migrationItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';

const schema = z.strictObject({
  SourceHost: hostSchema.optional(),
  InstanceId: instanceIdParam.optional(),
  DestinationHost: paramList(hostSchema).optional(),
  AllowHosts: boolParam.optional(),
  ReserveDestinations: boolParam.optional(),
  Partial: boolParam.optional(),
})
  .refine((p) => (p.SourceHost === undefined) !== (p.InstanceId === undefined), {
    path: ['SourceHost'],
    ...coded('InvalidParameterCombination', 'Give exactly one of SourceHost (drain a node) and InstanceId (move one instance)'),
  })
  .transform((p) => ({
    sourceHost: p.SourceHost,
    instanceId: p.InstanceId,
    destinations: [...new Set(p.DestinationHost ?? [])],
    // With no DestinationHost the CC ignores it; true is Eucalyptus's default.
    allowHosts: p.AllowHosts ?? true,
    reserveDestinations: p.ReserveDestinations ?? false,
    partial: p.Partial ?? false,
  }));

export type MigrateInstancesInput = Readonly<z.infer<typeof schema>>;

export function parseMigrateInstances(params: ParamMap): MigrateInstancesInput {
  return parseActionParams(schema, params);
}

/** Parse → the core operation (clc/core/planMigration.ts) → render. */
async function run(input: MigrateInstancesInput, ctx: ActionContext): Promise<XmlObject> {
  const { partition, planned } = await planMigration(ctx, input);
  return {
    ...migrationXml(viewOfPlan(planned.plan, partition, ctx.clock.now())),
    unplacedSet: planned.unplaced.map((u) => ({ instanceId: u.instanceId, reason: u.reason })),
    resourceMatrix: matrixItems(planned.matrix),
    // A drain's cold moves of the node's user-stopped instances (issue 18): re-homed, not started.
    rehomedSet: (planned.rehomed ?? []).map((r) => ({ instanceId: r.instanceId, destination: r.destination })),
    notRehomedSet: (planned.notRehomed ?? []).map((r) => ({ instanceId: r.instanceId, reason: r.reason })),
  };
}

export const migrateInstances = defineAction({ namespace: EUCA_NAMESPACE, parse: parseMigrateInstances, run });
