import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, reconcile } from '../../../cc/migration/coordinator.js';
import type { Effect } from '../../../cc/migration/effects.js';
import { backstopMs, type Mark } from '../../../cc/migration/marks.js';
import type { MigrationNode } from '../../../cc/migration/nodes.js';
import { inFlight, observedPhase } from '../../../cc/migration/phases.js';
import { incomingAt, itemKey, liveInstance } from '../../../cc/migration/plans.js';
import type { Limits } from '../../../cc/migration/settings.js';
import type { ItemState, MigrationPlan } from '../../../shared/protocol/migrationProtocol.js';
import { instance, slots } from '../fakeNodes.js';
import { D1, D2, D3, id, item, MIG, MIG2, node, plan, record, running, S, TIMEOUTS, type NodeOver } from './builders.js';

const LIMITS: Limits = { perSource: 2, perDestination: 2, perCluster: 8 };
const S2 = '127.0.11.5';

function show(e: Effect): string {
  switch (e.kind) {
    case 'rollback': return `rollback-${e.side}${e.cancel ? '-cancel' : ''} ${e.instanceId ?? '*'}@${e.host}`;
    case 'replan': return `replan ${e.instanceId}@${e.source}→${e.destination}`;
    case 'prepareDestination': return `prepare ${e.instanceId}@${e.destination}${e.credentialGeneration !== undefined ? ` gen ${e.credentialGeneration}` : ''}`;
    case 'commit': return `commit ${e.instanceId}@${e.source}→${e.destination}${e.credentialGeneration !== undefined ? ` gen ${e.credentialGeneration}` : ''}`;
    case 'failItem': return `fail ${e.instanceId}@${e.source}`;
  }
}

const mark = (over: Partial<Mark> = {}): Mark => ({ phase: 'preparing', destination: D1, since: 0, asked: true, refused: [], ...over });
const key = (n: number, mig = MIG): string => itemKey(mig, id(n));

interface Row {
  readonly name: string;
  readonly nodes: MigrationNode[];
  readonly marks?: [string, Mark][];
  readonly now?: number;
  readonly limits?: Partial<Limits>;
  readonly effects: string[];
  /** Substrings the effects' reasons must contain, by effect index. */
  readonly reasons?: Record<number, string>;
  readonly fencedUnknown?: boolean;
}

/** Source S running ids 1..n with one plan; destinations D1..D3. */
function world(p: MigrationPlan, over: Record<string, NodeOver> = {}, n = 4): MigrationNode[] {
  const ids = Array.from({ length: n }, (_, k) => id(k + 1));
  return [node(S, { running: running(...ids), plans: [p], ...over[S] }), node(D1, over[D1]), node(D2, over[D2]), node(D3, over[D3])];
}

