/**
 * Reading migration plans and incoming records out of what the NCs report. Pure. A plan is believed
 * only from its own source NC (plan.source === the reporting host): that NC is its truth.
 */
import {
  FINAL_ITEM_STATES, type Incoming, type ItemState, type MigrationPlan, type PlanItem,
} from '../../shared/protocol/migrationProtocol.js';
import type { NcInstance } from '../../shared/protocol/ncProtocol.js';

/** What one NC reported that the migration logic reads. */
export interface NodeMigrations {
  readonly host: string;
  readonly instances: readonly NcInstance[];
  /** Plans this NC is the source of. */
  readonly plans: readonly MigrationPlan[];
  /** Incoming records this NC holds as a destination. */
  readonly incoming: readonly Incoming[];
}

export function isFinal(state: ItemState): boolean {
  return FINAL_ITEM_STATES.includes(state);
}

/** Committed: the VM already runs on the destination; nothing can be rolled back any more. */
export function isCommitted(state: ItemState): boolean {
  return state === 'cleaning' || state === 'completed';
}

export function isActivePlan(plan: MigrationPlan): boolean {
  return plan.items.some((i) => !isFinal(i.state));
}

/** Sources of unfinished drains: like disabled nodes, no destination unless a plan names them. */
export function drainingHosts(plans: readonly MigrationPlan[]): Set<string> {
  return new Set(plans.filter((p) => p.request.kind === 'drain' && isActivePlan(p)).map((p) => p.source));
}

export function itemKey(migrationId: string, instanceId: string): string {
  return `${migrationId}/${instanceId}`;
}

/** Every plan, from its source, oldest first (ties by id, so every reader sees one order). */
export function plansOf(nodes: readonly NodeMigrations[]): MigrationPlan[] {
  const seen = new Set<string>();
  const out: MigrationPlan[] = [];
  for (const n of nodes) {
    for (const p of n.plans) {
      if (p.source !== n.host || seen.has(p.migrationId)) continue;
      seen.add(p.migrationId);
      out.push(p);
    }
  }
  return out.sort((a, b) => a.createdAt - b.createdAt || (a.migrationId < b.migrationId ? -1 : a.migrationId > b.migrationId ? 1 : 0));
}

/** The record a destination holds for an item; a record in state 'none' holds nothing (contract). */
export function incomingAt(node: NodeMigrations | undefined, migrationId: string, instanceId: string): Incoming | undefined {
  return node?.incoming.find((r) => r.migrationId === migrationId && r.instanceId === instanceId && r.state !== 'none');
}

export function liveInstance(node: NodeMigrations | undefined, instanceId: string): NcInstance | undefined {
  return node?.instances.find((i) => i.instanceId === instanceId && i.state !== 'terminated');
}

/** The item of an instance in an active plan, if any (an instance is in at most one such item). */
export function activeItemOf(plans: readonly MigrationPlan[], instanceId: string): { plan: MigrationPlan; item: PlanItem } | undefined {
  for (const plan of plans) {
    const item = plan.items.find((i) => i.instanceId === instanceId && !isFinal(i.state));
    if (item) return { plan, item };
  }
  return undefined;
}

/** The newest item of an instance in any plan (final ones included). */
export function latestItemOf(plans: readonly MigrationPlan[], instanceId: string): { plan: MigrationPlan; item: PlanItem } | undefined {
  let found: { plan: MigrationPlan; item: PlanItem } | undefined;
  for (const plan of plans) {
    const item = plan.items.find((i) => i.instanceId === instanceId);
    if (item && (!found || !isFinal(item.state) || isFinal(found.item.state))) found = { plan, item };
  }
  return found;
}
