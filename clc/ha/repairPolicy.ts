/**
 * Auto-repair policy per instance and per cluster (issue 6), after Ganeti harep's autorepair tags:
 * each level names the most destructive repair HA may do to an instance, and when several levels set
 * one, the least destructive wins. `migrate` allows live migration off a DEGRADED host (drain);
 * `failover` also allows a restart elsewhere once the host is FENCED (evacuate); `off` allows neither.
 * Nothing set anywhere means `failover` (HA's purpose). Pure.
 */
import { z } from 'zod';

export const autoRepairSchema = z.enum(['off', 'migrate', 'failover']);
export type AutoRepair = z.infer<typeof autoRepairSchema>;

/** Least destructive first. */
const RANK: Readonly<Record<AutoRepair, number>> = { off: 0, migrate: 1, failover: 2 };

export const DEFAULT_AUTO_REPAIR: AutoRepair = 'failover';

/** The least destructive of the levels that set a policy (instance, cluster, ...). */
export function effectiveRepair(...levels: readonly (AutoRepair | undefined)[]): AutoRepair {
  const set = levels.filter((l): l is AutoRepair => l !== undefined);
  if (set.length === 0) return DEFAULT_AUTO_REPAIR;
  return set.reduce((a, b) => (RANK[b] < RANK[a] ? b : a));
}

/** What a repair does to an instance: drain = live migration, evacuate = restart elsewhere after fencing. */
export type RepairAction = 'drain' | 'evacuate';

const NEEDS: Readonly<Record<RepairAction, AutoRepair>> = { drain: 'migrate', evacuate: 'failover' };

export function permits(policy: AutoRepair, action: RepairAction): boolean {
  return RANK[policy] >= RANK[NEEDS[action]];
}

export interface InstancePolicy {
  readonly instanceId: string;
  readonly policy?: AutoRepair;
}

export interface RepairPlan {
  readonly repair: readonly string[];
  readonly skipped: readonly { readonly instanceId: string; readonly reason: string }[];
}

/** Splits a host's instances into those `action` may touch and those it must leave, with why. */
export function planRepairs(instances: readonly InstancePolicy[], clusterPolicy: AutoRepair | undefined, action: RepairAction): RepairPlan {
  const repair: string[] = [];
  const skipped: { instanceId: string; reason: string }[] = [];
  for (const i of instances) {
    const policy = effectiveRepair(i.policy, clusterPolicy);
    if (permits(policy, action)) repair.push(i.instanceId);
    else skipped.push({ instanceId: i.instanceId, reason: `auto-repair is '${policy}' (instance ${i.policy ?? 'unset'}, cluster ${clusterPolicy ?? 'unset'}); ${action} needs '${NEEDS[action]}'` });
  }
  return { repair, skipped };
}
