/**
 * Plans a live migration (Eucalyptus 3.3 MigrateInstances, extended): drain a node (`sourceHost`) or
 * move one instance (`instanceId`), exactly one of the two. The one operation behind the admin's
 * MigrateInstances and host HA's drain of a degraded host. The partition that holds the node or the
 * instance is found and its CC asked: it plans, has the source NC persist the plan, reserves room on
 * the destinations and answers; the migrations themselves run afterwards. Exclusive in the gate
 * (gate.ts): changes to the partition that arrive meanwhile wait for this answer, so none runs
 * against capacity the plan is about to reserve.
 */
import type { ClcCcRequest, ClcCcResponse } from '../clusters/ccContract.js';
import { partitionNames } from '../clusters/clusters.js';
import { askPartitions } from '../clusters/fanOut.js';
import { ClcErrors } from './errors.js';
import { requireInstances } from './instanceLookup.js';
import { liveInstances, mergeInstances } from './instanceView.js';
import { findNodePartition } from './nodeLookup.js';
import type { OperationContext } from './operationContext.js';
import { trackedOf } from '../events/migrationWatch.js';

/** What to migrate and where; validated by the caller (the API's parse, or HA's own fixed choices). */
export interface MigrationRequest {
  /** Drain this node; or else */
  readonly sourceHost: string | undefined;
  /** move this instance. */
  readonly instanceId: string | undefined;
  readonly destinations: readonly string[];
  /** `destinations` are the allowed hosts (true) or the forbidden ones (false); ignored without any. */
  readonly allowHosts: boolean;
  readonly reserveDestinations: boolean;
  /** Plan what fits when not everything does (else nothing is planned). */
  readonly partial: boolean;
}

/** The partition the plan was made in, and its CC's answer (the plan, what was not placed, the matrix). */
export interface PlannedMigration {
  readonly partition: string;
  readonly planned: ClcCcResponse<'ccMigrateInstances'>;
}

/** The partition whose CC reports the instance; a terminated one is refused here, without asking to move it. */
async function findInstancePartition(ctx: OperationContext, instanceId: string, candidates: readonly string[]): Promise<string> {
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
function candidatePartitions(ctx: OperationContext, request: MigrationRequest): string[] {
  const all = partitionNames(ctx.clusters);
  const recorded = request.instanceId !== undefined ? ctx.store.read().instances[request.instanceId]?.partition : undefined;
  return recorded !== undefined && all.includes(recorded) ? [recorded] : all;
}

/** Host HA: a fenced (or fencing) host is never a destination, whether named or not. */
function destinationsBesideFenced(request: MigrationRequest, ctx: OperationContext): { destinations: string[]; allowHosts: boolean } {
  const fenced = ctx.haHooks?.fencedHosts() ?? new Set<string>();
  if (fenced.size === 0) return { destinations: [...request.destinations], allowHosts: request.allowHosts };
  if (request.allowHosts && request.destinations.length > 0) {
    const named = request.destinations.filter((h) => fenced.has(h));
    if (named.length > 0) {
      throw ClcErrors.make('InvalidParameterValue', { parameter: 'DestinationHost', value: named.join(','), detail: 'host HA has fenced it (or is fencing it)' });
    }
    return { destinations: [...request.destinations], allowHosts: true };
  }
  // No list (any host) or a forbidden list: the fenced hosts join the forbidden ones.
  const source = request.sourceHost;
  return { destinations: [...new Set([...(request.allowHosts ? [] : request.destinations), ...fenced])].filter((h) => h !== source), allowHosts: false };
}

export async function planMigration(ctx: OperationContext, request: MigrationRequest): Promise<PlannedMigration> {
  const candidates = candidatePartitions(ctx, request);
  const what = request.sourceHost !== undefined ? `draining node ${request.sourceHost}` : `of instance ${request.instanceId}`;
  // On receipt, before routing: changes that arrive from now on queue behind this request.
  const ticket = ctx.gate.enter('exclusive', `MigrateInstances ${what}`, candidates);
  const partition = request.sourceHost !== undefined
    ? await findNodePartition(ctx, request.sourceHost, candidates)
    : await findInstancePartition(ctx, request.instanceId as string, candidates);
  await ticket.ready([partition]);

  const req: ClcCcRequest<'ccMigrateInstances'> = {
    ...(request.sourceHost !== undefined ? { sourceHost: request.sourceHost } : {}),
    ...(request.instanceId !== undefined ? { instanceId: request.instanceId } : {}),
    ...destinationsBesideFenced(request, ctx),
    reserveDestinations: request.reserveDestinations,
    partial: request.partial,
    vmTypes: ctx.store.read().vmTypes,
  };
  const planned = await ctx.clusters.call(partition, 'ccMigrateInstances', req);
  ctx.logger.info({
    partition, migrationId: planned.migrationId, source: planned.plan.source, kind: planned.plan.request.kind,
    items: planned.plan.items.length, unplaced: planned.unplaced.length,
  }, 'migration planned');
  // Recorded before the answer, with the watcher's record of its items (clc/events/migrationWatch.ts).
  const { plan } = planned;
  const actor = ctx.actor ?? 'system';
  await ctx.events?.recordPlan({
    kind: 'migration.planned', migrationId: plan.migrationId, partition, host: plan.source, actor,
    ...(request.instanceId !== undefined ? { instanceId: request.instanceId } : {}),
    message: `migration ${plan.migrationId} planned by ${actor}: ${plan.request.kind === 'drain' ? `drain of ${plan.source}` : `instance ${request.instanceId ?? ''}`}, ${plan.items.length} item(s), ${planned.unplaced.length} not placed`,
    details: { kind: plan.request.kind, items: String(plan.items.length), unplaced: String(planned.unplaced.length), instances: plan.items.map((i) => i.instanceId).join(',') },
  }, plan.migrationId, trackedOf({ partition, plan }));
  return { partition, planned };
}
