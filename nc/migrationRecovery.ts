/**
 * Level-based migration recovery (after cluster-api's reconcilers): from what is persisted and
 * what the hypervisor lists NOW, the work left to do. Run at start, after every hypervisor
 * reconnect ('start'), and on every describe, tick and hypervisor event ('poll'); a missed event or
 * a crash at any point is harmless because the next run sees the same state. Pure.
 *
 * | persisted                          | hypervisor here          | work                                     |
 * | source item migrating, no live job | any                      | join: migrateOut again, same id          |
 * |   awaiting a credential, no abort  | any                      | none: the CC re-issues it; commit starts |
 * | source item cleaning               | any                      | finish-cleaning                          |
 * | instance migrationState ≠ none     | any; no live item for it | release (migrationState none)            |
 * | incoming, any state                | domain running/stopped   | finalize (the VM arrived)                |
 * | incoming rolling back              | paused or absent         | finish-rollback                          |
 * | incoming preparing                 | paused or absent         | prepare-incoming (idempotent)            |
 * | incoming ready, at start/reconnect | absent                   | prepare-incoming (a restarted hypervisor |
 * |                                    |                          | lost the reservation; the CC rolls back) |
 * | incoming ready                     | paused                   | none: waiting for the stream             |
 */
import { classifyIncomingDomain } from './migrationDestination.js';
import { hypervisorMigrationId, isFinal } from './migrationSource.js';
import { observedState, type Observation } from './instanceView.js';
import type { NcSnapshot } from './ncStore.js';

export type RecoveryTrigger =
  /** NC start and every hypervisor reconnect: the hypervisor may have restarted. */
  | 'start'
  /** describe, tick, event: the hypervisor is the one the NC has been talking to. */
  | 'poll';

export type MigrationWork =
  /** Source: (re)attach to the hypervisor's migration; it starts it if it never began. */
  | { readonly kind: 'join'; readonly migrationId: string; readonly instanceId: string }
  | { readonly kind: 'finish-cleaning'; readonly migrationId: string; readonly instanceId: string }
  /** Source: an instance marked as migrating that no live item holds any more. */
  | { readonly kind: 'release'; readonly instanceId: string }
  | { readonly kind: 'finalize'; readonly instanceId: string }
  | { readonly kind: 'finish-rollback'; readonly instanceId: string }
  | { readonly kind: 'prepare-incoming'; readonly instanceId: string };

export interface RecoveryInput {
  readonly snapshot: NcSnapshot;
  /** A list() taken for this run; without one only source-side work is planned. */
  readonly observation: Observation | undefined;
  /** Hypervisor migration ids with a live migrateOut call in this process. */
  readonly liveJobs: ReadonlySet<string>;
  readonly trigger: RecoveryTrigger;
}

export function planMigrationWork(input: RecoveryInput): MigrationWork[] {
  const { snapshot, observation, liveJobs, trigger } = input;
  const work: MigrationWork[] = [];
  for (const plan of Object.values(snapshot.plans)) {
    for (const item of plan.items) {
      const { migrationId } = plan;
      const { instanceId } = item;
      // An item awaiting a credential has no migration in its hypervisor to join (its commit starts
      // one), unless it is being aborted: then the refused join ends it (the VM is here).
      const joinable = item.state === 'migrating' && (item.awaitingCredential !== true || item.abort !== undefined);
      if (joinable && !liveJobs.has(hypervisorMigrationId(migrationId, instanceId))) work.push({ kind: 'join', migrationId, instanceId });
      if (item.state === 'cleaning') work.push({ kind: 'finish-cleaning', migrationId, instanceId });
    }
  }
  for (const rec of Object.values(snapshot.instances)) {
    if (rec.migrationState === 'none') continue;
    const item = rec.migrationId ? snapshot.plans[rec.migrationId]?.items.find((i) => i.instanceId === rec.instanceId) : undefined;
    if (!item || isFinal(item.state)) work.push({ kind: 'release', instanceId: rec.instanceId });
  }
  if (!observation) return work;
  for (const inc of Object.values(snapshot.incoming)) {
    const id = inc.instanceId;
    const domain = classifyIncomingDomain(observedState(observation, id));
    if (domain === 'arrived') work.push({ kind: 'finalize', instanceId: id });
    else if (inc.rollingBack) work.push({ kind: 'finish-rollback', instanceId: id });
    else if (inc.state === 'preparing') work.push({ kind: 'prepare-incoming', instanceId: id });
    else if (domain === 'absent' && trigger === 'start') work.push({ kind: 'prepare-incoming', instanceId: id });
  }
  return work;
}