const rows: Row[] = [
  // Rule 7: starts and limits.
  { name: 'queued items start in plan order, per-source limit 2', nodes: world(plan([item(id(1), D1), item(id(2), D2), item(id(3), D3)])), effects: [`prepare ${id(1)}@${D1}`, `prepare ${id(2)}@${D2}`] },
  { name: 'an item already migrating holds a source slot', nodes: world(plan([item(id(1), D1, { state: 'migrating' }), item(id(2), D2), item(id(3), D3)])), effects: [`prepare ${id(2)}@${D2}`] },
  { name: 'per-destination limit: the second item to D1 waits, a later one to D2 goes ahead', limits: { perDestination: 1, perSource: 3 },
    nodes: world(plan([item(id(1), D1), item(id(2), D1), item(id(3), D2)])), effects: [`prepare ${id(1)}@${D1}`, `prepare ${id(3)}@${D2}`] },
  { name: 'per-cluster limit: the older plan goes first', limits: { perCluster: 1 },
    nodes: [node(S, { running: running(id(1)), plans: [plan([item(id(1), D1)], { createdAt: 5 })] }),
      node(S2, { running: running(id(9)), plans: [plan([item(id(9), D2)], { source: S2, migrationId: MIG2, createdAt: 1 })] }), node(D1), node(D2)],
    effects: [`prepare ${id(9)}@${D2}`] },
  { name: 'cleaning items still hold their slots', limits: { perSource: 1 }, nodes: world(plan([item(id(1), D1, { state: 'cleaning' }), item(id(2), D2)])), effects: [] },
  { name: 'final items hold none', limits: { perSource: 1 }, nodes: world(plan([item(id(1), D1, { state: 'completed' }), item(id(2), D2)])), effects: [`prepare ${id(2)}@${D2}`] },
  { name: 'its own reservation does not make its destination look full', nodes: world(plan([item(id(1), D1)]), { [D1]: { capacity: slots(1) } }), effects: [`prepare ${id(1)}@${D1}`] },
  { name: 'nothing starts while the source is unreachable', nodes: world(plan([item(id(1), D1)]), { [S]: { reachable: false } }), effects: [] },
  // Rule 7: re-check at execution time.
  { name: 'destination disabled since planning → re-planned', nodes: world(plan([item(id(1), D1)]), { [D1]: { enabled: false }, [D2]: { capacity: slots(0) } }),
    effects: [`replan ${id(1)}@${S}→${D3}`], reasons: { 0: `destination ${D1} is disabled` } },
  { name: 'destination being drained since planning → re-planned',
    nodes: [...world(plan([item(id(1), D1)]), { [D2]: { capacity: slots(0) } }).filter((n) => n.host !== D1),
      node(D1, { running: running(id(0x30)), plans: [plan([item(id(0x30), D3)], { source: D1, migrationId: MIG2 })] })],
    effects: [`replan ${id(1)}@${S}→${D3}`, `prepare ${id(0x30)}@${D3}`], reasons: { 0: 'being drained' } },
  { name: 'a disabled destination the plan named is used (allowDisabled)', nodes: world(plan([item(id(1), D1)], { request: { destinations: [D1] } }), { [D1]: { enabled: false } }),
    effects: [`prepare ${id(1)}@${D1}`] },
  { name: 'destination unreachable → re-planned', nodes: world(plan([item(id(1), D1)]), { [D1]: { reachable: false }, [D3]: { capacity: slots(0) } }), effects: [`replan ${id(1)}@${S}→${D2}`] },
  { name: 'destination unhealthy → re-planned', nodes: world(plan([item(id(1), D1)]), { [D1]: { healthy: false }, [D3]: { capacity: slots(0) } }), effects: [`replan ${id(1)}@${S}→${D2}`] },
  { name: 'destination filled by others → re-planned', nodes: world(plan([item(id(1), D1)]), { [D1]: { capacity: slots(1), running: running(id(0x40)) }, [D3]: { capacity: slots(0) } }),
    effects: [`replan ${id(1)}@${S}→${D2}`], reasons: { 0: 'is full' } },
  { name: 'a destination that refused is avoided when re-planning', nodes: world(plan([item(id(1), D1)]), { [D3]: { capacity: slots(0) } }),
    marks: [[key(1), mark({ phase: 'queued', asked: false, refused: [{ host: D1, reason: 'no room' }, { host: D2, reason: 'disabled' }] })]],
    effects: [`fail ${id(1)}@${S}`], reasons: { 0: 'refused: no room; no other destination' } },
  { name: 'a re-plan honours the plan\'s deny list', nodes: world(plan([item(id(1), D1)], { request: { destinations: [D2], allowHosts: false } }), { [D1]: { enabled: false } }),
    effects: [`replan ${id(1)}@${S}→${D3}`] },
  { name: 'unreachable destination, nowhere else to go → waits for it (an NC restart must not fail a drain)',
    nodes: world(plan([item(id(1), D1)], { request: { destinations: [D1] } }), { [D1]: { reachable: false } }), effects: [] },
  { name: 'unreachable destination, nowhere else to go, waited prepareMs → failed with the reason', now: TIMEOUTS.prepareMs,
    marks: [[key(1), mark({ phase: 'queued', asked: false, waitingSince: 0 })]],
    nodes: world(plan([item(id(1), D1)], { request: { destinations: [D1] } }), { [D1]: { reachable: false } }),
    effects: [`fail ${id(1)}@${S}`], reasons: { 0: 'unreachable; no other destination: no eligible destination' } },
  { name: 'disabled destination, nowhere else to go → failed at once', nodes: world(plan([item(id(1), D1)], { request: { destinations: [D1], allowHosts: false } }), { [D1]: { enabled: false }, [D2]: { enabled: false }, [D3]: { enabled: false } }),
    effects: [`fail ${id(1)}@${S}`], reasons: { 0: 'disabled; no other destination' } },
  { name: `after ${MAX_ATTEMPTS} destinations it fails instead`, nodes: world(plan([item(id(1), D1, { attempts: MAX_ATTEMPTS })]), { [D1]: { enabled: false } }),
    effects: [`fail ${id(1)}@${S}`], reasons: { 0: `gave up after ${MAX_ATTEMPTS}` } },
  { name: 'an instance that stopped running fails its item', nodes: world(plan([item(id(1), D1)]), { [S]: { instances: [{ ...instance(id(1)), state: 'stopped' }] } }),
    effects: [`fail ${id(1)}@${S}`], reasons: { 0: 'is stopped' } },
  { name: 'a re-planned item keeps its place: later items do not overtake it', limits: { perSource: 1 }, nodes: world(plan([item(id(1), D1), item(id(2), D2)]), { [D1]: { enabled: false } }),
    effects: [`replan ${id(1)}@${S}→${D2}`] },
  { name: 'a stale record elsewhere is rolled back before the item starts (never two destinations)',
    nodes: world(plan([item(id(1), D2)]), { [D1]: { incoming: [record(id(1), 'ready')] } }), effects: [`rollback-destination ${id(1)}@${D1}`] },
  // Rules 5-6: resend and commit.
  { name: 'a prepare without an answer is sent again', nodes: world(plan([item(id(1), D1)])), marks: [[key(1), mark({ since: 0 })]], now: 500, effects: [`prepare ${id(1)}@${D1}`] },
  { name: 'destination ready → commit', nodes: world(plan([item(id(1), D1)]), { [D1]: { incoming: [record(id(1), 'ready')] } }), effects: [`commit ${id(1)}@${S}→${D1}`] },
  // Host HA's fenced hosts (ccSetFencedHosts; sim seed 730).
  { name: 'destination ready but fenced by host HA → rolled back, never committed',
    nodes: world(plan([item(id(1), D1)]), { [D1]: { fenced: true, incoming: [record(id(1), 'ready')] } }),
    effects: [`rollback-source ${id(1)}@${S}`], reasons: { 0: `destination ${D1} is fenced by host HA` } },
  { name: 'no commit (nor resent prepare) while the CC has not heard which hosts are fenced', fencedUnknown: true,
    nodes: world(plan([item(id(1), D1), item(id(2), D2)]), { [D1]: { incoming: [record(id(1), 'ready')] } }),
    marks: [[key(2), mark({ destination: D2 })]], effects: [] },
  { name: 'a queued item whose destination is fenced is re-planned elsewhere',
    nodes: world(plan([item(id(1), D1)]), { [D1]: { fenced: true }, [D3]: { capacity: slots(0) } }),
    effects: [`replan ${id(1)}@${S}→${D2}`], reasons: { 0: 'fenced by host HA' } },
  { name: 'no commit while the destination is unreachable', nodes: world(plan([item(id(1), D1)]), { [D1]: { reachable: false, incoming: [record(id(1), 'ready')] } }), effects: [] },
  { name: 'no commit before the destination is ready', nodes: world(plan([item(id(1), D1)]), { [D1]: { incoming: [record(id(1), 'preparing')] } }), effects: [] },
  { name: 'a record migrating while the source still says queued: committed already, nothing to do',
    nodes: world(plan([item(id(1), D1)]), { [D1]: { incoming: [record(id(1), 'migrating')] } }), effects: [] },
  // Rule 6a: a source that lost its credential before its hypervisor started the migration re-joins.
  { name: 're-join: the destination holds an older generation → prepared again with the awaited one (never the source first)',
    nodes: world(plan([item(id(1), D1, { state: 'migrating', awaitingCredential: true, credentialGeneration: 1 })]), { [D1]: { incoming: [record(id(1), 'ready')] } }),
    marks: [[key(1), mark({ phase: 'migrating', asked: false })]], effects: [`prepare ${id(1)}@${D1} gen 1`] },
  { name: 're-join: the destination holds the awaited generation → commit with it',
    nodes: world(plan([item(id(1), D1, { state: 'migrating', awaitingCredential: true, credentialGeneration: 2 })]), { [D1]: { incoming: [record(id(1), 'ready', { credentialGeneration: 2 })] } }),
    effects: [`commit ${id(1)}@${S}→${D1} gen 2`] },
  { name: 're-join: a destination record still preparing the awaited generation → no commit yet',
    nodes: world(plan([item(id(1), D1, { state: 'migrating', awaitingCredential: true, credentialGeneration: 1 })]), { [D1]: { incoming: [record(id(1), 'preparing', { credentialGeneration: 1 })] } }),
    effects: [] },
  { name: 're-join: the destination no longer holds the record → give up: rollback (abort) on the source, the VM never left',
    nodes: world(plan([item(id(1), D1, { state: 'migrating', awaitingCredential: true, credentialGeneration: 1 })])),
    effects: [`rollback-source ${id(1)}@${S}`], reasons: { 0: 'no longer holds the incoming domain' } },
  { name: 're-join: the destination has not answered since the CC started → wait', nodes: world(plan([item(id(1), D1, { state: 'migrating', awaitingCredential: true, credentialGeneration: 1 })]), { [D1]: { migrationsKnown: false } }),
    effects: [] },
  { name: 're-join: destination unreachable → wait (the backstop bounds it)',
    nodes: world(plan([item(id(1), D1, { state: 'migrating', awaitingCredential: true, credentialGeneration: 1 })]), { [D1]: { reachable: false, incoming: [record(id(1), 'ready')] } }),
    effects: [] },
  { name: 're-join: the destination holds a later generation than the source asks for → nothing (the backstop decides)',
    nodes: world(plan([item(id(1), D1, { state: 'migrating', awaitingCredential: true, credentialGeneration: 1 })]), { [D1]: { incoming: [record(id(1), 'ready', { credentialGeneration: 2 })] } }),
    effects: [] },
  { name: 're-join: not while the CC has not heard which hosts are fenced', fencedUnknown: true,
    nodes: world(plan([item(id(1), D1, { state: 'migrating', awaitingCredential: true, credentialGeneration: 1 })]), { [D1]: { incoming: [record(id(1), 'ready')] } }),
    effects: [] },
  { name: 're-join: a fenced destination → rolled back',
    nodes: world(plan([item(id(1), D1, { state: 'migrating', awaitingCredential: true, credentialGeneration: 1 })]), { [D1]: { fenced: true, incoming: [record(id(1), 'ready')] } }),
    effects: [`rollback-source ${id(1)}@${S}`], reasons: { 0: 'fenced by host HA' } },
  { name: 'a migrating item that awaits nothing: no credential is re-issued, whatever the generations say',
    nodes: world(plan([item(id(1), D1, { state: 'migrating', credentialGeneration: 1 })]), { [D1]: { incoming: [record(id(1), 'ready')] } }), effects: [] },
  // Rule 2-3: timeouts.
  { name: 'prepare timeout (record still preparing) → rollback on the source', now: 1000,
    nodes: world(plan([item(id(1), D1)]), { [D1]: { incoming: [record(id(1), 'preparing')] } }), marks: [[key(1), mark({ asked: false })]],
    effects: [`rollback-source ${id(1)}@${S}`], reasons: { 0: 'not ready within 1000 ms' } },
  { name: 'prepare timeout (no answer at all) → rollback on the source', now: 1000, nodes: world(plan([item(id(1), D1)])), marks: [[key(1), mark()]],
    effects: [`rollback-source ${id(1)}@${S}`] },
  { name: 'ready timeout → rollback on the source', now: 1000, nodes: world(plan([item(id(1), D1)]), { [D1]: { incoming: [record(id(1), 'ready')] } }),
    marks: [[key(1), mark({ phase: 'ready', asked: false })]], effects: [`rollback-source ${id(1)}@${S}`], reasons: { 0: 'not committed within' } },
  { name: 'migrating past the backstop → rollback (abort) on the source', now: backstopMs(plan([]), item(id(1), D1)),
    nodes: world(plan([item(id(1), D1, { state: 'migrating' })]), { [D1]: { incoming: [record(id(1), 'migrating')] } }),
    marks: [[key(1), mark({ phase: 'migrating', asked: false })]], effects: [`rollback-source ${id(1)}@${S}`], reasons: { 0: 'CC backstop' } },
  { name: 'migrating within the backstop → nothing', now: backstopMs(plan([]), item(id(1), D1)) - 1,
    nodes: world(plan([item(id(1), D1, { state: 'migrating' })])), marks: [[key(1), mark({ phase: 'migrating', asked: false })]], effects: [] },
  { name: 'cleaning never times out', now: 10_000_000, nodes: world(plan([item(id(1), D1, { state: 'cleaning' })])), marks: [[key(1), mark({ phase: 'cleaning', asked: false })]], effects: [] },
  { name: 'given up, source unreachable, destination still preparing → rollback the destination directly', now: 1000,
    nodes: world(plan([item(id(1), D1)]), { [S]: { reachable: false }, [D1]: { incoming: [record(id(1), 'preparing')] } }),
    marks: [[key(1), mark({ phase: 'preparing', asked: false })]], effects: [`rollback-destination ${id(1)}@${D1}`] },
  { name: 'given up, source unreachable, destination ready → wait for the source (it may be receiving already)', now: 1000,
    nodes: world(plan([item(id(1), D1)]), { [S]: { reachable: false }, [D1]: { incoming: [record(id(1), 'ready')] } }),
    marks: [[key(1), mark({ phase: 'ready', asked: false })]], effects: [] },
  { name: 'given up, source unreachable, destination receiving → nothing (the source may still be sending)', now: 1000,
    nodes: world(plan([item(id(1), D1, { state: 'migrating' })]), { [S]: { reachable: false }, [D1]: { incoming: [record(id(1), 'migrating')] } }),
    marks: [[key(1), mark({ phase: 'migrating', asked: false, giveUp: 'x' })]], effects: [] },
  { name: 'a give-up from before commit (ready timeout, source unreachable) is dropped once the source reports the item migrating: the commit did arrive',
    nodes: world(plan([item(id(1), D1, { state: 'migrating', awaitingCredential: true, credentialGeneration: 1 })]), { [D1]: { incoming: [record(id(1), 'ready')] } }),
    marks: [[key(1), mark({ phase: 'ready', asked: false, giveUp: 'not committed within 1000 ms' })]], effects: [`prepare ${id(1)}@${D1} gen 1`] },
  { name: 'a give-up earned while migrating stands → rollback (abort) on the source',
    nodes: world(plan([item(id(1), D1, { state: 'migrating' })]), { [D1]: { incoming: [record(id(1), 'ready')] } }),
    marks: [[key(1), mark({ phase: 'migrating', asked: false, giveUp: 'CC backstop' })]], effects: [`rollback-source ${id(1)}@${S}`] },
  { name: 'a refused commit makes the CC give up on the item', nodes: world(plan([item(id(1), D1)]), { [D1]: { incoming: [record(id(1), 'ready')] } }),
    marks: [[key(1), mark({ phase: 'ready', asked: false, giveUp: 'source refused commit' })]], effects: [`rollback-source ${id(1)}@${S}`] },
  // Rule 4: cancel.
  { name: 'cancel: one rollback(cancel) of the plan on the source, nothing starts or commits',
    nodes: world(plan([item(id(1), D1), item(id(2), D2)], { cancelRequested: true }), { [D2]: { incoming: [record(id(2), 'ready')] } }),
    effects: [`rollback-source-cancel *@${S}`] },
  { name: 'cancel leaves committed items alone', nodes: world(plan([item(id(1), D1, { state: 'cleaning' }), item(id(2), D2, { state: 'completed' })], { cancelRequested: true })), effects: [] },
  // Rule 8: destination records nobody will use.
  { name: 'item rolled back, its destination still holds a record → rollback the destination',
    nodes: world(plan([item(id(1), D1, { state: 'rolled-back' })]), { [D1]: { incoming: [record(id(1), 'ready')] } }), effects: [`rollback-destination ${id(1)}@${D1}`] },
  { name: 'item cancelled while receiving, VM back on the source → rollback the destination',
    nodes: world(plan([item(id(1), D1, { state: 'cancelled' })]), { [D1]: { incoming: [record(id(1), 'migrating')] } }), effects: [`rollback-destination ${id(1)}@${D1}`] },
  { name: 'item completed: the destination\'s record is its VM now, never rolled back',
    nodes: world(plan([item(id(1), D1, { state: 'completed' })]), { [S]: { running: running() }, [D1]: { incoming: [record(id(1), 'migrating')] } }), effects: [] },
  { name: 'a record the source knows nothing of → rollback', nodes: [node(S, { running: running(id(1)) }), node(D1, { incoming: [record(id(1), 'ready')] })],
    effects: [`rollback-destination ${id(1)}@${D1}`], reasons: { 0: 'holds no such migration' } },
  { name: 'a record of an unknown plan, source no longer has the VM → left alone (maybe the only copy)',
    nodes: [node(S), node(D1, { incoming: [record(id(1), 'ready')] })], effects: [] },
  { name: 'a record of an unknown plan whose VM the source is cleaning up → left alone',
    nodes: [node(S, { running: [{ ...instance(id(1)), migrationState: 'cleaning' }] }), node(D1, { incoming: [record(id(1), 'ready')] })], effects: [] },
  { name: 'a record of an unknown plan still preparing → rollback even without the VM on the source',
    nodes: [node(S), node(D1, { incoming: [record(id(1), 'preparing')] })], effects: [`rollback-destination ${id(1)}@${D1}`] },
  { name: 'a record whose source is unreachable → left alone', nodes: [node(S, { reachable: false }), node(D1, { incoming: [record(id(1), 'ready')] })], effects: [] },
  { name: 'a record whose source has not answered since the CC started → left alone',
    nodes: [node(S, { migrationsKnown: false }), node(D1, { incoming: [record(id(1), 'ready')] })], effects: [] },
  { name: 'a preparing record from a host outside the partition → rollback', nodes: [node(D1, { incoming: [record(id(1), 'preparing', { source: '127.0.99.1' })] })],
    effects: [`rollback-destination ${id(1)}@${D1}`] },
  { name: 'a ready record from a host outside the partition → left alone', nodes: [node(D1, { incoming: [record(id(1), 'ready', { source: '127.0.99.1' })] })], effects: [] },
  { name: 'a record on an unreachable node → nothing sent', nodes: world(plan([item(id(1), D1, { state: 'failed' })]), { [D1]: { reachable: false, incoming: [record(id(1), 'ready')] } }), effects: [] },
];

