import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MigrationNode } from '../../../cc/migration/nodes.js';
import { planMigration, type MigrateRequest, type PlannerContext } from '../../../cc/migration/planner.js';
import { coldMovePlan } from '../../../cc/migration/coldMoves.js';
import { reservationsOf } from '../../../cc/migration/reservations.js';
import { DEFAULT_LIMITS } from '../../../cc/migration/settings.js';
import { CcErrors } from '../../../cc/errors.js';
import { add, fits, sub, ZERO, type Resources } from '../../../shared/model/resources.js';
import { planSchema } from '../../../shared/protocol/migrationProtocol.js';
import { instance, LARGE, slots } from '../fakeNodes.js';
import { D1, D2, D3, id, item, node, plan, running, S, TIMEOUTS, type NodeOver } from './builders.js';

const ctx: PlannerContext = { partition: 'cluster01', now: 5000, newHex: () => 'c0ffee00', limits: DEFAULT_LIMITS, timeouts: TIMEOUTS };
const drain = (over: Partial<MigrateRequest> = {}): MigrateRequest => ({ sourceHost: S, destinations: [], allowHosts: true, reserveDestinations: false, partial: false, ...over });
const move = (instanceId: string, over: Partial<MigrateRequest> = {}): MigrateRequest => ({ instanceId, destinations: [], allowHosts: true, reserveDestinations: false, partial: false, ...over });

/** A source with two running instances and three empty destinations. */
const base = (over: Record<string, NodeOver> = {}): MigrationNode[] => [
  node(S, { running: running(id(1), id(2)), ...over[S] }), node(D1, over[D1]), node(D2, over[D2]), node(D3, over[D3]),
];

describe('planMigration: a quarantined node (issue 18)', () => {
  it('moves an instance of a quarantined node when it is named, never onto another quarantined one', () => {
    const r = planMigration(move(id(1)), base({ [S]: { quarantinedSince: 1 }, [D1]: { quarantinedSince: 1 } }), ctx);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.plan.items.map((i) => i.destination)).not.toContain(D1);
    expect(r.plan.items).toHaveLength(1);
  });

  it('never picks a quarantined node as a drain destination, and a deny list naming it is harmless', () => {
    for (const req of [drain(), drain({ destinations: [D2], allowHosts: false })]) {
      const r = planMigration(req, base({ [D1]: { quarantinedSince: 1 } }), ctx);
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.plan.items.map((i) => i.destination)).not.toContain(D1);
    }
  });
});

