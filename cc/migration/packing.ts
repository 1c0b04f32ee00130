/**
 * Exact search for a placement of every instance of a drain (pure; placement.ts calls it when its
 * greedy best-fit leaves some unplaced). Bin packing in several dimensions is NP-hard, so the search
 * is bounded by a work budget, but it is complete within it: it answers a placement of everything,
 * a proof that none exists, or that it gave up. Written by hand: no maintained JavaScript library
 * packs multi-dimensional bins with per-item eligibility (the solvers that do are native MILP/CP
 * engines). What keeps it small:
 *  - destinations with the same free room and the same eligibility are one class with a count: a
 *    choice is a class, never one of its interchangeable hosts;
 *  - states already proven to fail are remembered (instance index + the multiset of classes), which
 *    also removes the permutations of identical instances;
 *  - a state is cut when the room left, counting only destinations that could take at least the
 *    smallest remaining need, is less than the demand left in any dimension;
 *  - instances go largest first, each into the tightest class first.
 */
import { fits, sub, type Resources } from '../../shared/model/resources.js';

export interface PackItem {
  readonly id: string;
  readonly need: Resources;
  /** Index of the item's eligibility group (the destinations it may go to); at most 30 groups. */
  readonly group: number;
}

export interface PackBin {
  readonly host: string;
  readonly free: Resources;
  /** Bit g set: items of group g may go here. */
  readonly mask: number;
}

export type PackOutcome =
  | { readonly kind: 'placed'; readonly at: ReadonlyMap<string, string> }
  /** The search ran to its end: no placement of every item exists. */
  | { readonly kind: 'infeasible' }
  | { readonly kind: 'gave-up' };

/** Work units (classes looked at); under a second on the development machine. */
export const DEFAULT_PACK_BUDGET = 1_500_000;
export const MAX_PACK_GROUPS = 30;

interface BinClass {
  readonly key: string;
  readonly free: Resources;
  readonly mask: number;
  readonly hosts: string[];
}

const classKey = (f: Resources, mask: number): string => `${f.cores}/${f.memoryMiB}/${f.diskGiB}/${mask}`;
const ZERO: Resources = { cores: 0, memoryMiB: 0, diskGiB: 0 };
const add = (a: Resources, b: Resources): Resources => ({ cores: a.cores + b.cores, memoryMiB: a.memoryMiB + b.memoryMiB, diskGiB: a.diskGiB + b.diskGiB });
const min = (a: Resources, b: Resources): Resources => ({ cores: Math.min(a.cores, b.cores), memoryMiB: Math.min(a.memoryMiB, b.memoryMiB), diskGiB: Math.min(a.diskGiB, b.diskGiB) });

/** Leftover after placing, as the largest fraction left in any dimension: smaller is tighter. */
function slack(free: Resources, need: Resources): number {
  const left = sub(free, need);
  return Math.max(left.cores / Math.max(free.cores, 1), left.memoryMiB / Math.max(free.memoryMiB, 1), left.diskGiB / Math.max(free.diskGiB, 1));
}