describe('reconcile (table)', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const r = reconcile({ nodes: row.nodes, marks: new Map(row.marks ?? []), limits: { ...LIMITS, ...row.limits }, now: row.now ?? 0, fencedUnknown: row.fencedUnknown ?? false });
    expect(r.effects.map(show)).toEqual(row.effects);
    for (const [i, text] of Object.entries(row.reasons ?? {})) {
      const e = r.effects[Number(i)];
      const reason = e?.kind === 'rollback' || e?.kind === 'replan' ? e.reason : e?.kind === 'failItem' ? e.error : '';
      expect(reason).toContain(text);
    }
  });
});

describe('reconcile (marks and deadlines)', () => {
  it('a started item is marked asked, since now, and the prepare deadline is the next wake-up', () => {
    const r = reconcile({ nodes: world(plan([item(id(1), D1)])), marks: new Map(), limits: LIMITS, now: 100 });
    expect(r.marks.get(key(1))).toMatchObject({ phase: 'preparing', asked: true, since: 100, destination: D1 });
    expect(r.wakeAt).toBe(100 + TIMEOUTS.prepareMs);
  });

  it('the phase start survives reconciles and restarts when the phase changes', () => {
    const nodes = world(plan([item(id(1), D1)]), { [D1]: { incoming: [record(id(1), 'ready')] } });
    const r1 = reconcile({ nodes, marks: new Map([[key(1), mark({ since: 5 })]]), limits: LIMITS, now: 50 });
    expect(r1.marks.get(key(1))).toMatchObject({ phase: 'ready', since: 50 });
    const r2 = reconcile({ nodes, marks: r1.marks, limits: LIMITS, now: 80 });
    expect(r2.marks.get(key(1))?.since).toBe(50);
    expect(r2.wakeAt).toBe(50 + TIMEOUTS.readyMs);
  });

  it('a final item drops its mark; an item re-planned elsewhere restarts its phase', () => {
    const done = reconcile({ nodes: world(plan([item(id(1), D1, { state: 'completed' })])), marks: new Map([[key(1), mark()]]), limits: LIMITS, now: 1 });
    expect(done.marks.has(key(1))).toBe(false);
    const moved = reconcile({ nodes: world(plan([item(id(1), D2)]), { [S]: { reachable: false } }), marks: new Map([[key(1), mark({ destination: D1 })]]), limits: LIMITS, now: 9 });
    expect(moved.marks.get(key(1))).toMatchObject({ phase: 'queued', asked: false, since: 9 });
  });

  it('is idempotent: the same input gives the same effects', () => {
    const input = { nodes: world(plan([item(id(1), D1), item(id(2), D2)]), { [D2]: { incoming: [record(id(2), 'ready')] } }), marks: new Map(), limits: LIMITS, now: 3 };
    expect(reconcile(input).effects).toEqual(reconcile(input).effects);
  });
});

