/**
 * The exact and bin-centric searches behind the planner (cc/migration/packing.ts): a placement of
 * everything where one exists (checked on generated tight clusters whose rooms the drain fills
 * exactly by construction), a proof where none does, and never more than a destination holds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { completeBins, fillBins, packAll, type PackBin, type PackItem } from '../../../cc/migration/packing.js';
import { planPlacement } from '../../../cc/migration/placement.js';
import { add, fits, ZERO, type Resources } from '../../../shared/model/resources.js';
import { tightScenario } from '../../../bench/planScenarios.js';

const R = (cores: number, memoryMiB: number, diskGiB = 10): Resources => ({ cores, memoryMiB, diskGiB });
const item = (id: string, need: Resources, group = 0): PackItem => ({ id, need, group });
const bin = (host: string, free: Resources, mask = 1): PackBin => ({ host, free, mask });

function overCommitted(at: ReadonlyMap<string, string>, items: readonly PackItem[], bins: readonly PackBin[]): string[] {
  const used = new Map<string, Resources>();
  for (const it of items) {
    const h = at.get(it.id);
    if (h !== undefined) used.set(h, add(used.get(h) ?? ZERO, it.need));
  }
  return bins.filter((b) => !fits(used.get(b.host) ?? ZERO, b.free)).map((b) => b.host);
}

describe('packAll', () => {
  it('proves there is no placement when there is none (the sums fit, the shapes do not)', () => {
    // 3+3+2 cores into 4 and 4: the totals match, yet a 3 and a 3 cannot share a 4.
    const items = [item('a', R(3, 1)), item('b', R(3, 1)), item('c', R(2, 1))];
    expect(packAll(items, [bin('x', R(4, 10)), bin('y', R(4, 10))])).toEqual({ kind: 'infeasible' });
  });

  it('gives up, never guesses, when its budget runs out', () => {
    const items = Array.from({ length: 12 }, (_, i) => item(`i${i}`, R(3, 1, 1)));
    const bins = Array.from({ length: 9 }, (_, i) => bin(`b${i}`, R(4, 100)));
    expect(packAll(items, bins, 3).kind).toBe('gave-up');
    // With room to work, the same case is proven impossible (nine 4-core rooms hold nine 3-core items).
    expect(packAll(items, bins).kind).toBe('infeasible');
  });

  it('honours eligibility groups', () => {
    const r = packAll([item('a', R(2, 1), 0), item('b', R(2, 1), 1)], [bin('x', R(2, 10), 0b01), bin('y', R(2, 10), 0b10)]);
    expect(r).toEqual({ kind: 'placed', at: new Map([['a', 'x'], ['b', 'y']]) });
  });

  it('agrees with brute force on small cases and never over-commits (property)', () => {
    const need = fc.record({ cores: fc.integer({ min: 1, max: 4 }), memoryMiB: fc.integer({ min: 1, max: 4 }), diskGiB: fc.constant(1) });
    fc.assert(fc.property(fc.array(need, { minLength: 1, maxLength: 6 }), fc.array(need.map((r) => R(r.cores * 2, r.memoryMiB * 2, 4)), { minLength: 1, maxLength: 4 }), (needs, frees) => {
      const items = needs.map((n, i) => item(`i${i}`, n)).sort((a, b) => b.need.memoryMiB - a.need.memoryMiB || b.need.cores - a.need.cores);
      const bins = frees.map((f, i) => bin(`b${i}`, f));
      const brute = (k: number, free: Resources[]): boolean => k === items.length
        || free.some((f, j) => fits(items[k]!.need, f) && brute(k + 1, free.map((x, m) => (m === j ? { cores: x.cores - items[k]!.need.cores, memoryMiB: x.memoryMiB - items[k]!.need.memoryMiB, diskGiB: x.diskGiB - items[k]!.need.diskGiB } : x))));
      const r = packAll(items, bins);
      expect(r.kind).toBe(brute(0, frees) ? 'placed' : 'infeasible');
      if (r.kind === 'placed') expect(overCommitted(r.at, items, bins)).toEqual([]);
    }), { numRuns: 300 });
  });
});

describe('bin-centric filling and bin completion', () => {
  it('fill exactly the rooms a tight drain was carved from, where largest-first strands some', () => {
    const s = tightScenario(3, 200, 40);
    const items = s.drain.map((d) => item(d.instanceId, d.resources));
    const bins = s.nodes.slice(1).map((n) => bin(n.host, { cores: n.capacity.cores - n.used.cores, memoryMiB: n.capacity.memoryMiB - n.used.memoryMiB, diskGiB: n.capacity.diskGiB - n.used.diskGiB }));
    const filled = fillBins(items, bins);
    expect(overCommitted(filled, items, bins)).toEqual([]);
    const completed = completeBins(items, bins);
    expect(completed?.size).toBe(items.length);
    expect(overCommitted(completed ?? new Map(), items, bins)).toEqual([]);
  });
});

describe('planPlacement on generated tight clusters (a placement exists by construction)', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %i: 50 instances over 1,000 destinations are all placed, none over-committed', (seed) => {
    const s = tightScenario(seed, 1000, 50);
    const r = planPlacement(s.nodes, s.drain, { hosts: [], allow: true });
    expect(r.unplaced).toEqual([]);
    const need = new Map(s.drain.map((d) => [d.instanceId, d.resources]));
    const used = new Map<string, Resources>();
    for (const p of r.placements) used.set(p.destination, add(used.get(p.destination) ?? ZERO, need.get(p.instanceId) ?? ZERO));
    for (const n of s.nodes) expect(fits(add(n.used, used.get(n.host) ?? ZERO), n.capacity)).toBe(true);
  });
});