describe('planMigration: refusals (nothing planned, nothing reserved)', () => {
  it.each<[string, MigrateRequest, MigrationNode[], string, string?]>([
    ['both sourceHost and instanceId', drain({ instanceId: id(1) }), base(), 'InvalidParameterCombination'],
    ['neither sourceHost nor instanceId', { destinations: [], allowHosts: true, reserveDestinations: false, partial: false }, base(), 'InvalidParameterCombination'],
    ['unknown source host', drain({ sourceHost: '127.0.11.99' }), base(), 'NodeNotFound', '127.0.11.99'],
    ['unknown destination host', drain({ destinations: [D1, '127.0.11.98'] }), base(), 'NodeNotFound', '127.0.11.98'],
    ['unknown instance', move(id(0x77)), base(), 'InstanceNotFound', id(0x77)],
    ['instance not running', move(id(3)), base({ [S]: { instances: [...running(id(1)), { ...instance(id(3)), state: 'stopped' }] } }), 'InstanceNotRunning', 'stopped'],
    ['the source allowed as its own destination', drain({ destinations: [D1, S] }), base(), 'DestinationIsSource', S],
    ['source unreachable', drain(), base({ [S]: { reachable: false } }), 'NodeUnreachable', S],
    ['a node already draining', drain(), base({ [S]: { plans: [plan([item(id(1), D1)])] } }), 'MigrationInProgress', 'mig-0000000a'],
    ['an instance already in an active plan', move(id(2)), base({ [S]: { plans: [plan([item(id(2), D1)], { request: { kind: 'instance' } })] } }), 'MigrationInProgress', id(2)],
    ['an instance its NC says is migrating', move(id(2)), base({ [S]: { instances: [{ ...instance(id(2)), migrationState: 'migrating' }] } }), 'MigrationInProgress', id(2)],
    ['a drain of a node running nothing', drain(), base({ [S]: { instances: [{ ...instance(id(1)), state: 'stopped' }] } }), 'NothingToMigrate', S],
    ['a drain of a node whose only stopped instance moves (migrating)', drain(), base({ [S]: { instances: [{ ...instance(id(1)), state: 'stopped', userStopped: true, migrationState: 'migrating' }] } }), 'NothingToMigrate', S],
    ['a drain of a quarantined node holding only a user-stopped instance', drain(), base({ [S]: { quarantinedSince: 1, instances: [{ ...instance(id(1)), state: 'stopped', userStopped: true }] } }), 'NodeQuarantined', 'no instance'],
    ['an allow set naming only unusable hosts', drain({ destinations: [D1, D2] }), base({ [D1]: { reachable: false }, [D2]: { healthy: false } }), 'NoEligibleDestination', 'unreachable, unhealthy'],
    ['no other enabled node', drain(), base({ [D1]: { enabled: false }, [D2]: { enabled: false }, [D3]: { reachable: false } }), 'NoEligibleDestination', 'no other node'],
    ['not everything fits (partial=false)', drain(), base({ [D1]: { capacity: slots(1) }, [D2]: { capacity: ZERO }, [D3]: { capacity: ZERO } }), 'InsufficientCapacityForMigration', '1 of 2 instances'],
    // Issue 18: a quarantined node is not drained (its instances listed, to be named) and never a destination, even when named.
    ['a drain of a quarantined node', drain(), base({ [S]: { quarantinedSince: 1 } }), 'NodeQuarantined', `${id(1)}, ${id(2)}`],
    ['a quarantined node named as an allowed destination', drain({ destinations: [D1, D2] }), base({ [D2]: { quarantinedSince: 1 } }), 'NodeQuarantined', D2],
    ['only quarantined nodes left', move(id(1)), base({ [D1]: { quarantinedSince: 1 }, [D2]: { quarantinedSince: 1 }, [D3]: { quarantinedSince: 1 } }), 'NoEligibleDestination', 'no other node'],
    ['nothing fits even with partial', drain({ partial: true }), base({
      [D1]: { capacity: slots(1), running: running(id(0x11)) }, [D2]: { capacity: slots(1), running: running(id(0x12)) }, [D3]: { capacity: ZERO },
    }), 'InsufficientCapacityForMigration', 'insufficient-capacity'],
  ])('%s', (_name, req, nodes, code, mention) => {
    const r = planMigration(req, nodes, ctx);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe(code);
    expect(CcErrors.has(r.error.code)).toBe(true);
    if (mention) expect(r.error.message).toContain(mention);
  });
});

