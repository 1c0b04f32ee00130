/**
 * Generated tight drains for the planner's quality (issue 19 `plan-quality`): every scenario has a
 * complete placement by construction. Each destination's free room is carved into instances (VM
 * types from the catalogue, drawn until the room is nearly full), a share of the destinations is
 * carved, and the drain is the carved instances, shuffled. Seeded: the same seed gives the same cluster.
 */
import type { Resources } from '../shared/model/resources.js';
import type { PlacementInstance, PlacementNode } from '../cc/migration/placement.js';

const TYPES: readonly Resources[] = [
  { cores: 1, memoryMiB: 512, diskGiB: 5 }, { cores: 1, memoryMiB: 1024, diskGiB: 10 }, { cores: 2, memoryMiB: 2048, diskGiB: 10 },
  { cores: 2, memoryMiB: 4096, diskGiB: 20 }, { cores: 4, memoryMiB: 4096, diskGiB: 20 }, { cores: 4, memoryMiB: 8192, diskGiB: 40 },
];
const SHAPES: readonly Resources[] = [
  { cores: 8, memoryMiB: 16384, diskGiB: 200 }, { cores: 16, memoryMiB: 32768, diskGiB: 400 }, { cores: 12, memoryMiB: 24576, diskGiB: 300 },
];

export interface PlanScenario {
  readonly nodes: PlacementNode[];
  readonly drain: PlacementInstance[];
}

/** mulberry32: small, fast, seeded. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const fitsIn = (r: Resources, f: Resources): boolean => r.cores <= f.cores && r.memoryMiB <= f.memoryMiB && r.diskGiB <= f.diskGiB;

/** `hosts` destinations, about `instances` carved instances (a tight cluster: the carved hosts end nearly full). */
export function tightScenario(seed: number, hosts: number, instances: number): PlanScenario {
  const rnd = seeded(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const nodes: PlacementNode[] = [{ host: 'src', enabled: true, usable: true, capacity: { cores: 4096, memoryMiB: 1 << 24, diskGiB: 1 << 20 }, used: { cores: 0, memoryMiB: 0, diskGiB: 0 } }];
  const drain: PlacementInstance[] = [];
  for (let h = 0; h < hosts; h++) {
    const capacity = pick(SHAPES);
    // Everything but the carved room is used by others: the carved hosts are the only room there is.
    let free = { ...capacity };
    const carved: Resources[] = [];
    if (drain.length < instances) {
      for (let tries = 0; tries < 20 && drain.length + carved.length < instances; tries++) {
        const t = pick(TYPES);
        if (!fitsIn(t, free)) continue;
        carved.push(t);
        free = { cores: free.cores - t.cores, memoryMiB: free.memoryMiB - t.memoryMiB, diskGiB: free.diskGiB - t.diskGiB };
      }
    }
    const room = carved.reduce((a, t) => ({ cores: a.cores + t.cores, memoryMiB: a.memoryMiB + t.memoryMiB, diskGiB: a.diskGiB + t.diskGiB }), { cores: 0, memoryMiB: 0, diskGiB: 0 });
    nodes.push({
      host: `n${h}`, enabled: true, usable: true, capacity,
      used: { cores: capacity.cores - room.cores, memoryMiB: capacity.memoryMiB - room.memoryMiB, diskGiB: capacity.diskGiB - room.diskGiB },
    });
    for (const t of carved) drain.push({ instanceId: `i-${drain.length.toString(16).padStart(8, '0')}`, source: 'src', resources: t });
  }
  for (let i = drain.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [drain[i], drain[j]] = [drain[j] as PlacementInstance, drain[i] as PlacementInstance];
  }
  return { nodes, drain };
}

/** What the bench reports for plan-quality: the share placed by Ferry's planner and by round-robin, and the slowest plan. */
export interface PlanQuality {
  readonly ferryShare: number;
  readonly roundRobinShare: number;
  readonly worstMs: number;
  readonly medianMs: number;
}

/** Round-robin over the destinations, each instance to the next one (from where the last went) it fits. */
export function roundRobin(s: PlanScenario): number {
  const free = s.nodes.slice(1).map((n) => ({ cores: n.capacity.cores - n.used.cores, memoryMiB: n.capacity.memoryMiB - n.used.memoryMiB, diskGiB: n.capacity.diskGiB - n.used.diskGiB }));
  let at = 0;
  let placed = 0;
  for (const inst of s.drain) {
    for (let tried = 0; tried < free.length; tried++) {
      const j = (at + tried) % free.length;
      const f = free[j] as Resources;
      if (!fitsIn(inst.resources, f)) continue;
      free[j] = { cores: f.cores - inst.resources.cores, memoryMiB: f.memoryMiB - inst.resources.memoryMiB, diskGiB: f.diskGiB - inst.resources.diskGiB };
      at = j + 1;
      placed++;
      break;
    }
  }
  return placed;
}

/** `seeds` scenarios of `hosts` destinations and `instances` instances through `plan` (Ferry's planner). */
export function planQuality(plan: (s: PlanScenario) => number, seeds: number, hosts: number, instances: number): PlanQuality {
  let ferry = 0;
  let rr = 0;
  let total = 0;
  const times: number[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    const s = tightScenario(seed, hosts, instances);
    const t = performance.now();
    ferry += plan(s);
    times.push(performance.now() - t);
    rr += roundRobin(s);
    total += s.drain.length;
  }
  times.sort((a, b) => a - b);
  return { ferryShare: ferry / total, roundRobinShare: rr / total, worstMs: times[times.length - 1] ?? 0, medianMs: times[Math.floor(times.length / 2)] ?? 0 };
}
