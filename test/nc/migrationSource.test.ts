import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { observe } from '../../nc/instanceView.js';
import { planView, pruneFinishedPlans } from '../../nc/migrationPlans.js';
import {
  applyCleaning, applyCommit, applyCompleted, applySourcePrepare, decideCommit, decideOutcome, decideReplan,
  decideSourcePrepare, decideSourceRollback, endItem, hypervisorMigrationId, migratingAllowanceMs,
  timeoutReason, type SourcePrepareInput,
} from '../../nc/migrationSource.js';
import type { NcSnapshot, StoredItem, StoredPlan } from '../../nc/ncStore.js';
import type { ItemState, MigrationPlan, NcMigrateRequest } from '../../shared/protocol/migrationProtocol.js';
import { domain, record, snapshot } from './fixtures.js';
import { A, B, C, DST, item, MIG, MIG2, plan, SRC, TIMEOUTS } from './migrationFixtures.js';

const NOW = 5000;
const running = (ids: string[]) => snapshot(ids.map((id) => record(id, 'running')));
const allUp = (ids: string[]) => observe(ids.map((id) => domain(id)), 0);

function stored(p: MigrationPlan, over: Partial<StoredPlan> = {}): StoredPlan {
  return { ...p, receivedAt: 0, ...over };
}

function withPlan(snap: NcSnapshot, p: StoredPlan): NcSnapshot {
  const s = structuredClone(snap);
  applySourcePrepare(s, p);
  return s;
}

