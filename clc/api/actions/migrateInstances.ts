/**
 * MigrateInstances (Eucalyptus 3.3, extended): drain a node (`SourceHost`) or move one instance
 * (`InstanceId`), exactly one of the two. The CLC finds the partition that holds the node or the
 * instance and asks its CC, which plans, has the source NC persist the plan, reserves room on the
 * destinations and answers; the migrations themselves run afterwards (DescribeMigrations follows
 * them). Exclusive in the gate (clc/core/gate.ts): changes to the partition that arrive meanwhile
 * wait for this reply, so none runs against capacity the plan is about to reserve.
 */
import { z } from 'zod';
import { hostSchema } from '../../../shared/protocol/common.js';
import type { ClcCcRequest } from '../../clusters/ccContract.js';
import { partitionNames } from '../../clusters/clusters.js';
import { askPartitions } from '../../clusters/fanOut.js';
import { ClcErrors } from '../../core/errors.js';
import { liveInstances, mergeInstances } from '../../core/instanceView.js';
import { viewOfPlan } from '../../core/migrationView.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, coded, instanceIdParam, paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { matrixItems } from '../render/matrixItems.js';
import { migrationXml } from '../render/migrationItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { requireInstances } from './instanceLookup.js';
import { findNodePartition } from './nodeLookup.js';

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

/** The partition whose CC reports the instance; a terminated one is refused here, without asking to move it. */
async function findInstancePartition(ctx: ActionContext, instanceId: string, candidates: readonly string[]): Promise<string> {
  const fan = await askPartitions(ctx.clusters, candidates, 'ccDescribeInstances', {}, ctx.logger);
  const { live, incomplete } = liveInstances(fan.answers);
  const [view] = requireInstances([instanceId], mergeInstances(ctx.store.read().instances, live, incomplete), fan.unavailable);
  if (!view) throw ClcErrors.make('InternalError', { detail: `instance ${instanceId} was resolved to nothing` });
  if (!view.reported || view.state === 'terminated') {
    throw ClcErrors.make('IncorrectInstanceState', { instanceId, state: 'terminated', detail: 'only running instances can be migrated' });
  }
  return view.partition;
}

/** Where the request may be routed: the instance's recorded partition (instances never leave it), else every partition. */
function candidatePartitions(ctx: ActionContext, input: MigrateInstancesInput): string[] {
  const all = partitionNames(ctx.clusters);
  const recorded = input.instanceId !== undefined ? ctx.store.read().instances[input.instanceId]?.partition : undefined;
  return recorded !== undefined && all.includes(recorded) ? [recorded] : all;
}

/** Host HA: a fenced (or fencing) host is never a destination, whether named or not. */
function destinationsBesideFenced(input: MigrateInstancesInput, ctx: ActionContext): { destinations: string[]; allowHosts: boolean } {
  const fenced = ctx.haHooks?.fencedHosts() ?? new Set<string>();
  if (fenced.size === 0) return { destinations: [...input.destinations], allowHosts: input.allowHosts };
  if (input.allowHosts && input.destinations.length > 0) {
    const named = input.destinations.filter((h) => fenced.has(h));
    if (named.length > 0) {
      throw ClcErrors.make('InvalidParameterValue', { parameter: 'DestinationHost', value: named.join(','), detail: 'host HA has fenced it (or is fencing it)' });
    }
    return { destinations: [...input.destinations], allowHosts: true };
  }
  // No list (any host) or a forbidden list: the fenced hosts join the forbidden ones.
  const source = input.sourceHost;
  return { destinations: [...new Set([...(input.allowHosts ? [] : input.destinations), ...fenced])].filter((h) => h !== source), allowHosts: false };
}

async function run(input: MigrateInstancesInput, ctx: ActionContext): Promise<XmlObject> {
  const candidates = candidatePartitions(ctx, input);
  const what = input.sourceHost !== undefined ? `draining node ${input.sourceHost}` : `of instance ${input.instanceId}`;
  // On receipt, before routing: changes that arrive from now on queue behind this request.
  const ticket = ctx.gate.enter('exclusive', `MigrateInstances ${what}`, candidates);
  const partition = input.sourceHost !== undefined
    ? await findNodePartition(ctx, input.sourceHost, candidates)
    : await findInstancePartition(ctx, input.instanceId as string, candidates);
  await ticket.ready([partition]);

  const req: ClcCcRequest<'ccMigrateInstances'> = {
    ...(input.sourceHost !== undefined ? { sourceHost: input.sourceHost } : {}),
    ...(input.instanceId !== undefined ? { instanceId: input.instanceId } : {}),
    ...destinationsBesideFenced(input, ctx),
    reserveDestinations: input.reserveDestinations,
    partial: input.partial,
    vmTypes: ctx.store.read().vmTypes,
  };
  const r = await ctx.clusters.call(partition, 'ccMigrateInstances', req);
  ctx.logger.info({
    partition, migrationId: r.migrationId, source: r.plan.source, kind: r.plan.request.kind,
    items: r.plan.items.length, unplaced: r.unplaced.length,
  }, 'migration planned');
  return {
    ...migrationXml(viewOfPlan(r.plan, partition, ctx.clock.now())),
    unplacedSet: r.unplaced.map((u) => ({ instanceId: u.instanceId, reason: u.reason })),
    resourceMatrix: matrixItems(r.matrix),
  };
}

export const migrateInstances = defineAction({ namespace: EUCA_NAMESPACE, parse: parseMigrateInstances, run });
