/**
 * Placement as a pure function: nodes, a VM type, a count and a policy in; one host per instance
 * (or fewer, with the shortfall) out. No I/O, no clock: the runner supplies the view and executes
 * the placements. Eucalyptus's CC offered GREEDY and ROUNDROBIN; Ferry offers greedy and spread.
 */
import { countFitting, sub, type Resources } from '../shared/model/resources.js';
import type { SchedulePolicy } from './config.js';

export interface SchedulableNode {
  readonly host: string;
  readonly capacity: Resources;
  /** Instances on the node plus placements in flight to it. */
  readonly committed: Resources;
  /** Enabled, reachable and healthy (view.isSchedulable), and not excluded by the caller. */
  readonly schedulable: boolean;
}

export interface ScheduleInput {
  /** In registration order. */
  readonly nodes: readonly SchedulableNode[];
  readonly vmType: Resources;
  readonly count: number;
  readonly policy: SchedulePolicy;
}

export interface SchedulePlan {
  /** One host per placed instance, in placement order. */
  readonly placements: readonly string[];
  /** Instances that fit nowhere: count - placements.length. */
  readonly shortfall: number;
}

/** How many more of `vmType` a node can take (0 when not schedulable). */
export function slotsFor(node: SchedulableNode, vmType: Resources): number {
  return node.schedulable ? countFitting(vmType, sub(node.capacity, node.committed)) : 0;
}

export function schedule(input: ScheduleInput): SchedulePlan {
  const slots = input.nodes.map((n) => slotsFor(n, input.vmType));
  const placements: string[] = [];
  while (placements.length < input.count) {
    const i = input.policy === 'greedy' ? firstFit(slots) : mostFree(slots);
    if (i < 0) break;
    slots[i] = (slots[i] ?? 0) - 1;
    placements.push((input.nodes[i] as SchedulableNode).host);
  }
  return { placements, shortfall: input.count - placements.length };
}

/** greedy: the first node in registration order with room (fills one node before the next). */
function firstFit(slots: readonly number[]): number {
  return slots.findIndex((s) => s > 0);
}

/** spread: the node with the most room left for this type; ties go to registration order. */
function mostFree(slots: readonly number[]): number {
  let best = -1;
  slots.forEach((s, i) => {
    if (s > 0 && (best < 0 || s > (slots[best] ?? 0))) best = i;
  });
  return best;
}
