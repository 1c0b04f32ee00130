import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { planPlacement, eligibleDestinations, type PlacementNode, type PlacementInstance } from '../../../cc/migration/placement.js';
import { fits, sub, add, ZERO, type Resources } from '../../../shared/model/resources.js';

const R = (cores: number, memoryMiB: number, diskGiB = 10): Resources => ({ cores, memoryMiB, diskGiB });
const node = (host: string, cap: Resources, used: Resources = ZERO, enabled = true, usable = true): PlacementNode =>
  ({ host, capacity: cap, used, enabled, usable });
const inst = (instanceId: string, source: string, resources: Resources): PlacementInstance => ({ instanceId, source, resources });

describe('eligibleDestinations', () => {
  const nodes = [node('src', R(8, 8192)), node('a', R(8, 8192)), node('b', R(8, 8192), ZERO, false), node('c', R(8, 8192), ZERO, true, false), node('d', R(8, 8192))];
  it.each([
    ['no set: enabled, usable, not the source', { hosts: [], allow: true }, ['a', 'd']],
    ['allow set: exactly the named usable hosts, disabled ones included', { hosts: ['b', 'c', 'src'], allow: true }, ['b']],
    ['deny set: enabled usable hosts not named', { hosts: ['a'], allow: false }, ['d']],
    ['deny set naming a disabled host changes nothing for it', { hosts: ['b'], allow: false }, ['a', 'd']],
  ])('%s', (_n, filter, expected) => {
    expect(eligibleDestinations(nodes, 'src', filter).map((n) => n.host)).toEqual(expected);
  });
});

describe('planPlacement', () => {
  it('counts reservations already held: two instances never land on a node that fits one', () => {
    const nodes = [node('src', R(8, 4096)), node('a', R(4, 4096), R(0, 3072, 0)), node('b', R(4, 4096))];
    const r = planPlacement(nodes, [inst('i-1', 'src', R(1, 1024)), inst('i-2', 'src', R(1, 1024))], { hosts: [], allow: true });
    expect(r.unplaced).toEqual([]);
    expect(r.placements.map((p) => p.destination).sort()).toEqual(['a', 'b']);
  });

  it('packs largest first with best fit', () => {
    const nodes = [node('src', R(16, 16384)), node('big', R(8, 8192)), node('small', R(2, 2048))];
    const r = planPlacement(nodes, [inst('i-s', 'src', R(1, 2048)), inst('i-l', 'src', R(4, 6144))], { hosts: [], allow: true });
    expect(Object.fromEntries(r.placements.map((p) => [p.instanceId, p.destination]))).toEqual({ 'i-l': 'big', 'i-s': 'small' });
  });

  it('finds a complete placement where greedy best-fit would strand one', () => {
    // Greedy puts 3 GiB on the 4 GiB node's... search must find {3+2 on 5, 2+2 on 4}.
    const nodes = [node('src', R(16, 65536)), node('n5', R(8, 5120, 100)), node('n4', R(8, 4096, 100))];
    const list = [inst('i-a', 'src', R(1, 3072)), inst('i-b', 'src', R(1, 2048)), inst('i-c', 'src', R(1, 2048)), inst('i-d', 'src', R(1, 2048))];
    const r = planPlacement(nodes, list, { hosts: [], allow: true });
    expect(r.unplaced).toEqual([]);
  });

  it.each([
    ['allow set naming only unusable hosts', [node('x', R(8, 8192), ZERO, true, false)], { hosts: ['x'], allow: true }, R(1, 256), 'no-eligible-destination'],
    ['an instance bigger than any destination', [node('x', R(2, 1024))], { hosts: [], allow: true }, R(4, 2048), 'too-large'],
    ['destinations full', [node('x', R(2, 1024), R(2, 1024))], { hosts: [], allow: true }, R(1, 256), 'insufficient-capacity'],
  ])('says why when it cannot: %s', (_n, dests, filter, size, reason) => {
    const r = planPlacement([node('src', R(8, 8192)), ...dests], [inst('i-1', 'src', size)], filter);
    expect(r.placements).toEqual([]);
    expect(r.unplaced).toEqual([{ instanceId: 'i-1', reason }]);
  });

  const res = fc.record({ cores: fc.integer({ min: 1, max: 4 }), memoryMiB: fc.integer({ min: 1, max: 8 }).map((x) => x * 256), diskGiB: fc.integer({ min: 1, max: 20 }) });
  const scenario = fc.record({
    nodes: fc.array(fc.record({ cap: res.map((r) => ({ cores: r.cores * 2, memoryMiB: r.memoryMiB * 2, diskGiB: r.diskGiB * 2 })), enabled: fc.boolean(), usable: fc.boolean() }), { minLength: 1, maxLength: 5 }),
    sizes: fc.array(res, { minLength: 1, maxLength: 6 }),
    deny: fc.boolean(),
    named: fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 3 }),
  });

  it('never over-commits a destination and always honours the allow/deny set (property)', () => {
    fc.assert(fc.property(scenario, (s) => {
      const nodes = [node('src', R(64, 65536, 1000)), ...s.nodes.map((n, i) => node(`n${i}`, n.cap, ZERO, n.enabled, n.usable))];
      const instances = s.sizes.map((r, i) => inst(`i-${i}`, 'src', r));
      const filter = { hosts: s.named.map((i) => `n${i}`), allow: !s.deny };
      const r = planPlacement(nodes, instances, filter);
      expect(r.placements.length + r.unplaced.length).toBe(instances.length);
      const usedBy = new Map<string, Resources>();
      const allowed = new Set(eligibleDestinations(nodes, 'src', filter).map((n) => n.host));
      for (const p of r.placements) {
        expect(allowed.has(p.destination)).toBe(true);
        const size = instances.find((i) => i.instanceId === p.instanceId)!.resources;
        usedBy.set(p.destination, add(usedBy.get(p.destination) ?? ZERO, size));
      }
      for (const n of nodes) expect(fits(usedBy.get(n.host) ?? ZERO, sub(n.capacity, n.used))).toBe(true);
    }), { numRuns: 500 });
  });

  it('places everything whenever a brute-force search says it is possible (property, small cases)', () => {
    fc.assert(fc.property(scenario, (s) => {
      const nodes = [node('src', R(64, 65536, 1000)), ...s.nodes.map((n, i) => node(`n${i}`, n.cap, ZERO, true, true))];
      const instances = s.sizes.slice(0, 5).map((r, i) => inst(`i-${i}`, 'src', r));
      const dests = nodes.slice(1);
      const feasible = (k: number, free: Resources[]): boolean => k === instances.length
        || free.some((f, j) => fits(instances[k]!.resources, f) && feasible(k + 1, free.map((x, m) => (m === j ? sub(x, instances[k]!.resources) : x))));
      const r = planPlacement(nodes, instances, { hosts: [], allow: true });
      expect(r.unplaced.length === 0).toBe(feasible(0, dests.map((d) => d.capacity)));
    }), { numRuns: 300 });
  });
});
