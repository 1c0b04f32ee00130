import { describe, expect, it } from 'vitest';
import { observe, type Observed } from '../../nc/instanceView.js';
import {
  applyArrival, classifyIncomingDomain, decideIncomingPrepare, incomingToRollBack, incomingView, type DestinationPrepareRequest,
  type IncomingPrepareInput,
} from '../../nc/migrationDestination.js';
import type { NcSnapshot, StoredIncoming } from '../../nc/ncStore.js';
import { domain, LARGE, record, snapshot } from './fixtures.js';
import { A, B, DST, MIG, MIG2, prepareDest, SRC } from './migrationFixtures.js';

const CAP = { cores: 2, memoryMiB: 1024, diskGiB: 40 };
const req = (instanceId = A, over: Parameters<typeof prepareDest>[1] = {}) => prepareDest(instanceId, over) as DestinationPrepareRequest;

function incomingRec(instanceId = A, over: Partial<StoredIncoming> = {}): StoredIncoming {
  return { ...req(instanceId).incoming, state: 'ready', since: 7, ...over };
}

function withIncoming(snap: NcSnapshot, ...recs: StoredIncoming[]): NcSnapshot {
  return { ...snap, incoming: Object.fromEntries(recs.map((r) => [r.instanceId, r])) };
}

describe('destination prepare (decideIncomingPrepare)', () => {
  const input = (over: Partial<IncomingPrepareInput> = {}): IncomingPrepareInput => ({
    host: DST, snapshot: snapshot([]), request: req(), capacity: CAP, healthy: true, observation: observe([], 0), now: 9, ...over,
  });
  const full = snapshot([record('i-00000001', 'running', { vmType: LARGE })]);
  const cases: [string, Partial<IncomingPrepareInput>, string][] = [
    ['an empty node takes it', {}, 'prepare'],
    ['a disabled node refuses', { snapshot: snapshot([], 'disabled') }, 'NodeDisabled'],
    ['a disabled node named by the plan takes it', { snapshot: snapshot([], 'disabled'), request: req(A, { allowDisabled: true }) }, 'prepare'],
    ['an unhealthy hypervisor refuses', { healthy: false }, 'HypervisorUnavailable'],
    ['a full node refuses', { snapshot: full }, 'InsufficientCapacity'],
    ['incoming records count as used', { snapshot: withIncoming(snapshot([]), incomingRec(B, { vmType: LARGE })) }, 'InsufficientCapacity'],
    ['orphan domains count as used', { observation: observe([domain('i-000000ff', 'running', LARGE)], 0) }, 'InsufficientCapacity'],
    ['the prepared domain itself is not counted twice', { snapshot: withIncoming(snapshot([]), incomingRec(A, { state: 'preparing' })), observation: observe([domain(A, 'paused')], 0) }, 'prepare'],
    ['a repeat answers the ready record, even when disabled', { snapshot: withIncoming(snapshot([], 'disabled'), incomingRec()) }, 'answer'],
    ['a repeat answers even when full', { snapshot: withIncoming(full, incomingRec()) }, 'answer'],
    ['a preparing record is carried on', { snapshot: withIncoming(snapshot([]), incomingRec(A, { state: 'preparing' })) }, 'prepare'],
    ['a re-join: a ready record given a later credential generation goes to the hypervisor again, even when full',
      { snapshot: withIncoming(full, incomingRec(A, { credentialGeneration: 1 })), generation: 2 }, 'prepare'],
    ['a repeat of the generation held is answered', { snapshot: withIncoming(snapshot([]), incomingRec(A, { credentialGeneration: 2 })), generation: 2 }, 'answer'],
    ['a late repeat of an earlier generation is answered (never handed down)', { snapshot: withIncoming(snapshot([]), incomingRec(A, { credentialGeneration: 2 })), generation: 1 }, 'answer'],
    ['a first credential (generation 0) on a ready record is answered', { snapshot: withIncoming(snapshot([]), incomingRec()), generation: 0 }, 'answer'],
    ['another migration of the same instance', { snapshot: withIncoming(snapshot([]), incomingRec(A, { migrationId: MIG2 })) }, 'MigrationInProgress'],
    ['same ids, another spec', { snapshot: withIncoming(snapshot([]), incomingRec(A, { imageId: 'emi-00000009' })) }, 'InstanceExists'],
    ['the instance already runs here', { snapshot: snapshot([record(A, 'running')]) }, 'InstanceExists'],
    ['it arrived by this very migration', { snapshot: snapshot([record(A, 'running', { arrivedBy: MIG })]) }, 'arrived'],
    // Issue 18: re-homed (or restarted) elsewhere, its tombstone here gives way when it migrates back.
    ['only a tombstone of it is here', { snapshot: snapshot([record(A, 'terminated')]) }, 'prepare'],
    ['a stopped copy of it is here', { snapshot: snapshot([record(A, 'running', { userStopped: true })]) }, 'InstanceExists'],
    ['the source is this node', { request: req(A, { source: DST }) }, 'MigrationPlanInvalid'],
  ];
  it.each(cases)('%s', (_n, over, expected) => {
    const d = decideIncomingPrepare(input(over));
    expect(d.kind === 'refuse' ? d.code : d.kind).toBe(expected);
  });

  it('writes a fresh record in state preparing, stamped now', () => {
    expect(decideIncomingPrepare(input())).toMatchObject({ kind: 'prepare', fresh: true, incoming: { instanceId: A, migrationId: MIG, source: SRC, state: 'preparing', since: 9 } });
  });

  it('refuses an incoming record that names another migration', () => {
    const r = req();
    const bad = { ...r, incoming: { ...r.incoming, migrationId: MIG2 } };
    expect(decideIncomingPrepare(input({ request: bad }))).toMatchObject({ kind: 'refuse', code: 'MigrationPlanInvalid' });
  });
});