/** `items` in the order to place them (largest first); every item must have a group below MAX_PACK_GROUPS. */
export function packAll(items: readonly PackItem[], bins: readonly PackBin[], budget = DEFAULT_PACK_BUDGET): PackOutcome {
  const n = items.length;
  // Suffix sums and componentwise minima of what is left to place from index k on.
  const demand: Resources[] = new Array<Resources>(n + 1).fill(ZERO);
  const smallest: Resources[] = new Array<Resources>(n + 1).fill({ cores: Infinity, memoryMiB: Infinity, diskGiB: Infinity });
  for (let k = n - 1; k >= 0; k--) {
    const need = (items[k] as PackItem).need;
    demand[k] = add(demand[k + 1] as Resources, need);
    smallest[k] = min(smallest[k + 1] as Resources, need);
  }
  const classes = new Map<string, BinClass>();
  const put = (host: string, free: Resources, mask: number): void => {
    const key = classKey(free, mask);
    let c = classes.get(key);
    if (!c) classes.set(key, (c = { key, free, mask, hosts: [] }));
    c.hosts.push(host);
  };
  const take = (c: BinClass): string => {
    const host = c.hosts.pop() as string;
    if (c.hosts.length === 0) classes.delete(c.key);
    return host;
  };
  const giveBack = (c: BinClass, host: string): void => {
    if (!classes.has(c.key)) classes.set(c.key, c);
    c.hosts.push(host);
  };
  // A destination that cannot take even the smallest need of any item never matters.
  for (const b of bins) if (b.mask !== 0 && fits(smallest[0] as Resources, b.free)) put(b.host, b.free, b.mask);

  let work = 0;
  let gaveUp = false;
  const failed = new Set<string>();
  const chosen = new Map<string, string>();

  const stateKey = (k: number): string => `${k}|${[...classes.values()].map((c) => `${c.key}x${c.hosts.length}`).sort().join(',')}`;

  const roomSuffices = (k: number): boolean => {
    let room = ZERO;
    for (const c of classes.values()) {
      if (!fits(smallest[k] as Resources, c.free)) continue;
      const count = c.hosts.length;
      room = add(room, { cores: c.free.cores * count, memoryMiB: c.free.memoryMiB * count, diskGiB: c.free.diskGiB * count });
    }
    return fits(demand[k] as Resources, room);
  };

  const go = (k: number): boolean => {
    if (k === n) return true;
    work += classes.size + 1;
    if (work > budget) {
      gaveUp = true;
      return false;
    }
    if (!roomSuffices(k)) return false;
    const key = stateKey(k);
    if (failed.has(key)) return false;
    const item = items[k] as PackItem;
    const bit = 1 << item.group;
    const candidates = [...classes.values()]
      .filter((c) => (c.mask & bit) !== 0 && fits(item.need, c.free))
      .sort((a, b) => slack(a.free, item.need) - slack(b.free, item.need) || (a.key < b.key ? -1 : 1));
    for (const c of candidates) {
      const host = take(c);
      const left = sub(c.free, item.need);
      put(host, left, c.mask);
      chosen.set(item.id, host);
      if (go(k + 1)) return true;
      chosen.delete(item.id);
      const after = classes.get(classKey(left, c.mask)) as BinClass;
      take(after);
      giveBack(c, host);
      if (gaveUp) return false;
    }
    failed.add(key);
    return false;
  };

  if (go(0)) return { kind: 'placed', at: chosen };
  return gaveUp ? { kind: 'gave-up' } : { kind: 'infeasible' };
}

/**
 * Bin-centric filling (after Gupta and Ho's minimum bin slack): destinations one at a time,
 * tightest room first, each given the subset of the items left that leaves it the least room (a
 * bounded subset search, largest items first, stopping at an exact fill). Where largest-first
 * item-centric packing strands items in a tight cluster whose rooms the items fill exactly, this
 * fills room by room. Returns what it placed (maybe not everything); pure.
 */
export function fillBins(items: readonly PackItem[], bins: readonly PackBin[], budgetPerBin = 20_000, largestFirst = false): Map<string, string> {
  const at = new Map<string, string>();
  const left = new Set(items.map((_, k) => k));
  const room = (f: Resources): number => f.cores + f.memoryMiB / 1024 + f.diskGiB / 16;
  const order = [...bins].sort((a, b) => (largestFirst ? -1 : 1) * (room(a.free) - room(b.free)) || (a.host < b.host ? -1 : 1));
  for (const bin of order) {
    if (left.size === 0) break;
    const cand = [...left].filter((k) => (bin.mask & (1 << (items[k] as PackItem).group)) !== 0 && fits((items[k] as PackItem).need, bin.free));
    if (cand.length === 0) continue;
    const scale = { cores: Math.max(bin.free.cores, 1), memoryMiB: Math.max(bin.free.memoryMiB, 1), diskGiB: Math.max(bin.free.diskGiB, 1) };
    const waste = (f: Resources): number => f.cores / scale.cores + f.memoryMiB / scale.memoryMiB + f.diskGiB / scale.diskGiB;
    let best: number[] = [];
    let bestWaste = waste(bin.free);
    let steps = 0;
    const pickNow: number[] = [];
    const go = (i: number, free: Resources): void => {
      if (++steps > budgetPerBin || bestWaste === 0) return;
      const w = waste(free);
      if (w < bestWaste) { bestWaste = w; best = [...pickNow]; }
      for (let j = i; j < cand.length; j++) {
        const k = cand[j] as number;
        const need = (items[k] as PackItem).need;
        if (!fits(need, free)) continue;
        // Identical items: taking the second without the first only repeats a subset already tried.
        if (j > i && sameNeed(need, (items[cand[j - 1] as number] as PackItem).need) && !pickNow.includes(cand[j - 1] as number)) continue;
        pickNow.push(k);
        go(j + 1, sub(free, need));
        pickNow.pop();
        if (steps > budgetPerBin || bestWaste === 0) return;
      }
    };
    go(0, bin.free);
    for (const k of best) {
      at.set((items[k] as PackItem).id, bin.host);
      left.delete(k);
    }
  }
  return at;
}

