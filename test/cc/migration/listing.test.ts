import { describe, expect, it } from 'vitest';
import { describePlan } from '../../../cc/migration/describe.js';
import { listInstancesWithMigrations } from '../../../cc/migration/listing.js';
import { applyIncoming, applyPlan, applyReport, initialView, listInstances, locateInstance, markUnreachable, matrixOf } from '../../../cc/view.js';
import { toSnapshot } from '../../../cc/viewCache.js';
import { instance, SMALL, slots } from '../fakeNodes.js';
import { D1, D2, id, item, MIG, node, plan, record, running, S } from './builders.js';

const route = (l: ReturnType<typeof listInstancesWithMigrations>[number]) => [l.instance.instanceId, l.host, l.migrationState, l.migrationSource, l.migrationDestination];

describe('listing during migrations', () => {
  it.each<[string, Parameters<typeof listInstancesWithMigrations>[0], (string | undefined)[][]]>([
    ['queued: from the source, with its route, state as the NC says', [node(S, { running: running(id(1)), plans: [plan([item(id(1), D1)])] }), node(D1)],
      [[id(1), S, 'none', S, D1]]],
    ['destination ready while the NC still says none: ready', [node(S, { running: running(id(1)), plans: [plan([item(id(1), D1)])] }), node(D1, { incoming: [record(id(1))] })],
      [[id(1), S, 'ready', S, D1]]],
    ['cleaning, both report it: once, from the source',
      [node(S, { running: [{ ...instance(id(1)), migrationState: 'cleaning' }], plans: [plan([item(id(1), D1, { state: 'cleaning' })])] }), node(D1, { running: running(id(1)) })],
      [[id(1), S, 'cleaning', S, D1]]],
    ['completed, the source report lagging: once, from the destination, no route',
      [node(S, { running: running(id(1)), plans: [plan([item(id(1), D1, { state: 'completed' })])] }), node(D1, { running: running(id(1)) })],
      [[id(1), D1, 'none', '', '']]],
    ['rolled back: from the source, no route', [node(S, { running: running(id(1)), plans: [plan([item(id(1), D1, { state: 'rolled-back' })])] }), node(D1)],
      [[id(1), S, 'none', '', '']]],
    ['not in any plan, one copy being destroyed: the live copy only, whichever host comes first',
      [node(S, { running: [{ ...instance(id(1)), state: 'terminated' }] }), node(D1, { running: running(id(1)) })],
      [[id(1), D1, 'none', '', '']]],
    ['the same, the other way round (a host back from fencing whose obsolete copy shuts down)',
      [node(S, { running: running(id(1)) }), node(D1, { running: [{ ...instance(id(1)), state: 'shutting-down' }] })],
      [[id(1), S, 'none', '', '']]],
    ['not in any plan, only dead copies: every copy, as the NCs say',
      [node(S, { running: [{ ...instance(id(1)), state: 'terminated' }] }), node(D1, { running: [{ ...instance(id(1)), state: 'shutting-down' }] })],
      [[id(1), S, 'none', '', ''], [id(1), D1, 'none', '', '']]],
    ['completed long ago, then re-homed (a stopped instance started elsewhere): the live copy, not the dead one on the old destination',
      [node(S, { plans: [plan([item(id(1), D1, { state: 'completed' })])] }), node(D1, { running: [{ ...instance(id(1)), state: 'terminated' }] }), node(D2, { running: running(id(1)) })],
      [[id(1), D2, 'none', '', '']]],
    ['not in any plan, two live copies: both, for whoever reconciles them',
      [node(S, { running: running(id(1)) }), node(D1, { running: running(id(1)) })],
      [[id(1), S, 'none', '', ''], [id(1), D1, 'none', '', '']]],
  ])('%s', (_name, nodes, expected) => {
    expect(listInstancesWithMigrations(nodes).map(route)).toEqual(expected);
  });

  it('a fenced host\'s copy of an instance host HA restarted elsewhere is obsolete: listed from the other host, even against a completed migration to the fenced one', () => {
    // The instance once moved S → D1 (completed); D1 died, was fenced, and its copy was restarted on S.
    const nodes = [node(S, { running: running(id(1)), plans: [plan([item(id(1), D1, { state: 'completed' })])] }), node(D1, { running: running(id(1)), reachable: false })];
    expect(listInstancesWithMigrations(nodes).map(route)).toEqual([[id(1), D1, 'none', '', '']]);
    expect(listInstancesWithMigrations(nodes, new Set([D1])).map(route)).toEqual([[id(1), S, 'none', '', '']]);
    // Held only by the fenced host (not restarted yet): still listed, from there.
    expect(listInstancesWithMigrations([node(S), node(D1, { running: running(id(2)) })], new Set([D1])).map(route)).toEqual([[id(2), D1, 'none', '', '']]);
  });

  it('describe shows preparing/ready from the destination (or the CC\'s own pending prepare) for items the source calls queued', () => {
    const p = plan([item(id(1), D1), item(id(2), D2), item(id(3), D1), item(id(4), D1, { state: 'migrating' })]);
    const nodes = [node(S, { running: running(id(1), id(2), id(3), id(4)), plans: [p] }), node(D1, { incoming: [record(id(1), 'ready')] }), node(D2, { reachable: false })];
    const marks = new Map([[`${MIG}/${id(2)}`, { phase: 'preparing' as const, destination: D2, since: 0, asked: true, refused: [] }]]);
    const d = describePlan(p, nodes, marks);
    expect(d.items.map((i) => i.state)).toEqual(['ready', 'preparing', 'queued', 'migrating']);
    expect(d).toMatchObject({ finished: false, sourceReachable: true });
  });
});

