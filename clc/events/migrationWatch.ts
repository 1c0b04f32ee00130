/**
 * What the CLC observes of migrations, pure: the plans its CCs report are compared with what was
 * last recorded of each (durable, in events.json), and the differences become events. Level-based
 * (STYLE, cluster-api's reconcile): a poll that is missed or a CLC that restarts loses nothing that
 * a later poll still sees; item states passed through between two polls are not invented.
 */
import { z } from 'zod';
import { FINAL_ITEM_STATES, itemStateSchema, type ItemState, type MigrationPlan } from '../../shared/protocol/migrationProtocol.js';
import type { EventDraft, EventKind } from './eventRecord.js';

export const trackedMigrationSchema = z.strictObject({
  partition: z.string(),
  source: z.string(),
  /** Item state last recorded, by instance id. */
  items: z.record(z.string(), itemStateSchema),
  /** Its outcome event was recorded. */
  final: z.boolean(),
});
export type TrackedMigration = z.infer<typeof trackedMigrationSchema>;
export type TrackedMigrations = Record<string, TrackedMigration>;

/** A plan as one CC reported it. */
export interface ObservedPlan {
  readonly partition: string;
  readonly plan: Pick<MigrationPlan, 'migrationId' | 'source' | 'cancelRequested'> & {
    readonly items: readonly Pick<MigrationPlan['items'][number], 'instanceId' | 'destination' | 'state' | 'error'>[];
  };
}

export const isFinal = (s: ItemState): boolean => FINAL_ITEM_STATES.includes(s);

/** The outcome kind of a plan whose items are all final. */
export function outcomeKind(states: readonly ItemState[], cancelRequested: boolean): EventKind {
  if (states.every((s) => s === 'completed')) return 'migration.completed';
  if (cancelRequested || states.includes('cancelled')) return 'migration.cancelled';
  return 'migration.rolled-back';
}

function countStates(states: readonly ItemState[]): Record<string, string> {
  const counts: Record<string, number> = {};
  for (const s of states) counts[s] = (counts[s] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).map(([k, n]) => [k, String(n)]));
}

/** The record of a plan just accepted (MigrateInstances): its items as planned. */
export function trackedOf(o: ObservedPlan, final = false): TrackedMigration {
  return { partition: o.partition, source: o.plan.source, items: Object.fromEntries(o.plan.items.map((i) => [i.instanceId, i.state])), final };
}

export interface Observation {
  readonly next: TrackedMigrations;
  readonly events: EventDraft[];
}

/**
 * Compares `tracked` with the plans of the partitions that answered (`answered`): item changes,
 * outcomes and plans first seen become events. A finished plan its answering CC no longer reports
 * is forgotten; anything of a partition that did not answer is left as it was.
 */
export function observeMigrations(tracked: Readonly<TrackedMigrations>, answered: ReadonlySet<string>, plans: readonly ObservedPlan[]): Observation {
  const next: TrackedMigrations = {};
  const events: EventDraft[] = [];
  const seen = new Set<string>();
  for (const o of plans) {
    const { plan, partition } = o;
    seen.add(plan.migrationId);
    const before = tracked[plan.migrationId];
    const states = plan.items.map((i) => i.state);
    const allFinal = states.every(isFinal);
    const base = { migrationId: plan.migrationId, partition, host: plan.source, actor: 'system' };
    if (!before) {
      events.push({
        ...base, kind: 'migration.planned',
        message: `migration ${plan.migrationId} from ${plan.source} first seen on a poll of its CC (${plan.items.length} item(s))`,
        details: { items: String(plan.items.length), observed: 'poll' },
      });
    }
    for (const i of plan.items) {
      const from = before?.items[i.instanceId];
      // A plan first seen: its queued items are what 'planned' says; anything further is news.
      if (from === i.state || (from === undefined && i.state === 'queued')) continue;
      events.push({
        ...base, kind: 'migration.item', instanceId: i.instanceId,
        message: `${i.instanceId}: ${from ?? 'unseen'} -> ${i.state}${i.destination !== '' ? ` (to ${i.destination})` : ''}${i.error !== undefined ? `: ${i.error}` : ''}`,
        details: { from: from ?? '', to: i.state, destination: i.destination, ...(i.error !== undefined ? { error: i.error } : {}) },
      });
    }
    const wasFinal = before?.final ?? false;
    if (allFinal && !wasFinal) {
      const kind = outcomeKind(states, plan.cancelRequested);
      events.push({ ...base, kind, message: `migration ${plan.migrationId} ${kind.slice('migration.'.length)}: ${states.length} item(s)`, details: countStates(states) });
    }
    next[plan.migrationId] = trackedOf(o, allFinal || wasFinal);
  }
  for (const [id, t] of Object.entries(tracked)) {
    if (seen.has(id)) continue;
    // Its CC answered without it: a finished plan aged out of the NC; an unfinished one may come back (a CC restart).
    if (answered.has(t.partition) && t.final) continue;
    next[id] = t;
  }
  return { next, events };
}

/** True while some recorded plan is not final: the watcher polls at its fast pace. */
export const anyUnfinished = (tracked: Readonly<TrackedMigrations>): boolean => Object.values(tracked).some((t) => !t.final);
