import { describe, expect, it } from 'vitest';
import { reservationsOf } from '../../../cc/migration/reservations.js';
import { ZERO } from '../../../shared/model/resources.js';
import { instance, slots } from '../fakeNodes.js';
import { D1, D2, D3, id, item, MIG, node, plan, record, running, S, type NodeOver, type PlanOver } from './builders.js';
import type { MigrationNode } from '../../../cc/migration/nodes.js';

const src = (p: ReturnType<typeof plan>, over: NodeOver = {}): MigrationNode => node(S, { running: running(id(1), id(2), id(3)), plans: [p], ...over });

describe('reservationsOf', () => {
  it.each<[string, MigrationNode[], Record<string, number>]>([
    ['a queued item holds its type on its destination', [src(plan([item(id(1), D1)])), node(D1)], { [D1]: 1 }],
    ['two items to one destination add up', [src(plan([item(id(1), D1), item(id(2), D1)])), node(D1)], { [D1]: 2 }],
    ['once the destination holds a record, its NC counts it: not again here',
      [src(plan([item(id(1), D1)])), node(D1, { incoming: [record(id(1), 'ready')] })], {}],
    ['a record in state none holds nothing: the reservation still counts',
      [src(plan([item(id(1), D1)])), node(D1, { incoming: [record(id(1), 'none')] })], { [D1]: 1 }],
    ['a destination already running the instance (source report lagging) counts it itself',
      [src(plan([item(id(1), D1, { state: 'migrating' })])), node(D1, { running: [instance(id(1))] })], {}],
    ['final items hold nothing', [src(plan([
      item(id(1), D1, { state: 'completed' }), item(id(2), D1, { state: 'rolled-back' }), item(id(3), D2, { state: 'cancelled' }),
    ]))], {}],
    ['an unplaced item (failed, no destination) holds nothing', [src(plan([item(id(1), '', { state: 'failed' }), item(id(2), D2)])), node(D2)], { [D2]: 1 }],
    ['a plan reported by another host than its source is not believed', [node(D3, { plans: [plan([item(id(1), D1)])] }), node(D1)], {}],
    ['migrating to a destination whose record says migrating: counted there only',
      [src(plan([item(id(1), D1, { state: 'migrating' })])), node(D1, { incoming: [record(id(1), 'migrating')] })], {}],
  ])('%s', (_name, nodes, expected) => {
    const r = reservationsOf(nodes);
    expect(Object.fromEntries([...r.byHost].map(([h, res]) => [h, res.cores]))).toEqual(expected);
  });

  it('leaves out the item named by `except` (re-checking its own destination)', () => {
    const nodes = [src(plan([item(id(1), D1), item(id(2), D1)])), node(D1)];
    expect(reservationsOf(nodes, `${MIG}/${id(1)}`).byHost.get(D1)).toEqual(slots(1));
  });

  it.each<[string, PlanOver, string[][], string[]]>([
    ['reserveDestinations: every destination of the active plan, and the allowed named hosts', { request: { reserveDestinations: true, destinations: [D1, D3], allowHosts: true } }, [[id(1), D1], [id(2), D2]], [D1, D2, D3]],
    ['a deny list reserves only the destinations chosen', { request: { reserveDestinations: true, destinations: [D3], allowHosts: false } }, [[id(1), D1]], [D1]],
    ['without reserveDestinations nothing is reserved whole', {}, [[id(1), D1]], []],
  ])('%s', (_name, over, items, hosts) => {
    const r = reservationsOf([src(plan(items.map(([i, d]) => item(i as string, d as string)), over)), node(D1), node(D2), node(D3)]);
    expect([...r.reservedHosts].sort()).toEqual(hosts.sort());
  });

  it('a finished plan reserves nothing at all', () => {
    const r = reservationsOf([src(plan([item(id(1), D1, { state: 'completed' })], { request: { reserveDestinations: true } }))]);
    expect(r.reservedHosts.size).toBe(0);
    expect(r.byHost.get(D1) ?? ZERO).toEqual(ZERO);
  });
});