describe('source prepare (decideSourcePrepare)', () => {
  const base = (over: Partial<SourcePrepareInput> = {}): SourcePrepareInput => ({
    host: SRC, snapshot: running([A, B]), plan: plan([item(A)]), observation: allUp([A, B]), now: NOW, ...over,
  });
  const busy = withPlan(running([A, B]), stored(plan([item(A)], { migrationId: MIG2 })));
  const draining = withPlan(running([A, B]), stored(plan([item(B)], { migrationId: MIG2, request: { kind: 'drain', destinations: [], allowHosts: true, reserveDestinations: false } })));
  const drain = { kind: 'drain' as const, destinations: [], allowHosts: true, reserveDestinations: false };
  const cases: [string, Partial<SourcePrepareInput>, string][] = [
    ['a running instance is accepted', {}, 'accept'],
    ['an instance that is not here', { plan: plan([item(C)]) }, 'InstanceNotFound'],
    ['a terminated instance is not here', { snapshot: snapshot([record(A, 'terminated')]) }, 'InstanceNotFound'],
    ['a pending instance', { snapshot: snapshot([record(A, 'pending')]) }, 'InstanceNotRunning'],
    ['a shut-off domain', { observation: observe([domain(A, 'shutoff')], 0) }, 'InstanceNotRunning'],
    ['a paused domain', { observation: observe([domain(A, 'paused')], 0) }, 'InstanceNotRunning'],
    ['a vanished domain', { observation: observe([], 0) }, 'InstanceNotRunning'],
    ['an instance in another live plan', { snapshot: busy }, 'MigrationInProgress'],
    ['a second drain of the node', { snapshot: draining, plan: plan([item(A)], { request: drain }) }, 'MigrationInProgress'],
    ['an instance plan beside a drain is fine', { snapshot: draining, plan: plan([item(A)]) }, 'accept'],
    ['a plan for another source', { plan: plan([item(A)], { source: DST }) }, 'MigrationPlanInvalid'],
    ['the same instance twice', { plan: plan([item(A), item(A)]) }, 'MigrationPlanInvalid'],
    ['an item already migrating', { plan: plan([item(A, { state: 'migrating' })]) }, 'MigrationPlanInvalid'],
    ['a queued item without a destination', { plan: plan([item(A, { destination: '' })]) }, 'MigrationPlanInvalid'],
    ['an item to its own source', { plan: plan([item(A, { destination: SRC })]) }, 'MigrationPlanInvalid'],
    ['a failed item is not checked', { plan: plan([item(A), item(C, { state: 'failed', destination: '', error: 'too-large' })]) }, 'accept'],
    // Issue 18: a drain's cold moves, made by the CC before it records them; the instances are gone from here.
    ['a completed cold item of an instance no longer here', { plan: plan([item(C, { state: 'completed', cold: true })], { request: drain }) }, 'accept'],
    ['a failed cold item', { plan: plan([item(C, { state: 'failed', destination: '', error: 'not re-homed: no room', cold: true })], { request: drain }) }, 'accept'],
    ['a queued cold item (it would never run)', { plan: plan([item(C, { cold: true })], { request: drain }) }, 'MigrationPlanInvalid'],
    ['a completed item that is not cold', { plan: plan([item(C, { state: 'completed' })], { request: drain }) }, 'MigrationPlanInvalid'],
  ];
  it.each(cases)('%s', (_n, over, expected) => {
    const d = decideSourcePrepare(base(over));
    expect(d.kind === 'refuse' ? d.code : d.kind).toBe(expected);
  });

  it('answers a known migration id with the plan as held, whatever the repeat carries', () => {
    const held = stored(plan([item(A)]));
    const d = decideSourcePrepare(base({ snapshot: withPlan(running([A]), held), plan: plan([item(B)], { source: DST }) }));
    expect(d).toEqual({ kind: 'answer', plan: held });
  });

  it('keeps items queued and failed items failed, and makes the queued instances ready in one transition', () => {
    const d = decideSourcePrepare(base({ plan: plan([item(A), item(C, { state: 'failed', destination: '' })]) }));
    if (d.kind !== 'accept') throw new Error(d.kind);
    expect(d.plan.items.map((i) => i.state)).toEqual(['queued', 'failed']);
    expect(d.plan.receivedAt).toBe(NOW);
    const s = running([A, B]);
    applySourcePrepare(s, d.plan);
    expect(s.instances[A]).toMatchObject({ migrationState: 'ready', migrationId: MIG });
    expect(s.instances[B]?.migrationState).toBe('none');
  });

  it('keeps a plan of cold moves finished at once, touching no instance record (issue 18)', () => {
    const d = decideSourcePrepare(base({ plan: plan([item(C, { state: 'completed', cold: true })], { request: drain }) }));
    if (d.kind !== 'accept') throw new Error(d.kind);
    expect(d.plan.finishedAt).toBe(NOW);
    const s = running([A, B]);
    const before = structuredClone(s.instances);
    applySourcePrepare(s, d.plan);
    expect(s.instances).toEqual(before);
    expect(s.plans[MIG]?.items).toEqual([expect.objectContaining({ instanceId: C, state: 'completed', cold: true })]);
  });

  it('marks a plan of failed items only as finished at once', () => {
    const d = decideSourcePrepare(base({ plan: plan([item(C, { state: 'failed', destination: '' })]) }));
    expect(d).toMatchObject({ kind: 'accept', plan: { finishedAt: NOW } });
  });
});

