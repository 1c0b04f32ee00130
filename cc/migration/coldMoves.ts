/**
 * The record of a drain that had only cold moves to make (issue 18 part 5): a node running nothing
 * live, holding instances their users stopped. The CC re-homes them first (cc/rehome.ts), then has
 * the source NC keep this plan, born finished, so the drain answers a migration id and items like
 * any other and DescribeMigrations (and `euca-migrate-instances --wait`) follows it. Pure.
 */
import type { MigrationPlan, PlanItem } from '../../shared/protocol/migrationProtocol.js';
import type { DrainRehoming } from '../rehome.js';
import type { MigrateRequest, PlannerContext } from './planner.js';

/** A finished drain plan of `source` whose items are the cold moves tried, in the order tried. */
export function coldMovePlan(source: string, req: MigrateRequest, moved: DrainRehoming, migrationId: string, ctx: Pick<PlannerContext, 'now' | 'limits' | 'timeouts'>): MigrationPlan {
  const destination = new Map(moved.rehomed.map((r) => [r.instanceId, r.destination]));
  const reason = new Map(moved.notRehomed.map((r) => [r.instanceId, r.reason]));
  const items = moved.tried.map((i): PlanItem => {
    const to = destination.get(i.instanceId);
    const base = { instanceId: i.instanceId, vmType: i.vmType, attempts: 1, queuedAt: ctx.now, startedAt: ctx.now, endedAt: ctx.now, cold: true } as const;
    if (to !== undefined) return { ...base, destination: to, state: 'completed' };
    return { ...base, destination: '', state: 'failed', error: `not re-homed: ${reason.get(i.instanceId) ?? 'no answer'}` };
  });
  return {
    migrationId, source, createdAt: ctx.now,
    request: { kind: 'drain', destinations: [...new Set(req.destinations)], allowHosts: req.allowHosts, reserveDestinations: req.reserveDestinations },
    limits: ctx.limits, timeouts: ctx.timeouts, cancelRequested: false, items,
  };
}