describe('incoming domains', () => {
  it.each([
    ['paused', 'waiting'], ['running', 'arrived'], ['shutoff', 'arrived'], ['crashed', 'arrived'], ['missing', 'absent'], ['unknown', 'unknown'],
  ] as [Observed, string][])('%s means %s', (observed, expected) => {
    expect(classifyIncomingDomain(observed)).toBe(expected);
  });

  it('turns the Incoming record into a running instance record with the same identity, in one update', () => {
    const s = withIncoming(snapshot([]), incomingRec(A, { rollingBack: true }));
    const rec = applyArrival(s, A, 50);
    expect(s.incoming).toEqual({});
    expect(s.instances[A]).toEqual({
      instanceId: A, reservationId: 'r-00000001', imageId: 'emi-00000001', ownerId: 'alice', vmType: incomingRec().vmType,
      launchTime: 1000, phase: 'running', since: 50, migrationState: 'none', arrivedBy: MIG,
    });
    expect(rec).toEqual(s.instances[A]);
    expect(applyArrival(s, A, 60)).toBeUndefined();
  });

  it('rolls back one item or every record of the migration, and nothing of another', () => {
    const s = withIncoming(snapshot([]), incomingRec(A), incomingRec(B), incomingRec('i-0000000c', { migrationId: MIG2 }));
    const rb = { action: 'rollback' as const, role: 'destination' as const, migrationId: MIG, reason: '', cancel: false };
    expect(incomingToRollBack(s, rb)).toEqual([A, B]);
    expect(incomingToRollBack(s, { ...rb, instanceId: B })).toEqual([B]);
    expect(incomingToRollBack(s, { ...rb, migrationId: 'mig-000000ff' })).toEqual([]);
  });

  it('shows the contract record without private fields', () => {
    expect(incomingView(incomingRec(A, { rollingBack: true }))).toEqual(incomingRec(A));
  });
});

describe('applyArrival over a tombstone (issue 18)', () => {
  it('the arriving instance replaces the tombstone of its id', () => {
    const s = withIncoming(snapshot([record(A, 'terminated')]), incomingRec());
    const rec = applyArrival(s, A, 5);
    expect(rec).toMatchObject({ phase: 'running', arrivedBy: MIG });
    expect(s.instances[A]?.phase).toBe('running');
  });
});