describe('commit, replan and rollback decisions', () => {
  const prepared = (state: ItemState = 'queued', dest = DST) => {
    const s = withPlan(running([A, B]), stored(plan([item(A, { state: 'queued', destination: dest }), item(B)])));
    const it0 = s.plans[MIG]?.items[0] as StoredItem;
    it0.state = state;
    return s;
  };
  const commit = (over: Partial<Extract<NcMigrateRequest, { action: 'commit' }>> = {}) => ({
    action: 'commit' as const, migrationId: MIG, instanceId: A, destination: DST, destinationUri: 'fake://x', ...over,
  });

  it.each([
    ['a queued item starts', prepared(), commit(), 'start'],
    ['an unknown plan', running([A]), commit(), 'MigrationNotPrepared'],
    ['an unknown item', prepared(), commit({ instanceId: C }), 'MigrationNotPrepared'],
    ['another destination', prepared(), commit({ destination: '127.0.10.9' }), 'MigrationNotPrepared'],
    ['a repeat while migrating answers', prepared('migrating'), commit(), 'answer'],
    ['a repeat while cleaning answers', prepared('cleaning'), commit(), 'answer'],
    ['a repeat after completion answers', prepared('completed'), commit(), 'answer'],
    ['a rolled-back item', prepared('rolled-back'), commit(), 'MigrationNotPrepared'],
    ['a failed item', prepared('failed'), commit(), 'MigrationNotPrepared'],
    ['a cancelled item', prepared('cancelled'), commit(), 'MigrationNotPrepared'],
  ] as [string, NcSnapshot, ReturnType<typeof commit>, string][])('commit: %s', (_n, snap, req, expected) => {
    const d = decideCommit(SRC, snap, req);
    expect(d.kind === 'refuse' ? d.code : d.kind).toBe(expected);
  });

  it('commit writes migrating on item and instance, with what a restart needs', () => {
    const s = prepared();
    applyCommit(s, commit(), NOW);
    expect(s.plans[MIG]?.items[0]).toMatchObject({ state: 'migrating', startedAt: NOW, destinationUri: 'fake://x' });
    expect(s.instances[A]?.migrationState).toBe('migrating');
  });

  const rp = (instanceId: string, destination: string, error?: string) => ({ action: 'replan' as const, migrationId: MIG, instanceId, destination, error });
  it.each([
    ['a queued item moves', prepared(), rp(A, '127.0.10.3'), 'move'],
    ['a queued item fails', prepared(), rp(A, '', 'nothing fits'), 'fail'],
    ['the same destination again changes nothing', prepared(), rp(A, DST), 'answer'],
    ['failing a failed item again changes nothing', prepared('failed'), rp(A, ''), 'answer'],
    ['a migrating item', prepared('migrating'), rp(A, '127.0.10.3'), 'MigrationNotPrepared'],
    ['a completed item', prepared('completed'), rp(A, '127.0.10.3'), 'MigrationNotPrepared'],
    ['an unknown plan', running([A]), rp(A, '127.0.10.3'), 'MigrationNotPrepared'],
    ['its own source', prepared(), rp(A, SRC), 'MigrationPlanInvalid'],
  ] as [string, NcSnapshot, ReturnType<typeof rp>, string][])('replan: %s', (_n, snap, req, expected) => {
    const d = decideReplan(SRC, snap, req);
    expect(d.kind === 'refuse' ? d.code : d.kind).toBe(expected);
  });

  const rb = (over: Partial<Extract<NcMigrateRequest, { action: 'rollback' }>> = {}) => ({
    action: 'rollback' as const, role: 'source' as const, migrationId: MIG, reason: 'r', cancel: false, ...over,
  });
  it.each([
    ['unknown plan: nothing', running([A]), rb(), { kind: 'nothing' }],
    ['unknown item: nothing', prepared(), rb({ instanceId: C }), { kind: 'nothing' }],
    ['one queued item ends', prepared(), rb({ instanceId: A }), { kind: 'apply', end: [A], abort: [] }],
    ['the whole plan', prepared(), rb(), { kind: 'apply', end: [A, B], abort: [] }],
    ['a migrating item is aborted', prepared('migrating'), rb(), { kind: 'apply', end: [B], abort: [A] }],
    ['cleaning is not undone', prepared('cleaning'), rb({ instanceId: A }), { kind: 'nothing' }],
    ['completed is not undone', prepared('completed'), rb({ instanceId: A }), { kind: 'nothing' }],
    ['cancel sets cancelRequested', prepared('completed'), rb({ cancel: true }), { kind: 'apply', end: [B], setCancelRequested: true }],
    ['an empty reason gets one', prepared(), rb({ reason: '', cancel: true }), { kind: 'apply', reason: 'cancelled' }],
  ] as [string, NcSnapshot, ReturnType<typeof rb>, object][])('rollback: %s', (_n, snap, req, expected) => {
    expect(decideSourceRollback(snap, req)).toMatchObject(expected);
  });

  it('ending an item releases its instance, once, and finishes the plan with its last item', () => {
    const s = prepared();
    endItem(s, MIG, A, 'rolled-back', 'why', NOW);
    endItem(s, MIG, A, 'cancelled', 'later', NOW + 1);
    expect(s.plans[MIG]?.items[0]).toMatchObject({ state: 'rolled-back', error: 'why', endedAt: NOW });
    expect(s.instances[A]).toMatchObject({ migrationState: 'none' });
    expect(s.instances[A]?.migrationId).toBeUndefined();
    expect(s.plans[MIG]?.finishedAt).toBeUndefined();
    endItem(s, MIG, B, 'failed', 'no room', NOW + 2);
    expect(s.plans[MIG]?.finishedAt).toBe(NOW + 2);
  });

  it('success goes through cleaning to completed, removing the record in the same update', () => {
    const s = prepared();
    applyCommit(s, commit(), NOW);
    const stats = { elapsedMs: 10, downtimeMs: 1, bytesTransferred: 99, iterations: 3 };
    applyCleaning(s, MIG, A, stats, undefined);
    expect(s.plans[MIG]?.items[0]).toMatchObject({ state: 'cleaning', stats });
    expect(s.instances[A]?.migrationState).toBe('cleaning');
    applyCompleted(s, MIG, A, NOW + 5);
    expect(s.plans[MIG]?.items[0]).toMatchObject({ state: 'completed', endedAt: NOW + 5, stats });
    expect(s.instances[A]).toBeUndefined();
  });
});

