/**
 * Migration plans as the source keeps and shows them: how long finished plans stay (so
 * DescribeMigrations works after completion and after a CC restart), and the contract's view of a
 * stored plan. Pure.
 */
import type { MigrationPlan, PlanItem } from '../shared/protocol/migrationProtocol.js';
import { planFinished } from './migrationSource.js';
import type { StoredPlan } from './ncStore.js';

export interface PlanRetention {
  /** How long a finished plan is kept after its last item ended, ms of the injected clock. */
  readonly ttlMs: number;
  /** At most this many finished plans; the oldest go first. */
  readonly maxCount: number;
}

/** Long enough for DescribeMigrations after a CC restart; the count bounds nc.json and describe. */
export const DEFAULT_PLAN_RETENTION: PlanRetention = Object.freeze({ ttlMs: 6 * 60 * 60 * 1000, maxCount: 50 });

/** Drops finished plans older than the TTL or beyond the count; active plans are never dropped. */
export function pruneFinishedPlans(plans: Record<string, StoredPlan>, now: number, policy: PlanRetention): string[] {
  const finished = Object.values(plans)
    .filter((p) => p.finishedAt !== undefined && planFinished(p))
    .sort((a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0) || a.migrationId.localeCompare(b.migrationId));
  const dropped = finished
    .filter((p, i) => now - (p.finishedAt ?? 0) >= policy.ttlMs || i >= policy.maxCount)
    .map((p) => p.migrationId);
  for (const id of dropped) delete plans[id];
  return dropped;
}

type Progress = NonNullable<PlanItem['progress']>;

/** The plan as the contract shows it: private fields dropped, live progress of migrating items added. */
export function planView(plan: StoredPlan, liveProgress: (instanceId: string) => Progress | undefined): MigrationPlan {
  return {
    migrationId: plan.migrationId,
    source: plan.source,
    createdAt: plan.createdAt,
    request: structuredClone(plan.request),
    limits: { ...plan.limits },
    timeouts: { ...plan.timeouts },
    cancelRequested: plan.cancelRequested,
    items: plan.items.map((i) => {
      const progress = (i.state === 'migrating' ? liveProgress(i.instanceId) : undefined) ?? i.progress;
      const item: PlanItem = {
        instanceId: i.instanceId, vmType: { ...i.vmType }, destination: i.destination, state: i.state,
        attempts: i.attempts, queuedAt: i.queuedAt,
      };
      if (i.error !== undefined) item.error = i.error;
      if (i.startedAt !== undefined) item.startedAt = i.startedAt;
      if (i.endedAt !== undefined) item.endedAt = i.endedAt;
      if (progress) item.progress = { ...progress };
      if (i.stats) item.stats = { ...i.stats };
      if (i.credentialGeneration !== undefined) item.credentialGeneration = i.credentialGeneration;
      if (i.awaitingCredential === true) item.awaitingCredential = true;
      if (i.cold === true) item.cold = true;
      return item;
    }),
  };
}

