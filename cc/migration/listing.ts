/**
 * Instances as the CC lists them while migrations run. Pure. During a migration both NCs may report
 * the instance; it is listed once: from the source until its item completes, from the destination
 * afterwards, and carries where it moves from and to while its item is not final.
 */
import type { MigrationState } from '../../shared/protocol/common.js';
import type { NcInstance } from '../../shared/protocol/ncProtocol.js';
import { generationOf } from '../moveRepair.js';
import { listedMigrationState, observedPhase } from './phases.js';
import { incomingAt, isFinal, latestItemOf, plansOf, type NodeMigrations } from './plans.js';

const isLive = (i: NcInstance): boolean => i.state !== 'terminated' && i.state !== 'shutting-down';

export interface ListedInstance {
  readonly host: string;
  readonly instance: NcInstance;
  readonly migrationState: MigrationState;
  /** '' unless the instance is in an unfinished item. */
  readonly migrationSource: string;
  readonly migrationDestination: string;
}

/** The host whose copy of a migrating instance stands for it, or undefined when it is in no plan. */
export function preferredHost(nodes: readonly NodeMigrations[], instanceId: string): string | undefined {
  const found = latestItemOf(plansOf(nodes), instanceId);
  if (!found) return undefined;
  return found.item.state === 'completed' ? found.item.destination : found.plan.source;
}

export function listInstancesWithMigrations(nodes: readonly NodeMigrations[], fenced: ReadonlySet<string> = new Set()): ListedInstance[] {
  const plans = plansOf(nodes);
  const nodeOf = new Map(nodes.map((n) => [n.host, n]));
  const holders = new Map<string, Set<string>>();
  for (const n of nodes) for (const i of n.instances) holders.set(i.instanceId, (holders.get(i.instanceId) ?? new Set()).add(n.host));
  // Host HA restarted it elsewhere: the fenced host's copy is obsolete, whatever an old plan says.
  const heldOutsideFence = (id: string): boolean => [...(holders.get(id) ?? [])].some((h) => !fenced.has(h));
  // A copy being destroyed (an obsolete one on a host back from fencing) never stands for an instance
  // that runs elsewhere: it is listed only while no live copy exists.
  const liveSomewhere = new Set(nodes.flatMap((n) => n.instances.filter(isLive).map((i) => i.instanceId)));
  const liveOn = new Set(nodes.flatMap((n) => n.instances.filter(isLive).map((i) => `${i.instanceId} ${n.host}`)));
  // A re-homed copy stands for its instance over the copy it replaced, which move repair forgets (cc/moveRepair.ts).
  const replaced = replacedCopies(nodes);

  const out: ListedInstance[] = [];
  for (const n of nodes) {
    for (const instance of n.instances) {
      if (fenced.has(n.host) && heldOutsideFence(instance.instanceId)) continue;
      if (!isLive(instance) && liveSomewhere.has(instance.instanceId)) continue;
      if ((replaced.get(`${instance.instanceId} ${n.host}`) ?? -1) > generationOf(instance)) continue;
      const found = latestItemOf(plans, instance.instanceId);
      if (!found) {
        out.push({ host: n.host, instance, migrationState: instance.migrationState, migrationSource: '', migrationDestination: '' });
        continue;
      }
      const { plan, item } = found;
      const preferred = item.state === 'completed' ? item.destination : plan.source;
      const copies = holders.get(instance.instanceId) ?? new Set();
      // The preferred copy wins only while it lives: a stopped instance re-homed after a completed migration
      // (StartInstances, a drain's cold move) leaves a dead copy on the old destination (found by sim seed 2).
      const preferredLives = liveOn.has(`${instance.instanceId} ${preferred}`) || !isLive(instance);
      if (copies.size > 1 && copies.has(preferred) && n.host !== preferred && !fenced.has(preferred) && preferredLives) continue;
      const moving = !isFinal(item.state);
      const phase = observedPhase(item, incomingAt(nodeOf.get(item.destination), plan.migrationId, item.instanceId));
      out.push({
        host: n.host, instance,
        migrationState: moving ? listedMigrationState(instance.migrationState, phase) : instance.migrationState,
        migrationSource: moving ? plan.source : '',
        migrationDestination: moving ? item.destination : '',
      });
    }
  }
  return out;
}

/** `id host` → the greatest generation of a copy with a domain that was re-homed from that host (cc/moveRepair.ts). */
function replacedCopies(nodes: readonly NodeMigrations[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const n of nodes) {
    for (const i of n.instances) {
      if (i.moved === undefined || (i.state !== 'running' && i.state !== 'stopped') || i.moved.from === n.host) continue;
      const key = `${i.instanceId} ${i.moved.from}`;
      out.set(key, Math.max(out.get(key) ?? -1, i.moved.generation));
    }
  }
  return out;
}