describe('outcome (decideOutcome)', () => {
  const migrating = (abort?: StoredItem['abort']): StoredItem => ({ ...item(A, { state: 'migrating', startedAt: 0 }), ...(abort ? { abort } : {}) });
  const stats = { elapsedMs: 1, downtimeMs: 1, bytesTransferred: 1, iterations: 1 };
  it.each([
    ['success', migrating(), { kind: 'completed', stats }, { next: 'cleaning', stats, inferred: false }],
    ['failure, VM here', migrating(), { kind: 'failed', error: 'no converge', domain: 'present' }, { next: 'rolled-back', error: 'no converge' }],
    ['failure, VM gone from here: it moved', migrating(), { kind: 'failed', error: 'no record', domain: 'missing' }, { next: 'cleaning', inferred: true }],
    ['aborted by a rollback', migrating({ reason: 'operator', cancel: false }), { kind: 'failed', error: 'aborted', domain: 'present' }, { next: 'rolled-back', error: 'operator' }],
    ['aborted by a cancel', migrating({ reason: 'cancel it', cancel: true }), { kind: 'failed', error: 'aborted', domain: 'present' }, { next: 'cancelled', error: 'cancel it' }],
    ['an abort that came too late', migrating({ reason: 'x', cancel: true }), { kind: 'completed', stats }, { next: 'cleaning', stats }],
  ] as const)('%s', (_n, it0, outcome, expected) => {
    expect(decideOutcome(it0, outcome)).toMatchObject(expected);
  });
});