// --- property: random partitions ---

const HOSTS = [S, S2, D1, D2, D3];
const STATES: ItemState[] = ['queued', 'queued', 'queued', 'migrating', 'cleaning', 'completed', 'rolled-back', 'cancelled', 'failed'];

const scenario = fc.record({
  limits: fc.record({ perSource: fc.integer({ min: 1, max: 3 }), perDestination: fc.integer({ min: 1, max: 3 }), perCluster: fc.integer({ min: 1, max: 5 }) }),
  nodes: fc.array(fc.record({ reachable: fc.boolean(), healthy: fc.boolean(), enabled: fc.boolean(), cap: fc.integer({ min: 0, max: 6 }) }), { minLength: 5, maxLength: 5 }),
  plans: fc.array(fc.record({
    source: fc.constantFrom(S, S2),
    cancel: fc.boolean(),
    items: fc.array(fc.record({
      dest: fc.constantFrom(D1, D2, D3, S2, S), state: fc.constantFrom(...STATES), recordAt: fc.constantFrom(-1, -1, 2, 3, 4),
      recordState: fc.constantFrom('preparing', 'ready', 'ready', 'migrating') as fc.Arbitrary<'preparing' | 'ready' | 'migrating'>,
      onSource: fc.boolean(), asked: fc.boolean(), since: fc.integer({ min: 0, max: 3000 }),
      awaiting: fc.boolean(), generation: fc.integer({ min: 0, max: 2 }), recordGeneration: fc.integer({ min: 0, max: 2 }),
    }), { minLength: 1, maxLength: 5 }),
  }), { minLength: 1, maxLength: 3 }),
  now: fc.integer({ min: 0, max: 3000 }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function build(s: Scenario): { nodes: MigrationNode[]; marks: Map<string, Mark> } {
  const marks = new Map<string, Mark>();
  const inst = new Map<string, string[]>();
  const recs = new Map<string, ReturnType<typeof record>[]>();
  const plans = new Map<string, MigrationPlan[]>();
  let n = 0;
  s.plans.forEach((p, k) => {
    const migrationId = `mig-${k.toString(16).padStart(8, '0')}`;
    const items = p.items.map((it) => {
      const instanceId = id(++n);
      const dest = it.dest === p.source ? D1 : it.dest;
      if (it.onSource) inst.set(p.source, [...(inst.get(p.source) ?? []), instanceId]);
      if (it.recordAt >= 0) {
        const host = HOSTS[it.recordAt] as string;
        recs.set(host, [...(recs.get(host) ?? []), record(instanceId, it.recordState, { migrationId, source: p.source, credentialGeneration: it.recordGeneration })]);
      }
      if (it.asked) marks.set(itemKey(migrationId, instanceId), mark({ destination: dest, since: it.since }));
      const rejoin = it.state === 'migrating' && it.awaiting ? { awaitingCredential: true, credentialGeneration: it.generation } : {};
      return item(instanceId, dest, { state: it.state, ...rejoin });
    });
    plans.set(p.source, [...(plans.get(p.source) ?? []), plan(items, { migrationId, source: p.source, createdAt: k, cancelRequested: p.cancel })]);
  });
  const nodes = HOSTS.map((host, k) => {
    const f = s.nodes[k] as (typeof s.nodes)[number];
    return node(host, {
      reachable: f.reachable, healthy: f.healthy, enabled: f.enabled, capacity: slots(f.cap),
      running: running(...(inst.get(host) ?? [])), incoming: recs.get(host) ?? [], plans: plans.get(host) ?? [],
    });
  });
  return { nodes, marks };
}

describe('reconcile (property: random partitions)', () => {
  it('never exceeds a limit, never commits without a ready destination, never uses two destinations for one item, never destroys the only copy', () => {
    fc.assert(fc.property(scenario, (s) => {
      const { nodes, marks } = build(s);
      const nodeOf = new Map(nodes.map((x) => [x.host, x]));
      const r = reconcile({ nodes, marks, limits: s.limits, now: s.now });
      const plans = nodes.flatMap((x) => x.plans.filter((p) => p.source === x.host));
      const itemOf = (mig: string, iid: string) => {
        const p = plans.find((q) => q.migrationId === mig);
        return { plan: p, item: p?.items.find((i) => i.instanceId === iid) };
      };

      // In flight before (as the coordinator counts) and the starts it adds.
      const count = (pick: (p: MigrationPlan, i: MigrationPlan['items'][number]) => string, starts: Effect[]) => {
        const before = new Map<string, number>();
        for (const p of plans) for (const i of p.items) {
          let ph = observedPhase(i, incomingAt(nodeOf.get(i.destination), p.migrationId, i.instanceId));
          const m = marks.get(itemKey(p.migrationId, i.instanceId));
          if (ph === 'queued' && m?.asked && m.destination === i.destination) ph = 'preparing';
          if (inFlight(ph)) before.set(pick(p, i), (before.get(pick(p, i)) ?? 0) + 1);
        }
        const after = new Map(before);
        for (const e of starts) {
          const { plan: p, item: i } = itemOf(e.migrationId, (e as { instanceId: string }).instanceId);
          if (p && i) after.set(pick(p, i), (after.get(pick(p, i)) ?? 0) + 1);
        }
        return { before, after };
      };
      // New starts: prepares for items that were queued and not already asked (re-sends are not new,
      // nor is a re-join's re-prepare: its item is migrating and holds its slots).
      const starts = r.effects.filter((e) => e.kind === 'prepareDestination' && e.credentialGeneration === undefined && !marks.get(itemKey(e.migrationId, e.instanceId))?.asked);
      for (const [pick, limit] of [
        [(p: MigrationPlan) => p.source, s.limits.perSource],
        [(_p: MigrationPlan, i: MigrationPlan['items'][number]) => i.destination, s.limits.perDestination],
        [() => '*', s.limits.perCluster],
      ] as const) {
        const { before, after } = count(pick, starts);
        for (const [k, v] of after) if (v > (before.get(k) ?? 0)) expect(v).toBeLessThanOrEqual(limit);
      }

      const prepared = new Map<string, Set<string>>();
      for (const e of r.effects) {
        // Never sent blind: every effect goes to a node that answered its last poll.
        const host = e.kind === 'prepareDestination' ? e.destination : e.kind === 'rollback' ? e.host : e.source;
        expect(nodeOf.get(host)?.reachable).toBe(true);
        const { plan: p, item: i } = itemOf(e.migrationId, 'instanceId' in e && e.instanceId !== undefined ? e.instanceId : '');
        // A re-join: a migrating source that awaits a credential; the pair is of the generation it asked for.
        const rejoin = i?.state === 'migrating' && i.awaitingCredential === true;
        if (e.kind === 'commit') {
          const rec = incomingAt(nodeOf.get(e.destination), e.migrationId, e.instanceId);
          expect(rec?.state).toBe('ready');
          expect(i?.destination).toBe(e.destination);
          expect(p?.cancelRequested).toBe(false);
          // Never the source's credential before its destination holds the same generation.
          if (rejoin) expect([e.credentialGeneration, rec?.credentialGeneration]).toEqual([i.credentialGeneration, i.credentialGeneration]);
          else expect(e.credentialGeneration).toBeUndefined();
        }
        if (e.kind === 'prepareDestination') {
          expect(i?.destination).toBe(e.destination);
          if (rejoin) expect(e.credentialGeneration).toBe(i.credentialGeneration);
          else expect(i?.state).toBe('queued');
          const k = itemKey(e.migrationId, e.instanceId);
          prepared.set(k, (prepared.get(k) ?? new Set()).add(e.destination));
          for (const other of nodes) if (other.reachable && other.host !== e.destination) expect(incomingAt(other, e.migrationId, e.instanceId)).toBeUndefined();
        }
        if (e.kind === 'rollback' && e.side === 'destination') {
          // Only when the VM is known to be elsewhere than this destination, or it never received anything.
          const rec = incomingAt(nodeOf.get(e.host), e.migrationId, e.instanceId ?? '');
          const src = rec ? nodeOf.get(rec.source) : undefined;
          const vm = rec ? liveInstance(src, rec.instanceId) : undefined;
          const stayed = i !== undefined && p !== undefined && src?.reachable === true && (i.destination !== e.host || ['rolled-back', 'cancelled', 'failed'].includes(i.state));
          const unexplained = i === undefined && src?.reachable === true && vm !== undefined && vm.migrationState !== 'cleaning';
          expect(rec?.state === 'preparing' || stayed || unexplained).toBe(true);
        }
        if (e.kind === 'replan' || e.kind === 'failItem') expect(i?.state).toBe('queued');
      }
      for (const dests of prepared.values()) expect(dests.size).toBe(1);
    }), { numRuns: 1500 });
  });
});
