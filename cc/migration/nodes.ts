/** The partition as the migration logic reads it: one plain record per node, built from the view. Pure. */
import type { Resources } from '../../shared/model/resources.js';
import { committed, type ClusterView } from '../view.js';
import type { NodeMigrations } from './plans.js';

export interface MigrationNode extends NodeMigrations {
  /** nodeState 'enabled' (an unknown node is not). */
  readonly enabled: boolean;
  readonly reachable: boolean;
  readonly healthy: boolean;
  readonly capacity: Resources;
  /** Running instances and incoming records, as the NC counts them (view.committed). */
  readonly committed: Resources;
  /** The NC answered since the CC started: its plans and records are known, absence included. */
  readonly migrationsKnown: boolean;
  /** Host HA fences or has fenced it (ccSetFencedHosts): never a destination, whatever its NC says. */
  readonly fenced: boolean;
  /** When an administrator quarantined it (the NC's report; issue 18): never a destination, its drain refused. Absent otherwise. */
  readonly quarantinedSince?: number;
}

export function migrationNodes(view: ClusterView, fenced: ReadonlySet<string> = new Set()): MigrationNode[] {
  return view.entries.map((e) => ({
    host: e.node.host,
    fenced: fenced.has(e.node.host),
    ...(e.node.quarantine !== undefined ? { quarantinedSince: e.node.quarantine.since } : {}),
    enabled: e.node.nodeState === 'enabled',
    reachable: e.node.reachable,
    healthy: e.node.healthy,
    capacity: e.node.capacity,
    committed: committed(e.node),
    instances: e.node.instances,
    plans: e.plans,
    incoming: e.incoming,
    migrationsKnown: e.migrationsKnown,
  }));
}

/** Quarantined by an administrator (issue 18). */
export function quarantined(n: MigrationNode): boolean {
  return n.quarantinedSince !== undefined;
}

/** Reachable and healthy: a node the CC can talk to and whose hypervisor works. */
export function usable(n: MigrationNode): boolean {
  return n.reachable && n.healthy;
}
