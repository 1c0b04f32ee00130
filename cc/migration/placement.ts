/**
 * Pure migration placement: which destination each instance of a drain goes to, honouring the
 * allow/deny set and counting running VMs plus in-flight reservations, so two instances of one drain
 * never land on a node that only fits one (Eucalyptus reserved nothing and over-committed).
 * Largest-first with best-fit; when that leaves instances unplaced, a bounded backtracking search
 * looks for a placement of everything before giving up.
 */
import { fits, sub, add, type Resources } from '../../shared/model/resources.js';

export interface PlacementNode {
  readonly host: string;
  readonly enabled: boolean;
  /** Reachable and healthy: a node we cannot talk to is never a destination. */
  readonly usable: boolean;
  readonly capacity: Resources;
  /** Running instances plus reservations already held by other migrations. */
  readonly used: Resources;
}

export interface PlacementInstance {
  readonly instanceId: string;
  readonly source: string;
  readonly resources: Resources;
}

export interface DestinationFilter {
  /** DestinationHost.N */
  readonly hosts: readonly string[];
  /** true: hosts are the only allowed destinations; false: hosts are forbidden. Ignored when hosts is empty. */
  readonly allow: boolean;
}

export type UnplacedReason =
  /** No node passes the allow/deny set, state and health rules. */
  | 'no-eligible-destination'
  /** Larger than any eligible destination's total capacity. */
  | 'too-large'
  /** Would fit an empty destination, but the eligible ones are too full. */
  | 'insufficient-capacity';

export interface Placement {
  readonly instanceId: string;
  readonly source: string;
  readonly destination: string;
}

export interface PlacementResult {
  readonly placements: readonly Placement[];
  readonly unplaced: readonly { readonly instanceId: string; readonly reason: UnplacedReason }[];
}

/** Destinations for an instance on `source`: enabled usable nodes, or disabled ones only when explicitly allowed. */
export function eligibleDestinations(nodes: readonly PlacementNode[], source: string, filter: DestinationFilter): PlacementNode[] {
  const named = new Set(filter.hosts);
  return nodes.filter((n) => {
    if (n.host === source || !n.usable) return false;
    if (named.size === 0) return n.enabled;
    if (filter.allow) return named.has(n.host);
    return n.enabled && !named.has(n.host);
  });
}

const SEARCH_BUDGET = 20_000;

/** Largest first: memory, then cores, then disk; ties by id so the result is deterministic. */
function bySizeDesc(a: PlacementInstance, b: PlacementInstance): number {
  return b.resources.memoryMiB - a.resources.memoryMiB || b.resources.cores - a.resources.cores
    || b.resources.diskGiB - a.resources.diskGiB || (a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0);
}

/** Leftover after placing, as the largest fraction left in any dimension: smaller is a tighter fit. */
function slack(free: Resources, need: Resources, cap: Resources): number {
  const left = sub(free, need);
  return Math.max(left.cores / Math.max(cap.cores, 1), left.memoryMiB / Math.max(cap.memoryMiB, 1), left.diskGiB / Math.max(cap.diskGiB, 1));
}

export function planPlacement(nodes: readonly PlacementNode[], instances: readonly PlacementInstance[], filter: DestinationFilter): PlacementResult {
  const free = new Map(nodes.map((n) => [n.host, sub(n.capacity, n.used)]));
  const load = new Map(nodes.map((n) => [n.host, 0]));
  const order = [...instances].sort(bySizeDesc);
  const eligible = new Map(order.map((i) => [i.instanceId, eligibleDestinations(nodes, i.source, filter)]));
  const placed = new Map<string, string>();

  for (const inst of order) {
    let best: PlacementNode | undefined;
    let bestScore = Infinity;
    for (const n of eligible.get(inst.instanceId) ?? []) {
      const f = free.get(n.host) as Resources;
      if (!fits(inst.resources, f)) continue;
      // Best fit first; the less-loaded node (fewer placements from this plan) breaks ties, to spread.
      const score = slack(f, inst.resources, n.capacity) * 1000 + (load.get(n.host) ?? 0);
      if (score < bestScore) { best = n; bestScore = score; }
    }
    if (best) {
      placed.set(inst.instanceId, best.host);
      free.set(best.host, sub(free.get(best.host) as Resources, inst.resources));
      load.set(best.host, (load.get(best.host) ?? 0) + 1);
    }
  }

  if (placed.size < order.length) {
    const complete = searchComplete(order, eligible, new Map(nodes.map((n) => [n.host, sub(n.capacity, n.used)])));
    if (complete) {
      placed.clear();
      for (const [id, host] of complete) placed.set(id, host);
    }
  }

  const placements: Placement[] = [];
  const unplaced: { instanceId: string; reason: UnplacedReason }[] = [];
  for (const inst of instances) {
    const dest = placed.get(inst.instanceId);
    if (dest) placements.push({ instanceId: inst.instanceId, source: inst.source, destination: dest });
    else unplaced.push({ instanceId: inst.instanceId, reason: whyUnplaced(inst, eligible.get(inst.instanceId) ?? []) });
  }
  return { placements, unplaced };
}

function whyUnplaced(inst: PlacementInstance, eligible: readonly PlacementNode[]): UnplacedReason {
  if (eligible.length === 0) return 'no-eligible-destination';
  return eligible.some((n) => fits(inst.resources, n.capacity)) ? 'insufficient-capacity' : 'too-large';
}

/** Depth-first search for a placement of every instance, within a fixed step budget (bin packing is NP-hard). */
function searchComplete(
  order: readonly PlacementInstance[], eligible: ReadonlyMap<string, readonly PlacementNode[]>, free: Map<string, Resources>,
): Map<string, string> | undefined {
  let steps = 0;
  const chosen = new Map<string, string>();
  const go = (k: number): boolean => {
    if (k === order.length) return true;
    if (++steps > SEARCH_BUDGET) return false;
    const inst = order[k] as PlacementInstance;
    const tried = new Set<string>();
    for (const n of eligible.get(inst.instanceId) ?? []) {
      const f = free.get(n.host) as Resources;
      // Two destinations with the same free space are interchangeable here: try one of them.
      const shape = `${f.cores}/${f.memoryMiB}/${f.diskGiB}`;
      if (!fits(inst.resources, f) || tried.has(shape)) continue;
      tried.add(shape);
      free.set(n.host, sub(f, inst.resources));
      chosen.set(inst.instanceId, n.host);
      if (go(k + 1)) return true;
      free.set(n.host, add(free.get(n.host) as Resources, inst.resources));
      chosen.delete(inst.instanceId);
    }
    return false;
  };
  return go(0) ? chosen : undefined;
}