describe('planMigration: plans', () => {
  it('drains every running instance into a schema-valid plan with queued items', () => {
    const r = planMigration(drain(), base(), ctx);
    if (!r.ok) throw r.error;
    expect(planSchema.parse(r.plan)).toEqual(r.plan);
    expect(r.plan).toMatchObject({
      migrationId: 'mig-c0ffee00', source: S, createdAt: 5000, cancelRequested: false, limits: DEFAULT_LIMITS, timeouts: TIMEOUTS,
      request: { kind: 'drain', destinations: [], allowHosts: true, reserveDestinations: false },
    });
    expect(r.plan.items.map((i) => [i.instanceId, i.state, i.attempts, i.queuedAt])).toEqual([[id(1), 'queued', 1, 5000], [id(2), 'queued', 1, 5000]]);
    expect(r.unplaced).toEqual([]);
  });

  it('moves one instance; a stopped neighbour is not part of it', () => {
    const r = planMigration(move(id(2)), base({ [S]: { instances: [...running(id(2)), { ...instance(id(3)), state: 'stopped' }] } }), ctx);
    if (!r.ok) throw r.error;
    expect(r.plan.request.kind).toBe('instance');
    expect(r.plan.items.map((i) => i.instanceId)).toEqual([id(2)]);
  });

  it('an allow list picks only named hosts, a disabled one included', () => {
    const r = planMigration(drain({ destinations: [D2] }), base({ [D2]: { enabled: false } }), ctx);
    if (!r.ok) throw r.error;
    expect(r.plan.items.map((i) => i.destination)).toEqual([D2, D2]);
  });

  it('a deny list avoids the named hosts (and naming the source there is harmless)', () => {
    const r = planMigration(drain({ destinations: [D1, D2, S], allowHosts: false }), base(), ctx);
    if (!r.ok) throw r.error;
    expect(r.plan.items.map((i) => i.destination)).toEqual([D3, D3]);
  });

  it('a disabled node is never chosen unless allowed by name', () => {
    const r = planMigration(drain(), base({ [D1]: { enabled: false }, [D2]: { enabled: false } }), ctx);
    if (!r.ok) throw r.error;
    expect(r.plan.items.every((i) => i.destination === D3)).toBe(true);
  });

  it('a node being drained is no destination (no two drains swapping VMs), unless named', () => {
    const otherDrain = plan([item(id(9), D3)], { source: D1, migrationId: 'mig-0000000e' });
    const nodes = base({ [D1]: { running: running(id(9)), plans: [otherDrain] } });
    const r = planMigration(move(id(1)), nodes, ctx);
    if (!r.ok) throw r.error;
    expect(r.plan.items[0]?.destination).not.toBe(D1);
    const named = planMigration(move(id(1), { destinations: [D1] }), nodes, ctx);
    if (!named.ok) throw named.error;
    expect(named.plan.items[0]?.destination).toBe(D1);
  });

  it('counts running VMs and the reservations of other active plans', () => {
    // D1 runs one; another plan (from D3) still reserves two slots on D2: only D1 has room for both.
    const other = plan([item(id(8), D2), item(id(9), D2)], { source: D3, migrationId: 'mig-0000000f' });
    const nodes = [
      node(S, { running: running(id(1), id(2)) }), node(D1, { running: running(id(5)) }),
      node(D2, { capacity: slots(3) }), node(D3, { running: running(id(8), id(9)), plans: [other], capacity: slots(2) }),
    ];
    const r = planMigration(drain({ destinations: [D3], allowHosts: false }), nodes, ctx);
    if (!r.ok) throw r.error;
    const onD2 = r.plan.items.filter((i) => i.destination === D2).length;
    expect(onD2).toBeLessThanOrEqual(1);
  });

  it('partial: what fits is queued, the rest are failed items saying why, and listed as unplaced', () => {
    const nodes = [node(S, { running: [instance(id(1), LARGE), instance(id(2))] }), node(D1, { capacity: slots(1) })];
    const r = planMigration(drain({ partial: true }), nodes, ctx);
    if (!r.ok) throw r.error;
    expect(r.unplaced).toEqual([{ instanceId: id(1), reason: 'too-large' }]);
    expect(r.plan.items).toEqual([
      expect.objectContaining({ instanceId: id(1), destination: '', state: 'failed', attempts: 0, error: 'not placed: larger than any eligible destination', endedAt: 5000 }),
      expect.objectContaining({ instanceId: id(2), destination: D1, state: 'queued' }),
    ]);
    expect(planSchema.safeParse(r.plan).success).toBe(true);
  });

  it('draws another id when the first one is taken by a plan the NCs still hold', () => {
    const hex = ['0000000a', '0000000b'];
    const nodes = base({ [S]: { plans: [plan([item(id(1), D1, { state: 'completed' })])] } });
    const r = planMigration(drain(), nodes, { ...ctx, newHex: () => hex.shift() ?? 'ffffffff' });
    if (!r.ok) throw r.error;
    expect(r.plan.migrationId).toBe('mig-0000000b');
  });

  it('never over-commits a destination and never plans a non-running instance (property)', () => {
    const nodeArb = fc.record({ cap: fc.integer({ min: 0, max: 4 }), used: fc.integer({ min: 0, max: 2 }), enabled: fc.boolean(), reachable: fc.boolean(), healthy: fc.boolean() });
    fc.assert(fc.property(
      fc.array(nodeArb, { minLength: 1, maxLength: 4 }),
      fc.array(fc.constantFrom('running', 'stopped', 'pending') as fc.Arbitrary<'running' | 'stopped' | 'pending'>, { minLength: 0, maxLength: 5 }),
      fc.boolean(), fc.boolean(), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 2 }),
      (dests, states, partial, allowHosts, named) => {
        const hosts = dests.map((_, k) => `127.0.11.${k + 2}`);
        const nodes = [
          node(S, { instances: states.map((s, k) => ({ ...instance(id(k + 1)), state: s })) }),
          ...dests.map((d, k) => node(hosts[k] as string, {
            capacity: slots(d.cap), running: running(...Array.from({ length: Math.min(d.used, d.cap) }, (_, j) => id(0x100 + k * 8 + j))),
            enabled: d.enabled, reachable: d.reachable, healthy: d.healthy,
          })),
        ];
        const destinations = named.filter((n) => n < hosts.length).map((n) => hosts[n] as string);
        const r = planMigration(drain({ partial, allowHosts, destinations }), nodes, ctx);
        if (!r.ok) {
          expect(CcErrors.has(r.error.code)).toBe(true);
          return;
        }
        expect(planSchema.safeParse(r.plan).success).toBe(true);
        const load = new Map<string, Resources>();
        for (const i of r.plan.items) {
          expect(states[Number.parseInt(i.instanceId.slice(2), 16) - 1]).toBe('running');
          if (i.state === 'queued') load.set(i.destination, add(load.get(i.destination) ?? ZERO, i.vmType));
          else expect(partial).toBe(true);
        }
        const reserved = reservationsOf(nodes);
        for (const n of nodes) {
          const l = load.get(n.host);
          if (!l) continue;
          expect(n.host).not.toBe(S);
          expect(n.reachable && n.healthy).toBe(true);
          expect(allowHosts && destinations.length > 0 ? destinations.includes(n.host) : n.enabled && !destinations.includes(n.host)).toBe(true);
          expect(fits(l, sub(sub(n.capacity, n.committed), reserved.byHost.get(n.host) ?? ZERO))).toBe(true);
        }
      },
    ), { numRuns: 400 });
  });
});

