/**
 * What active migration plans hold on their destinations, from the plans and records the NCs report.
 * Pure. An item holds its vmType on its destination from planning until the destination itself
 * accounts for it: once the destination holds an Incoming record for it (or already runs it), the
 * destination NC's own `used` counts it and counting it here too would count it twice.
 */
import { add, ZERO, type Resources } from '../../shared/model/resources.js';
import { incomingAt, isActivePlan, isFinal, itemKey, liveInstance, plansOf, type NodeMigrations } from './plans.js';

export interface Reservations {
  /** Resources reserved per destination host, on top of what its NC reports as used. */
  readonly byHost: ReadonlyMap<string, Resources>;
  /** Destinations of active plans with reserveDestinations: no new instances until the plan ends. */
  readonly reservedHosts: ReadonlySet<string>;
}

/** `except`: an item key (plans.itemKey) left out, for re-checking that item's own destination. */
export function reservationsOf(nodes: readonly NodeMigrations[], except?: string): Reservations {
  const byHost = new Map<string, Resources>();
  const reservedHosts = new Set<string>();
  const nodeOf = new Map(nodes.map((n) => [n.host, n]));
  for (const plan of plansOf(nodes)) {
    if (!isActivePlan(plan)) continue;
    if (plan.request.reserveDestinations) {
      for (const item of plan.items) if (item.destination !== '') reservedHosts.add(item.destination);
      if (plan.request.allowHosts) for (const h of plan.request.destinations) if (h !== plan.source) reservedHosts.add(h);
    }
    for (const item of plan.items) {
      if (isFinal(item.state) || item.destination === '' || itemKey(plan.migrationId, item.instanceId) === except) continue;
      const dest = nodeOf.get(item.destination);
      if (incomingAt(dest, plan.migrationId, item.instanceId) || liveInstance(dest, item.instanceId)) continue;
      byHost.set(item.destination, add(byHost.get(item.destination) ?? ZERO, item.vmType));
    }
  }
  return { byHost, reservedHosts };
}

export function reservedOn(r: Reservations, host: string): Resources {
  return r.byHost.get(host) ?? ZERO;
}
