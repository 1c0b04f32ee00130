/**
 * What the CLC records of the migrations it polls (pure): item changes as observed, one outcome per
 * plan (completed, rolled back, cancelled), plans first seen on a poll, finished plans forgotten
 * once their answering CC drops them, and nothing touched for a partition that did not answer.
 */
import { describe, expect, it } from 'vitest';
import type { ItemState } from '../../../shared/protocol/migrationProtocol.js';
import { observeMigrations, outcomeKind, trackedOf, type ObservedPlan, type TrackedMigrations } from '../../../clc/events/migrationWatch.js';

const SRC = '127.0.0.1';
const DST = '127.0.0.2';

function observed(states: readonly ItemState[], opts: { id?: string; partition?: string; cancel?: boolean } = {}): ObservedPlan {
  return {
    partition: opts.partition ?? 'cluster01',
    plan: {
      migrationId: opts.id ?? 'mig-00000001', source: SRC, cancelRequested: opts.cancel ?? false,
      items: states.map((state, i) => ({ instanceId: `i-0000000${i + 1}`, destination: DST, state, ...(state === 'rolled-back' ? { error: 'destination stopped answering' } : {}) })),
    },
  };
}

const kinds = (o: { events: readonly { kind: string }[] }): string[] => o.events.map((e) => e.kind);
const answered = new Set(['cluster01']);

describe('outcomeKind', () => {
  it.each<[ItemState[], boolean, string]>([
    [['completed', 'completed'], false, 'migration.completed'],
    [['completed', 'rolled-back'], false, 'migration.rolled-back'],
    [['failed'], false, 'migration.rolled-back'],
    [['completed', 'cancelled'], false, 'migration.cancelled'],
    [['rolled-back'], true, 'migration.cancelled'],
    [['completed'], true, 'migration.completed'],
  ])('%j (cancel requested: %s) is %s', (states, cancel, kind) => {
    expect(outcomeKind(states, cancel)).toBe(kind);
  });
});

describe('observeMigrations', () => {
  it('records each observed item change once, then the outcome once; an unchanged poll records nothing', () => {
    let tracked: TrackedMigrations = { 'mig-00000001': trackedOf(observed(['queued', 'queued'])) };
    const steps: [ItemState[], string[]][] = [
      [['queued', 'queued'], []],
      [['migrating', 'queued'], ['migration.item']],
      [['completed', 'preparing'], ['migration.item', 'migration.item']],
      [['completed', 'completed'], ['migration.item', 'migration.completed']],
      [['completed', 'completed'], []],
    ];
    for (const [states, expected] of steps) {
      const o = observeMigrations(tracked, answered, [observed(states)]);
      expect(kinds(o)).toEqual(expected);
      tracked = o.next;
    }
    expect(tracked['mig-00000001']?.final).toBe(true);
  });

  it('an item event names its instance, both states, the destination and any error', () => {
    const tracked = { 'mig-00000001': trackedOf(observed(['migrating'])) };
    const [e] = observeMigrations(tracked, answered, [observed(['rolled-back'])]).events;
    expect(e).toMatchObject({
      kind: 'migration.item', migrationId: 'mig-00000001', instanceId: 'i-00000001', host: SRC, actor: 'system',
      details: { from: 'migrating', to: 'rolled-back', destination: DST, error: 'destination stopped answering' },
    });
  });

  it('a plan nobody recorded is recorded as first seen on a poll, with what its items already did', () => {
    const o = observeMigrations({}, answered, [observed(['migrating', 'queued'])]);
    expect(kinds(o)).toEqual(['migration.planned', 'migration.item']);
    expect(o.events[0]?.details).toMatchObject({ observed: 'poll' });
    expect(o.next['mig-00000001']?.items).toEqual({ 'i-00000001': 'migrating', 'i-00000002': 'queued' });
  });

  it('a plan first seen already finished gets its planned event, its items and its outcome', () => {
    expect(kinds(observeMigrations({}, answered, [observed(['completed'])]))).toEqual(['migration.planned', 'migration.item', 'migration.completed']);
  });

  it('a finished plan its answering CC no longer reports is forgotten; an unfinished one is kept (its CC may come back with it)', () => {
    const tracked: TrackedMigrations = {
      'mig-00000001': { ...trackedOf(observed(['completed'])), final: true },
      'mig-00000002': trackedOf(observed(['migrating'], { id: 'mig-00000002' })),
    };
    const o = observeMigrations(tracked, answered, []);
    expect(o.events).toEqual([]);
    expect(Object.keys(o.next)).toEqual(['mig-00000002']);
  });

  it('a partition that did not answer keeps its plans as they were, finished or not', () => {
    const tracked: TrackedMigrations = { 'mig-00000009': { ...trackedOf(observed(['completed'], { id: 'mig-00000009', partition: 'cluster02' })), final: true } };
    const o = observeMigrations(tracked, answered, []);
    expect(o.next).toEqual(tracked);
  });
});
