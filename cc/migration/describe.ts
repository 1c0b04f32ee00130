/**
 * Plans as ccDescribeMigrations answers them: as their source NCs report them, with the phases only
 * the destinations (or the CC) know filled in for items the source still calls queued. Pure.
 */
import type { DescribedMigration } from '../../shared/protocol/ccProtocol.js';
import type { MigrationPlan } from '../../shared/protocol/migrationProtocol.js';
import type { Marks } from './marks.js';
import type { MigrationNode } from './nodes.js';
import { observedPhase } from './phases.js';
import { incomingAt, isActivePlan, itemKey, plansOf } from './plans.js';

export function describePlan(plan: MigrationPlan, nodes: readonly MigrationNode[], marks: Marks): DescribedMigration {
  const nodeOf = new Map(nodes.map((n) => [n.host, n]));
  const items = plan.items.map((item) => {
    if (item.state !== 'queued') return item;
    let phase = observedPhase(item, incomingAt(nodeOf.get(item.destination), plan.migrationId, item.instanceId));
    const mark = marks.get(itemKey(plan.migrationId, item.instanceId));
    if (phase === 'queued' && mark?.asked && mark.destination === item.destination) phase = 'preparing';
    return phase === 'queued' || phase === 'final' ? item : { ...item, state: phase };
  });
  return { ...plan, items, finished: !isActivePlan(plan), sourceReachable: nodeOf.get(plan.source)?.reachable ?? false };
}

export function describePlans(nodes: readonly MigrationNode[], marks: Marks): DescribedMigration[] {
  return plansOf(nodes).map((p) => describePlan(p, nodes, marks));
}