describe('view: migrations carried from the NCs', () => {
  const report = (host: string, over = {}) => ({ host, nodeState: 'enabled' as const, healthy: true, hypervisor: 'sim', capacity: slots(4), used: slots(0), instances: [], ...over });

  it('reads plans and records from reports (absent = none), keeps them while unreachable, never caches them', () => {
    let v = initialView('cluster01', [S, D1]);
    expect(v.entries.map((e) => [e.plans, e.incoming, e.migrationsKnown])).toEqual([[[], [], false], [[], [], false]]);
    v = applyReport(v, S, report(S, { instances: running(id(1)), plans: [plan([item(id(1), D1)])] }), 1);
    v = applyReport(v, D1, report(D1), 1);
    expect(v.entries.map((e) => [e.plans.length, e.incoming.length, e.migrationsKnown])).toEqual([[1, 0, true], [0, 0, true]]);
    v = markUnreachable(v, S, 2);
    expect(v.entries[0]?.plans).toHaveLength(1);
    expect(JSON.stringify(toSnapshot(v))).not.toContain(MIG);
  });

  it('applyIncoming moves the destination\'s used with the record; applyPlan replaces the plan', () => {
    let v = applyReport(applyReport(initialView('cluster01', [S, D1]), S, report(S, { instances: running(id(1)) }), 1), D1, report(D1), 1);
    v = applyPlan(v, S, plan([item(id(1), D1)]));
    expect(matrixOf(v, [SMALL])[0]).toMatchObject({ available: 6 }); // 3 on S, 3 on D1 (one reserved)
    v = applyIncoming(v, D1, MIG, id(1), record(id(1)));
    expect(v.entries[1]?.node.used).toEqual(slots(1));
    expect(matrixOf(v, [SMALL])[0]).toMatchObject({ available: 6 }); // counted by D1 now, not twice
    v = applyIncoming(v, D1, MIG, id(1), undefined);
    expect(v.entries[1]?.node.used).toEqual(slots(0));
    v = applyPlan(v, S, plan([item(id(1), D1, { state: 'rolled-back' })]));
    expect(v.entries[0]?.plans.map((p) => p.items[0]?.state)).toEqual(['rolled-back']);
    expect(matrixOf(v, [SMALL])[0]).toMatchObject({ available: 7 });
  });

  it('locates an instance restarted elsewhere outside the fenced hosts (terminate reaches the live copy)', () => {
    let v = applyReport(initialView('cluster01', [D1, S]), D1, report(D1, { instances: running(id(1)) }), 1);
    v = applyReport(v, S, report(S, { instances: running(id(1)), plans: [plan([item(id(1), D1, { state: 'completed' })])] }), 1);
    expect(locateInstance(v, id(1))?.host).toBe(D1);
    expect(locateInstance(v, id(1), new Set([D1]))?.host).toBe(S);
    expect(listInstances(v, new Set([D1])).map((i) => i.host)).toEqual([S]);
  });

  it('locates and lists a migrating instance on its source until it completes', () => {
    let v = applyReport(initialView('cluster01', [D1, S]), D1, report(D1, { instances: running(id(1)) }), 1);
    v = applyReport(v, S, report(S, { instances: running(id(1)), plans: [plan([item(id(1), D1, { state: 'cleaning' })])] }), 1);
    expect(locateInstance(v, id(1))?.host).toBe(S);
    expect(listInstances(v).map((i) => [i.host, i.migrationSource, i.migrationDestination])).toEqual([[S, S, D1]]);
  });
});
