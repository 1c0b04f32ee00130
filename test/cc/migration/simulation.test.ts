/**
 * The coordinator run for many steps against the fake NCs' handshake (no runner, no promises): each
 * step reconciles, carries out the effects on the NCs, then something happens (a migration finishes
 * or fails, a node is disabled or drops off, time passes). On the NCs' own truth, at every step:
 * no limit is exceeded, no instance is lost or runs twice outside a switch-over; and once the world
 * calms down every plan finishes with nothing left behind on any destination.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CcErrors } from '../../../cc/errors.js';
import { reconcile } from '../../../cc/migration/coordinator.js';
import { effectHost, effectKey, toNcRequest } from '../../../cc/migration/effects.js';
import { noteFailure, type Marks } from '../../../cc/migration/marks.js';
import type { MigrationNode } from '../../../cc/migration/nodes.js';
import { planMigration } from '../../../cc/migration/planner.js';
import { isFinal, itemKey } from '../../../cc/migration/plans.js';
import type { Limits } from '../../../cc/migration/settings.js';
import { isFerryError } from '../../../shared/errors/registry.js';
import { add, ZERO, type Resources } from '../../../shared/model/resources.js';
import { failTransfer, finishCleaning, handleMigrate, switchOver, usedBy, type MigratingNc, type MigrationWorld } from '../fakeMigrations.js';
import { instance, slots } from '../fakeNodes.js';
import { id } from './builders.js';
import { TIMEOUTS } from './migrationHarness.js';

const HOSTS = ['127.0.11.1', '127.0.11.2', '127.0.11.3', '127.0.11.4'];

interface Sim {
  readonly ncs: Map<string, MigratingNc & { up: boolean }>;
  /** What a destination's record says while the VM streams in (the NC may keep 'ready'). */
  readonly receiving: 'ready' | 'migrating';
  now: number;
  marks: Marks;
  /** An effect is not repeated within this pause after it ran (the runner's pacing). */
  readonly paced: Map<string, number>;
}

function world(sim: Sim): MigrationWorld {
  return {
    nc: (h) => sim.ncs.get(h) as MigratingNc,
    now: () => sim.now,
    started: (source, migrationId, instanceId) => {
      const item = sim.ncs.get(source)?.plans.find((p) => p.migrationId === migrationId)?.items.find((i) => i.instanceId === instanceId);
      const rec = item ? sim.ncs.get(item.destination)?.incoming.find((r) => r.migrationId === migrationId && r.instanceId === instanceId) : undefined;
      if (rec) rec.state = sim.receiving;
    },
    notify: () => undefined,
  };
}

function view(sim: Sim): MigrationNode[] {
  return [...sim.ncs.values()].map((nc) => ({
    host: nc.host, enabled: nc.nodeState === 'enabled', reachable: nc.up, healthy: nc.healthy, capacity: nc.capacity,
    committed: usedBy(nc), instances: nc.instances.map((i) => ({ ...i })), plans: structuredClone(nc.plans),
    incoming: nc.incoming.map((r) => ({ ...r })), migrationsKnown: true, fenced: false,
  }));
}

function step(sim: Sim, limits: Limits): void {
  const w = world(sim);
  const r = reconcile({ nodes: view(sim), marks: sim.marks, limits, now: sim.now });
  sim.marks = r.marks;
  for (const e of r.effects) {
    const key = effectKey(e);
    if ((sim.paced.get(key) ?? -Infinity) > sim.now) continue;
    sim.paced.set(key, sim.now + 1000);
    const host = effectHost(e);
    try {
      if (!sim.ncs.get(host)?.up) throw CcErrors.make('NodeUnreachable', { host, detail: 'ECONNREFUSED', maybeDelivered: false });
      handleMigrate(w, host, toNcRequest(e, 'http://{host}:16509'));
    } catch (err) {
      if (!isFerryError(err)) throw err;
      if ('instanceId' in e && e.instanceId !== undefined) {
        sim.marks = noteFailure(sim.marks, itemKey(e.migrationId, e.instanceId), e, { code: err.code, message: err.message, ...(typeof err.fields.maybeDelivered === 'boolean' ? { maybeDelivered: err.fields.maybeDelivered } : {}) }, sim.now);
      }
    }
  }
}

/** Invariants on the NCs' own truth. */
function check(sim: Sim, limits: Limits, all: readonly string[]): void {
  const bySource = new Map<string, number>();
  const byDest = new Map<string, number>();
  let total = 0;
  for (const nc of sim.ncs.values()) {
    for (const p of nc.plans) {
      for (const i of p.items) {
        const rec = sim.ncs.get(i.destination)?.incoming.some((r) => r.migrationId === p.migrationId && r.instanceId === i.instanceId);
        if (i.state === 'migrating' || i.state === 'cleaning' || (!isFinal(i.state) && rec)) {
          bySource.set(p.source, (bySource.get(p.source) ?? 0) + 1);
          byDest.set(i.destination, (byDest.get(i.destination) ?? 0) + 1);
          total++;
        }
      }
    }
    const held = nc.incoming.reduce<Resources>((a, r) => add(a, r.vmType), ZERO);
    expect(held.cores).toBeLessThanOrEqual(nc.capacity.cores); // destinations never over-committed by records
  }
  for (const v of bySource.values()) expect(v).toBeLessThanOrEqual(limits.perSource);
  for (const v of byDest.values()) expect(v).toBeLessThanOrEqual(limits.perDestination);
  expect(total).toBeLessThanOrEqual(limits.perCluster);
  for (const iid of all) {
    const copies = [...sim.ncs.values()].filter((nc) => nc.instances.some((i) => i.instanceId === iid && i.state !== 'terminated'));
    expect(copies.length).toBeGreaterThanOrEqual(1); // never lost
    if (copies.length > 1) {
      // Two copies only during a switch-over: the source's item is cleaning.
      const cleaning = [...sim.ncs.values()].some((nc) => nc.plans.some((p) => p.items.some((i) => i.instanceId === iid && i.state === 'cleaning')));
      expect(cleaning).toBe(true);
    }
  }
}

