/**
 * Pure migration placement: which destination each instance of a drain goes to, honouring the
 * allow/deny set and counting running VMs plus in-flight reservations, so two instances of one drain
 * never land on a node that only fits one (Eucalyptus reserved nothing and over-committed).
 * Largest-first with best-fit; when that leaves instances unplaced, an exact search (packing.ts)
 * looks for a placement of everything, and says when it has proven there is none.
 */
import { fits, sub, type Resources } from '../../shared/model/resources.js';
import { completeBins, fillBins, MAX_PACK_GROUPS, packAll, type PackBin, type PackItem } from './packing.js';

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
  /**
   * Set when some are unplaced: `infeasible`, the exact search proved no placement of every
   * instance exists; `gave-up`, it ran out of budget (a placement may exist).
   */
  readonly search?: 'infeasible' | 'gave-up';
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

  let search: PlacementResult['search'];
  if (placed.size < order.length) {
    const outcome = searchAll(nodes, order, eligible);
    if (outcome.kind === 'placed') {
      placed.clear();
      for (const [id, host] of outcome.at) placed.set(id, host);
    } else {
      search = outcome.kind;
    }
  }

  const placements: Placement[] = [];
  const unplaced: { instanceId: string; reason: UnplacedReason }[] = [];
  for (const inst of instances) {
    const dest = placed.get(inst.instanceId);
    if (dest) placements.push({ instanceId: inst.instanceId, source: inst.source, destination: dest });
    else unplaced.push({ instanceId: inst.instanceId, reason: whyUnplaced(inst, eligible.get(inst.instanceId) ?? []) });
  }
  return search === undefined ? { placements, unplaced } : { placements, unplaced, search };
}

/** packAll over the instances' eligibility groups (usually one: a drain's instances share a source). */
function searchAll(nodes: readonly PlacementNode[], order: readonly PlacementInstance[], eligible: ReadonlyMap<string, readonly PlacementNode[]>) {
  const groupOf = new Map<string, number>();
  const mask = new Map<string, number>();
  const items: PackItem[] = order.map((inst) => {
    const hosts = (eligible.get(inst.instanceId) ?? []).map((n) => n.host);
    const sig = hosts.join(',');
    let g = groupOf.get(sig);
    if (g === undefined) {
      g = groupOf.size;
      groupOf.set(sig, g);
      if (g < MAX_PACK_GROUPS) for (const h of hosts) mask.set(h, (mask.get(h) ?? 0) | (1 << g));
    }
    return { id: inst.instanceId, need: inst.resources, group: g };
  });
  if (groupOf.size > MAX_PACK_GROUPS) return { kind: 'gave-up' } as const;
  const bins: PackBin[] = nodes.filter((n) => mask.has(n.host)).map((n) => ({ host: n.host, free: sub(n.capacity, n.used), mask: mask.get(n.host) ?? 0 }));
  for (const largestFirst of [false, true]) {
    const filled = fillBins(items, bins, undefined, largestFirst);
    if (filled.size === items.length) return { kind: 'placed', at: filled } as const;
  }
  const completed = completeBins(items, bins);
  if (completed) return { kind: 'placed', at: completed } as const;
  return packAll(items, bins);
}

function whyUnplaced(inst: PlacementInstance, eligible: readonly PlacementNode[]): UnplacedReason {
  if (eligible.length === 0) return 'no-eligible-destination';
  return eligible.some((n) => fits(inst.resources, n.capacity)) ? 'insufficient-capacity' : 'too-large';
}
