import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { schedule, slotsFor, type SchedulableNode } from '../../cc/scheduler.js';
import type { SchedulePolicy } from '../../cc/config.js';
import { countFitting, sub, ZERO, type Resources } from '../../shared/model/resources.js';

const SMALL: Resources = { cores: 1, memoryMiB: 256, diskGiB: 5 };
const LARGE: Resources = { cores: 2, memoryMiB: 512, diskGiB: 10 };
const room = (n: number): Resources => ({ cores: n, memoryMiB: 256 * n, diskGiB: 5 * n });

/** A node with room for `free` of `total` small instances. */
function node(host: string, total: number, free: number, schedulable = true): SchedulableNode {
  return { host, capacity: room(total), committed: room(total - free), schedulable };
}

describe('schedule (table)', () => {
  const cases: {
    name: string; policy: SchedulePolicy; nodes: SchedulableNode[]; count: number; vmType?: Resources;
    placements: string[]; shortfall: number;
  }[] = [
    { name: 'greedy fills the first registered node first', policy: 'greedy',
      nodes: [node('a', 4, 2), node('b', 4, 4)], count: 3, placements: ['a', 'a', 'b'], shortfall: 0 },
    { name: 'spread goes to the most free node first', policy: 'spread',
      nodes: [node('a', 4, 2), node('b', 4, 4)], count: 3, placements: ['b', 'b', 'a'], shortfall: 0 },
    { name: 'spread alternates between equal nodes in registration order', policy: 'spread',
      nodes: [node('a', 2, 2), node('b', 2, 2)], count: 4, placements: ['a', 'b', 'a', 'b'], shortfall: 0 },
    { name: 'a disabled or unreachable node is skipped (greedy)', policy: 'greedy',
      nodes: [node('a', 4, 4, false), node('b', 4, 1)], count: 2, placements: ['b'], shortfall: 1 },
    { name: 'a disabled or unreachable node is skipped (spread)', policy: 'spread',
      nodes: [node('a', 8, 8, false), node('b', 4, 2)], count: 2, placements: ['b', 'b'], shortfall: 0 },
    { name: 'exact fit takes every slot', policy: 'greedy',
      nodes: [node('a', 2, 1), node('b', 2, 1)], count: 2, placements: ['a', 'b'], shortfall: 0 },
    { name: 'shortfall when the partition is too small', policy: 'spread',
      nodes: [node('a', 2, 1), node('b', 2, 0)], count: 3, placements: ['a'], shortfall: 2 },
    { name: 'a type larger than any free room places nothing', policy: 'greedy',
      nodes: [node('a', 4, 1), node('b', 4, 1)], count: 1, vmType: LARGE, placements: [], shortfall: 1 },
    { name: 'the scarcest dimension decides (memory)', policy: 'greedy',
      nodes: [{ host: 'a', capacity: { cores: 16, memoryMiB: 512, diskGiB: 100 }, committed: ZERO, schedulable: true }],
      count: 3, placements: ['a', 'a'], shortfall: 1 },
    { name: 'no nodes at all', policy: 'spread', nodes: [], count: 1, placements: [], shortfall: 1 },
  ];
  it.each(cases)('$name', ({ policy, nodes, count, vmType, placements, shortfall }) => {
    expect(schedule({ nodes, vmType: vmType ?? SMALL, count, policy })).toEqual({ placements, shortfall });
  });

  it('never reads more room than capacity minus committed (over-committed nodes take nothing)', () => {
    const over: SchedulableNode = { host: 'a', capacity: room(2), committed: room(5), schedulable: true };
    expect(slotsFor(over, SMALL)).toBe(0);
    expect(schedule({ nodes: [over], vmType: SMALL, count: 1, policy: 'greedy' }).placements).toEqual([]);
  });
});

const resources = fc.record({ cores: fc.nat(16), memoryMiB: fc.nat(8192), diskGiB: fc.nat(200) });
const vmType = fc.record({ cores: fc.integer({ min: 1, max: 4 }), memoryMiB: fc.integer({ min: 64, max: 2048 }), diskGiB: fc.integer({ min: 1, max: 40 }) });
const nodes = fc.array(fc.record({ capacity: resources, committed: resources, schedulable: fc.boolean() }), { maxLength: 8 })
  .map((ns) => ns.map((n, i) => ({ ...n, host: `127.0.11.${i + 1}` })));
const policy = fc.constantFrom<SchedulePolicy>('spread', 'greedy');

describe('schedule (properties)', () => {
  it('never exceeds a node\'s free room, never uses an unschedulable node, and places min(count, what fits)', () => {
    fc.assert(fc.property(nodes, vmType, fc.nat(40), policy, (ns, t, count, p) => {
      const plan = schedule({ nodes: ns, vmType: t, count, policy: p });
      const fitting = ns.map((n) => (n.schedulable ? countFitting(t, sub(n.capacity, n.committed)) : 0));
      for (const [i, n] of ns.entries()) {
        const taken = plan.placements.filter((h) => h === n.host).length;
        expect(taken).toBeLessThanOrEqual(fitting[i] ?? 0);
        if (!n.schedulable) expect(taken).toBe(0);
      }
      const total = fitting.reduce((a, b) => a + b, 0);
      expect(plan.placements.length).toBe(Math.min(count, total));
      expect(plan.shortfall).toBe(count - plan.placements.length);
    }));
  });

  it('greedy fills nodes in registration order: a later node is used only once every earlier one is full', () => {
    fc.assert(fc.property(nodes, vmType, fc.nat(40), (ns, t, count) => {
      const plan = schedule({ nodes: ns, vmType: t, count, policy: 'greedy' });
      // The expected plan, computed the obvious way: take each node's slots in order.
      const expected: string[] = [];
      for (const n of ns) {
        const free = n.schedulable ? countFitting(t, sub(n.capacity, n.committed)) : 0;
        for (let k = 0; k < free && expected.length < count; k++) expected.push(n.host);
      }
      expect(plan.placements).toEqual(expected);
    }));
  });

  it('spread leaves every used node with at least the room of any other node minus one', () => {
    fc.assert(fc.property(nodes, vmType, fc.nat(40), (ns, t, count) => {
      const plan = schedule({ nodes: ns, vmType: t, count, policy: 'spread' });
      const left = ns.map((n) => slotsFor(n, t) - plan.placements.filter((h) => h === n.host).length);
      ns.forEach((n, i) => {
        if (!plan.placements.includes(n.host)) return;
        for (const other of left) expect(left[i] ?? 0).toBeGreaterThanOrEqual(other - 1);
      });
    }));
  });
});