const eventArb = fc.oneof(
  fc.record({ kind: fc.constant('finish' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('fail' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('toggleEnabled' as const), host: fc.nat({ max: 3 }) }),
  fc.record({ kind: fc.constant('toggleUp' as const), host: fc.nat({ max: 3 }) }),
  fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 1, max: 1500 }) }),
  fc.record({ kind: fc.constant('cancel' as const) }),
);

describe('coordinator against the NCs, many steps (property)', () => {
  it('keeps every limit and every VM, and finishes every plan cleanly', () => {
    fc.assert(fc.property(
      fc.record({ perSource: fc.integer({ min: 1, max: 3 }), perDestination: fc.integer({ min: 1, max: 2 }), perCluster: fc.integer({ min: 1, max: 4 }) }),
      fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 4, maxLength: 4 }),
      fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 3 }),
      fc.array(eventArb, { maxLength: 60 }), fc.constantFrom('ready' as const, 'migrating' as const),
      (limits, caps, onFirst, onSecond, events, receiving) => {
        const sim: Sim = { ncs: new Map(), receiving, now: 0, marks: new Map(), paced: new Map() };
        for (const [k, host] of HOSTS.entries()) {
          sim.ncs.set(host, { host, nodeState: 'enabled', healthy: true, capacity: slots(k < 2 ? 8 : (caps[k] ?? 1)), instances: [], plans: [], incoming: [], up: true });
        }
        const all: string[] = [];
        // Two drains: of the first host, and of the second (which may also be a destination of the first).
        for (const [k, count] of [[0, onFirst], [1, onSecond]] as const) {
          const host = HOSTS[k] as string;
          for (let j = 0; j < count; j++) {
            const iid = id(0x100 * (k + 1) + j);
            sim.ncs.get(host)?.instances.push(instance(iid));
            all.push(iid);
          }
        }
        for (const k of [0, 1]) {
          const r = planMigration({ sourceHost: HOSTS[k], destinations: [], allowHosts: true, reserveDestinations: false, partial: true }, view(sim), {
            partition: 'p', now: 0, newHex: () => `0000000${k}`, limits, timeouts: TIMEOUTS,
          });
          if (r.ok) handleMigrate(world(sim), r.plan.source, { action: 'prepare', role: 'source', plan: r.plan });
        }

        const w = world(sim);
        const migrating = (): [string, string, string][] => [...sim.ncs.values()].flatMap((nc) => nc.plans.flatMap((p) =>
          p.items.filter((i) => i.state === 'migrating' || i.state === 'cleaning').map((i) => [nc.host, p.migrationId, i.instanceId] as [string, string, string])));
        for (const ev of events) {
          step(sim, limits);
          check(sim, limits, all);
          const m = migrating();
          const target = 'pick' in ev ? m[ev.pick % Math.max(1, m.length)] : undefined;
          switch (ev.kind) {
            case 'finish':
              if (target && !switchOver(w, ...target)) finishCleaning(w, ...target);
              break;
            case 'fail':
              if (target) failTransfer(w, ...target, 'network');
              break;
            case 'toggleEnabled': {
              const nc = sim.ncs.get(HOSTS[ev.host] as string);
              if (nc) nc.nodeState = nc.nodeState === 'enabled' ? 'disabled' : 'enabled';
              break;
            }
            case 'toggleUp': {
              const nc = sim.ncs.get(HOSTS[ev.host] as string);
              if (nc) nc.up = !nc.up;
              break;
            }
            case 'time':
              sim.now += ev.ms;
              break;
            case 'cancel': {
              const p = sim.ncs.get(HOSTS[1] as string)?.plans[0];
              if (p) handleMigrate(w, p.source, { action: 'rollback', role: 'source', migrationId: p.migrationId, reason: 'cancelled', cancel: true });
              break;
            }
          }
          check(sim, limits, all);
        }

        // Calm: every node back, migrations finish, time moves on.
        for (const nc of sim.ncs.values()) nc.up = true;
        const settled = (): boolean => [...sim.ncs.values()].every((nc) => nc.incoming.length === 0 && nc.plans.every((p) => p.items.every((i) => isFinal(i.state))));
        for (let k = 0; k < 200 && !settled(); k++) {
          step(sim, limits);
          check(sim, limits, all);
          for (const t of migrating()) if (!switchOver(w, ...t)) finishCleaning(w, ...t);
          sim.now += 700;
        }
        for (const nc of sim.ncs.values()) {
          for (const p of nc.plans) for (const i of p.items) expect(isFinal(i.state), `${p.migrationId} ${i.instanceId} ${i.state}`).toBe(true);
          expect(nc.incoming).toEqual([]);
        }
        for (const iid of all) {
          const copies = [...sim.ncs.values()].filter((nc) => nc.instances.some((i) => i.instanceId === iid && i.state !== 'terminated'));
          expect(copies).toHaveLength(1);
        }
      },
    ), { numRuns: 200 });
  });
});