describe('planMigration: a drain of a node holding only user-stopped instances (issue 18 part 5)', () => {
  const stoppedByUser = (k: number) => ({ ...instance(id(k)), state: 'stopped' as const, userStopped: true as const });

  it('answers cold-only: no live plan, the CC re-homes them and records the moves', () => {
    const r = planMigration(drain(), base({ [S]: { instances: [stoppedByUser(1), { ...instance(id(2)), state: 'stopped' }] } }), ctx);
    expect(r).toMatchObject({ ok: false, coldOnly: S, error: { code: 'NothingToMigrate' } });
  });

  it('a node with a running instance beside a stopped one gets its live plan (the stopped one is re-homed beside it)', () => {
    const r = planMigration(drain(), base({ [S]: { instances: [...running(id(1)), stoppedByUser(2)] } }), ctx);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.plan.items.map((i) => i.instanceId)).toEqual([id(1)]);
  });

  it('is still refused while another drain of the node is active', () => {
    const r = planMigration(drain(), base({ [S]: { instances: [stoppedByUser(1)], plans: [plan([item(id(2), D1)])] } }), ctx);
    expect(r.ok === false && r.error.code).toBe('MigrationInProgress');
  });
});

describe('coldMovePlan', () => {
  const tried = [{ ...instance(id(1)), state: 'stopped' as const, userStopped: true as const }, { ...instance(id(2)), state: 'stopped' as const, userStopped: true as const }];

  it('records each cold move tried, completed where it went and failed with the reason where it stayed; a valid, finished plan', () => {
    const p = coldMovePlan(S, drain({ destinations: [D1, D1] }), {
      rehomed: [{ instanceId: id(1), destination: D1 }], notRehomed: [{ instanceId: id(2), reason: 'no room' }], tried,
    }, 'mig-0000c01d', ctx);
    expect(planSchema.safeParse(p).success).toBe(true);
    expect(p).toMatchObject({ migrationId: 'mig-0000c01d', source: S, request: { kind: 'drain', destinations: [D1] } });
    expect(p.items).toEqual([
      expect.objectContaining({ instanceId: id(1), destination: D1, state: 'completed', cold: true, endedAt: ctx.now }),
      expect.objectContaining({ instanceId: id(2), destination: '', state: 'failed', cold: true, error: 'not re-homed: no room' }),
    ]);
  });
});