const sameNeed = (a: Resources, b: Resources): boolean => a.cores === b.cores && a.memoryMiB === b.memoryMiB && a.diskGiB === b.diskGiB;

/**
 * Bin completion (after Korf): destinations in order, tightest room first; for each, the few subsets
 * of the items left that leave it the least room (best first, the empty one last), backtracking to
 * the next subset when the rest cannot be placed; a state already failed (destination index + the
 * items left) is not searched again. Bounded by `budget` work units; not complete (only `perBin`
 * subsets per destination), so a failure here proves nothing: packAll decides then.
 */
export function completeBins(items: readonly PackItem[], bins: readonly PackBin[], budget = 2_000_000, perBin = 6): Map<string, string> | undefined {
  const room = (f: Resources): number => f.cores + f.memoryMiB / 1024 + f.diskGiB / 16;
  const smallest = items.reduce<Resources>((a, it) => min(a, it.need), { cores: Infinity, memoryMiB: Infinity, diskGiB: Infinity });
  const order = bins.filter((b) => fits(smallest, b.free)).sort((a, b) => room(a.free) - room(b.free) || (a.host < b.host ? -1 : 1));
  // One level of recursion per destination: beyond this many that could take something, give up here.
  if (order.length > MAX_COMPLETION_BINS) return undefined;
  // Room of the destinations from index i on.
  const after: Resources[] = new Array<Resources>(order.length + 1).fill(ZERO);
  for (let i = order.length - 1; i >= 0; i--) after[i] = add(after[i + 1] as Resources, (order[i] as PackBin).free);
  const left = new Set(items.map((_, k) => k));
  let demand = items.reduce((a, it) => add(a, it.need), ZERO);
  const at = new Map<string, string>();
  const failed = new Set<string>();
  let work = 0;

  const subsetsFor = (bin: PackBin): number[][] => {
    const cand = [...left].filter((k) => (bin.mask & (1 << (items[k] as PackItem).group)) !== 0 && fits((items[k] as PackItem).need, bin.free));
    const scale = { cores: Math.max(bin.free.cores, 1), memoryMiB: Math.max(bin.free.memoryMiB, 1), diskGiB: Math.max(bin.free.diskGiB, 1) };
    const waste = (f: Resources): number => f.cores / scale.cores + f.memoryMiB / scale.memoryMiB + f.diskGiB / scale.diskGiB;
    const found = new Map<string, { pick: number[]; w: number }>();
    const pick: number[] = [];
    let steps = 0;
    const go = (i: number, free: Resources): void => {
      if (++steps > 5000) return;
      work++;
      if (pick.length > 0) {
        const sig = pick.map((k) => needKey((items[k] as PackItem).need)).sort().join(';');
        const w = waste(free);
        const had = found.get(sig);
        if (!had || had.w > w) found.set(sig, { pick: [...pick], w });
      }
      for (let j = i; j < cand.length; j++) {
        const k = cand[j] as number;
        const need = (items[k] as PackItem).need;
        if (!fits(need, free)) continue;
        if (j > i && sameNeed(need, (items[cand[j - 1] as number] as PackItem).need) && !pick.includes(cand[j - 1] as number)) continue;
        pick.push(k);
        go(j + 1, sub(free, need));
        pick.pop();
      }
    };
    go(0, bin.free);
    return [...found.values()].sort((a, b) => a.w - b.w).slice(0, perBin).map((x) => x.pick).concat([[]]);
  };

  const go = (i: number): boolean => {
    if (left.size === 0) return true;
    if (i === order.length || work > budget || !fits(demand, after[i] as Resources)) return false;
    const key = `${i}|${[...left].map((k) => needKey((items[k] as PackItem).need) + (items[k] as PackItem).group).sort().join(';')}`;
    if (failed.has(key)) return false;
    const bin = order[i] as PackBin;
    for (const pick of subsetsFor(bin)) {
      for (const k of pick) {
        left.delete(k);
        demand = sub(demand, (items[k] as PackItem).need);
        at.set((items[k] as PackItem).id, bin.host);
      }
      if (go(i + 1)) return true;
      for (const k of pick) {
        left.add(k);
        demand = add(demand, (items[k] as PackItem).need);
        at.delete((items[k] as PackItem).id);
      }
      if (work > budget) return false;
    }
    failed.add(key);
    return false;
  };
  return go(0) ? at : undefined;
}

const MAX_COMPLETION_BINS = 4000;
const needKey = (r: Resources): string => `${r.cores}/${r.memoryMiB}/${r.diskGiB}`;
