import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { observe } from '../../nc/instanceView.js';
import type { InstancePhase, InstanceRecord } from '../../nc/ncStore.js';
import { decideTerminate, markShuttingDown, markTerminated, noteEndedBy, pruneTombstones } from '../../nc/termination.js';
import { domain, record, snapshot } from './fixtures.js';

const ID = 'i-00000001';

describe('terminate decision', () => {
  const cases: [string, InstanceRecord | null, string, Record<string, unknown>][] = [
    ['unknown id', null, 'notFound', {}],
    ['running with a running domain', record(ID, 'running'), 'destroy', { previousState: 'running' }],
    ['running with a shut-off domain', record(ID, 'running'), 'destroy', { previousState: 'stopped' }],
    ['pending', record(ID, 'pending'), 'destroy', { previousState: 'pending' }],
    ['shutting-down replays where it came from', record(ID, 'shutting-down', { terminatedFrom: 'running' }), 'destroy', { previousState: 'running' }],
    ['terminated replays the first answer', record(ID, 'terminated', { terminatedFrom: 'running' }), 'answer',
      { answer: { instanceId: ID, previousState: 'running', currentState: 'terminated' } }],
  ];
  it.each(cases)('%s', (name, rec, kind, fields) => {
    const obs = observe([domain(ID, name.includes('shut-off') ? 'shutoff' : 'running')], 0);
    const d = decideTerminate(snapshot(rec ? [rec] : []), ID, obs);
    expect(d).toMatchObject({ kind, ...fields });
  });

  it.each([
    ['ready in a prepared plan', 'ready'], ['migrating', 'migrating'], ['cleaning', 'cleaning'],
  ] as const)('refuses an instance that is %s', (_n, migrationState) => {
    const d = decideTerminate(snapshot([record(ID, 'running', { migrationState, migrationId: 'mig-0000000a' })]), ID, undefined);
    expect(d).toEqual({ kind: 'migrating', migrationState });
  });

  it('refuses an id that is incoming to this node', () => {
    const snap = snapshot([]);
    snap.incoming[ID] = {
      migrationId: 'mig-0000000a', instanceId: ID, source: '127.0.10.9', reservationId: 'r-00000001', imageId: 'emi-00000001',
      ownerId: 'alice', launchTime: 1, vmType: record(ID, 'running').vmType, state: 'ready', since: 0,
    };
    expect(decideTerminate(snap, ID, undefined)).toEqual({ kind: 'migrating', migrationState: 'ready' });
  });

  // A move's forget (cc/rehome.ts, cc/moveRepair.ts) ends only a stopped copy; a user's ends any.
  it.each([
    ['a move forgets a stopped copy', 'move', 'shutoff', 'running' as const, { kind: 'destroy', previousState: 'stopped' }],
    ['a move never ends a running guest', 'move', 'running', 'running' as const, { kind: 'notStopped', state: 'running' }],
    ['a move never ends a pending copy', 'move', 'running', 'pending' as const, { kind: 'notStopped', state: 'pending' }],
    ['a move replays a tombstone', 'move', 'running', 'terminated' as const, { kind: 'answer' }],
    ['a user ends a running guest', 'user', 'running', 'running' as const, { kind: 'destroy', previousState: 'running' }],
  ] as const)('%s', (_n, reason, domainState, phase, expected) => {
    const obs = observe([domain(ID, domainState)], 0);
    expect(decideTerminate(snapshot([record(ID, phase)]), ID, obs, reason)).toMatchObject(expected);
  });

  it.each([
    ['none yet, a move', undefined, 'move', 'move', true],
    ['none yet, no reason', undefined, undefined, undefined, false],
    ['a move\'s tombstone, then its user', 'move', 'user', 'user', true],
    ['a user\'s tombstone, then a move: the user\'s stays', 'user', 'move', 'user', false],
    ['a user\'s, repeated', 'user', 'user', 'user', false],
  ] as const)('endedBy: %s', (_n, before, reason, after, changed) => {
    const rec = record(ID, 'terminated', before ? { endedBy: before } : {});
    expect(noteEndedBy(rec, reason)).toBe(changed);
    expect(rec.endedBy).toBe(after);
  });

  it('marks shutting-down once, keeping the first previous state', () => {
    const rec = record(ID, 'running');
    markShuttingDown(rec, 'running', 10);
    markShuttingDown(rec, 'stopped', 20);
    expect(rec).toMatchObject({ phase: 'shutting-down', terminatedFrom: 'running', since: 10 });
    markTerminated(rec, 30);
    markTerminated(rec, 40);
    expect(rec).toMatchObject({ phase: 'terminated', terminatedFrom: 'running', since: 30 });
  });
});

describe('tombstones', () => {
  const policy = { ttlMs: 1000, maxCount: 2 };

  it.each([
    ['a fresh tombstone is kept', [['terminated', 900]], 1000, []],
    ['a tombstone at the TTL goes', [['terminated', 0]], 1000, ['i-00000000']],
    ['live instances are never pruned, however old', [['running', 0], ['pending', 0], ['shutting-down', 0]], 10_000, []],
    ['beyond the count, the oldest go', [['terminated', 10], ['terminated', 30], ['terminated', 20]], 100, ['i-00000000']],
  ] as [string, [InstancePhase, number][], number, string[]][])('%s', (_n, recs, now, dropped) => {
    const instances = Object.fromEntries(recs.map(([p, since], i) => [`i-0000000${i}`, record(`i-0000000${i}`, p, { since })]));
    expect(pruneTombstones(instances, now, policy)).toEqual(dropped);
    for (const id of dropped) expect(instances[id]).toBeUndefined();
  });

  it('keeps at most maxCount tombstones and every live instance (property)', () => {
    const phase = fc.constantFrom('pending', 'running', 'shutting-down', 'terminated' as const);
    fc.assert(fc.property(fc.array(fc.tuple(phase, fc.integer({ min: 0, max: 5000 })), { maxLength: 20 }), fc.integer({ min: 0, max: 6000 }), (recs, now) => {
      const instances = Object.fromEntries(recs.map(([p, since], i) => [`i-000000${(16 + i).toString(16)}`, record(`i-000000${(16 + i).toString(16)}`, p, { since })]));
      const live = Object.values(instances).filter((r) => r.phase !== 'terminated').length;
      pruneTombstones(instances, now, policy);
      const left = Object.values(instances);
      expect(left.filter((r) => r.phase !== 'terminated')).toHaveLength(live);
      const tombs = left.filter((r) => r.phase === 'terminated');
      expect(tombs.length).toBeLessThanOrEqual(policy.maxCount);
      for (const t of tombs) expect(now - t.since).toBeLessThan(policy.ttlMs);
    }));
  });
});
