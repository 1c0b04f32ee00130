/**
 * Migration plans as the admin sees them (MigrateInstances, DescribeMigrations, CancelMigration).
 * Pure: a plan from a CC and the time in, a view out. The source NC holds the plan; the CC reports
 * it; the CLC only summarises it.
 */
import { FINAL_ITEM_STATES, type ItemState, type MigrationPlan, type PlanItem } from '../../shared/protocol/migrationProtocol.js';

/**
 * active      some item is not final yet.
 * completed   every item completed: every instance runs on its destination.
 * incomplete  every item is final and at least one did not complete (failed, rolled back, cancelled).
 */
export type MigrationStatus = 'active' | 'completed' | 'incomplete';

export interface MigrationItemView {
  readonly instanceId: string;
  readonly instanceType: string;
  /** '' when the instance could not be placed. */
  readonly destination: string;
  readonly state: ItemState;
  readonly attempts: number;
  readonly error: string | undefined;
  readonly queuedAt: number;
  readonly startedAt: number | undefined;
  readonly endedAt: number | undefined;
  /** The NC's figure once finished; while running, time since it started; undefined before. */
  readonly elapsedMs: number | undefined;
  readonly progress: PlanItem['progress'];
  readonly stats: PlanItem['stats'];
  /** A drain's cold move of a user-stopped instance (issue 18): re-homed, not started; never live. */
  readonly cold?: true;
}

export interface MigrationView {
  readonly migrationId: string;
  readonly partition: string;
  readonly source: string;
  readonly kind: MigrationPlan['request']['kind'];
  readonly destinations: readonly string[];
  readonly allowHosts: boolean;
  readonly reserveDestinations: boolean;
  readonly createdAt: number;
  readonly cancelRequested: boolean;
  /** False when the source NC did not answer the CC's last poll: this is its last report. */
  readonly sourceReachable: boolean;
  readonly status: MigrationStatus;
  readonly items: readonly MigrationItemView[];
}

export function isFinalItemState(s: ItemState): boolean {
  return FINAL_ITEM_STATES.includes(s);
}

export function migrationStatus(states: readonly ItemState[]): MigrationStatus {
  if (!states.every(isFinalItemState)) return 'active';
  return states.every((s) => s === 'completed') ? 'completed' : 'incomplete';
}

function itemView(i: PlanItem, now: number): MigrationItemView {
  const running = i.startedAt !== undefined ? Math.max(0, (i.endedAt ?? now) - i.startedAt) : undefined;
  return {
    instanceId: i.instanceId, instanceType: i.vmType.name, destination: i.destination, state: i.state, attempts: i.attempts,
    error: i.error, queuedAt: i.queuedAt, startedAt: i.startedAt, endedAt: i.endedAt,
    elapsedMs: i.stats?.elapsedMs ?? running, progress: i.progress, stats: i.stats, ...(i.cold === true ? { cold: true as const } : {}),
  };
}

/** A plan as its CC reported it; `sourceReachable` is absent from ccMigrateInstances' fresh plan. */
export function viewOfPlan(plan: MigrationPlan & { readonly sourceReachable?: boolean }, partition: string, now: number): MigrationView {
  const items = plan.items.map((i) => itemView(i, now));
  return {
    migrationId: plan.migrationId, partition, source: plan.source, kind: plan.request.kind,
    destinations: plan.request.destinations, allowHosts: plan.request.allowHosts, reserveDestinations: plan.request.reserveDestinations,
    createdAt: plan.createdAt, cancelRequested: plan.cancelRequested, sourceReachable: plan.sourceReachable ?? true,
    status: migrationStatus(items.map((i) => i.state)), items,
  };
}

export function compareMigrations(a: MigrationView, b: MigrationView): number {
  return a.createdAt - b.createdAt || (a.migrationId < b.migrationId ? -1 : a.migrationId > b.migrationId ? 1 : 0);
}