describe('source timeouts', () => {
  const migrating = (over: Partial<StoredItem> = {}): StoredItem => item(A, { state: 'migrating', startedAt: 0, ...over });
  it('allows base + per GiB of memory', () => {
    expect(migratingAllowanceMs(TIMEOUTS, 1024)).toBe(30_000 + 60_000);
    expect(migratingAllowanceMs(TIMEOUTS, 256)).toBe(30_000 + 15_000);
  });
  it.each([
    ['within both limits', migrating(), 40_000, 44_999, undefined],
    ['past the completion limit', migrating(), 44_000, 45_000, 'timed out'],
    ['no progress for stallMs', migrating(), 10_000, 30_000, 'stalled'],
    ['progress keeps it alive', migrating(), 29_000, 30_000, undefined],
    ['an abort already asked', migrating({ abort: { reason: 'x', cancel: false } }), 0, 99_000, undefined],
    ['not migrating', item(A), 0, 99_000, undefined],
  ] as [string, StoredItem, number, number, string | undefined][])('%s', (_n, it0, lastProgressAt, now, expected) => {
    const r = timeoutReason(it0, TIMEOUTS, lastProgressAt, now);
    if (expected === undefined) expect(r).toBeUndefined();
    else expect(r).toContain(expected);
  });
});

describe('plan retention and views', () => {
  const policy = { ttlMs: 1000, maxCount: 2 };
  const finished = (id: string, at: number): StoredPlan => stored(plan([item(A, { state: 'completed' })], { migrationId: id }), { finishedAt: at });

  it('drops finished plans by age and count, never active ones', () => {
    const plans: Record<string, StoredPlan> = {
      'mig-00000001': finished('mig-00000001', 100),
      'mig-00000002': finished('mig-00000002', 300),
      'mig-00000003': finished('mig-00000003', 200),
      'mig-00000004': stored(plan([item(A)], { migrationId: 'mig-00000004' })),
      'mig-00000005': finished('mig-00000005', 0),
    };
    expect(pruneFinishedPlans(plans, 1050, policy).sort()).toEqual(['mig-00000001', 'mig-00000005']);
    expect(Object.keys(plans).sort()).toEqual(['mig-00000002', 'mig-00000003', 'mig-00000004']);
  });

  it('keeps every active plan and at most maxCount fresh finished ones (property)', () => {
    fc.assert(fc.property(fc.array(fc.option(fc.integer({ min: 0, max: 3000 })), { maxLength: 12 }), fc.integer({ min: 0, max: 4000 }), (ages, now) => {
      const plans: Record<string, StoredPlan> = {};
      ages.forEach((at, i) => {
        const id = `mig-000000${(16 + i).toString(16)}`;
        plans[id] = at === null ? stored(plan([item(A)], { migrationId: id })) : finished(id, at);
      });
      const active = ages.filter((a) => a === null).length;
      pruneFinishedPlans(plans, now, policy);
      const left = Object.values(plans);
      expect(left.filter((p) => p.finishedAt === undefined)).toHaveLength(active);
      const done = left.filter((p) => p.finishedAt !== undefined);
      expect(done.length).toBeLessThanOrEqual(policy.maxCount);
      for (const p of done) expect(now - (p.finishedAt ?? 0)).toBeLessThan(policy.ttlMs);
    }));
  });

  it('shows the contract plan: private fields dropped, live progress for migrating items', () => {
    const p = stored(plan([item(A, { state: 'migrating' }), item(B)]));
    (p.items[0] as StoredItem).destinationUri = 'fake://x';
    (p.items[0] as StoredItem).abort = { reason: 'r', cancel: false };
    const progress = { bytesTotal: 10, bytesTransferred: 5, bytesRemaining: 5, iteration: 1 };
    const v = planView({ ...p, finishedAt: 3 }, (id) => (id === A ? progress : undefined));
    expect(v.items[0]).toEqual({ ...item(A, { state: 'migrating' }), progress });
    expect(v.items[1]).toEqual(item(B));
    expect(Object.keys(v)).not.toContain('receivedAt');
    expect(Object.keys(v)).not.toContain('finishedAt');
  });

  it('derives one hypervisor migration id per item, the same on both sides', () => {
    expect(hypervisorMigrationId(MIG, A)).toBe('mig-0000000a-i-0000000a');
    expect(hypervisorMigrationId(MIG, A)).not.toBe(hypervisorMigrationId(MIG, B));
  });
});
