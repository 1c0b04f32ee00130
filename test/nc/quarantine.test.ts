/**
 * Quarantine on the NC (issue 18): the pure decisions (nc/quarantine.ts) as a table, and the runner:
 * persisted before the reply, kept across a restart, enable refused while it holds, a destination
 * prepare refused even when named, a release leaving the node disabled. Every refusal changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { decideIncomingPrepare, type DestinationPrepareRequest } from '../../nc/migrationDestination.js';
import { openMemoryNcStore, type NcSnapshot, type StoredPlan } from '../../nc/ncStore.js';
import { decideQuarantine, quarantineForbids } from '../../nc/quarantine.js';
import { observe } from '../../nc/instanceView.js';
import { harness, HOST, record, runRequest, snapshot } from './fixtures.js';
import { A, B, DST, item, MIG, plan, prepareDest, prepareSource } from './migrationFixtures.js';

const NOW = 5_000;
const Q = { since: 1_000, reason: 'ssh keys changed' };
const quarantined = (s: NcSnapshot = snapshot([])): NcSnapshot => ({ ...s, nodeState: 'disabled', quarantine: { ...Q } });
const stored = (state: 'queued' | 'migrating' | 'completed' | 'failed'): StoredPlan => ({ ...plan([item(A, { state })]), receivedAt: 100 });
const withPlan = (s: NcSnapshot, p: StoredPlan): NcSnapshot => ({ ...s, plans: { [p.migrationId]: p } });
const withIncoming = (s: NcSnapshot): NcSnapshot => ({
  ...s, incoming: { [B]: { ...(prepareDest(B) as DestinationPrepareRequest).incoming, state: 'ready', since: 7 } },
});

describe('decideQuarantine', () => {
  const cases: [string, NcSnapshot, boolean, string][] = [
    ['an enabled node is quarantined and disabled', snapshot([record(A, 'running')]), true, 'change disabled quarantined'],
    ['a disabled node is quarantined', snapshot([], 'disabled'), true, 'change disabled quarantined'],
    ['a second quarantine is refused', quarantined(), true, 'NodeQuarantined'],
    ['the source of an unfinished plan is refused', withPlan(snapshot([record(A, 'running', { migrationState: 'migrating', migrationId: MIG })]), stored('migrating')), true, 'MigrationInProgress'],
    ['a node holding an Incoming record is refused', withIncoming(snapshot([])), true, 'MigrationInProgress'],
    ['a finished plan does not stand in the way', withPlan(snapshot([]), stored('completed')), true, 'change disabled quarantined'],
    ['a release leaves the node disabled', quarantined(), false, 'change disabled released'],
    ['a release of a node not quarantined is refused', snapshot([]), false, 'NodeNotQuarantined'],
  ];
  it.each(cases)('%s', (_n, snap, q, expected) => {
    const d = decideQuarantine(HOST, snap, { quarantined: q, reason: 'why' }, NOW);
    expect(d.kind === 'refuse' ? d.code : `change ${d.nodeState} ${d.quarantine ? 'quarantined' : 'released'}`).toBe(expected);
  });

  it('stamps the quarantine with now and the reason', () => {
    expect(decideQuarantine(HOST, snapshot([]), { quarantined: true, reason: 'why' }, NOW)).toEqual({ kind: 'change', quarantine: { since: NOW, reason: 'why' }, nodeState: 'disabled' });
  });

  it('names the migration in the way', () => {
    const d = decideQuarantine(HOST, withPlan(snapshot([record(A, 'running')]), stored('queued')), { quarantined: true, reason: '' }, NOW);
    expect(d).toMatchObject({ kind: 'refuse', code: 'MigrationInProgress', fields: { subject: `node ${HOST}` } });
    expect(d.kind === 'refuse' ? String(d.fields.migrationId) : '').toContain(MIG);
  });

  it('forbids enabling a quarantined node, and nothing else', () => {
    expect(quarantineForbids(HOST, quarantined(), 'enabled')).toMatchObject({ code: 'NodeQuarantined' });
    expect(quarantineForbids(HOST, quarantined(), 'disabled')).toBeUndefined();
    expect(quarantineForbids(HOST, snapshot([]), 'enabled')).toBeUndefined();
  });
});

describe('a quarantined destination', () => {
  it('refuses a prepare even when the plan named it (allowDisabled)', () => {
    const input = {
      host: DST, request: prepareDest(A, { allowDisabled: true }) as DestinationPrepareRequest, capacity: { cores: 4, memoryMiB: 4096, diskGiB: 100 },
      healthy: true, observation: observe([], 0), now: 9,
    };
    expect(decideIncomingPrepare({ ...input, snapshot: snapshot([], 'disabled') }).kind).toBe('prepare');
    expect(decideIncomingPrepare({ ...input, snapshot: quarantined() })).toMatchObject({ kind: 'refuse', code: 'NodeQuarantined' });
  });
});

describe('ncQuarantineNode (the runner)', () => {
  it('persists the quarantine and the disabled state in one write before replying', async () => {
    const h = await harness({ storeDelayMs: 20 });
    await h.controller.run(runRequest(A));
    h.log.length = 0;
    const res = await h.controller.quarantine({ quarantined: true, reason: 'ssh keys changed' });
    h.log.push('reply');
    expect(res).toMatchObject({ previousState: 'enabled', node: { nodeState: 'disabled', quarantine: { since: h.clock.now(), reason: 'ssh keys changed' } } });
    expect(res.previousQuarantine).toBeUndefined();
    const writes = h.log.filter((l) => l.startsWith('persist'));
    expect(writes).toHaveLength(1);
    expect(h.log.indexOf(writes[0] as string)).toBeLessThan(h.log.indexOf('reply'));
    expect(h.store.read()).toMatchObject({ nodeState: 'disabled', quarantine: { reason: 'ssh keys changed' } });
    // Its instance keeps running; nothing new starts.
    expect(h.driver.domains.has(A)).toBe(true);
    await expect(h.controller.run(runRequest(B))).rejects.toMatchObject({ code: 'NodeDisabled' });
  });

  it('refuses a second quarantine and an enable, changing nothing', async () => {
    const h = await harness();
    await h.controller.quarantine({ quarantined: true, reason: 'first' });
    const before = structuredClone(h.store.read());
    h.log.length = 0;
    await expect(h.controller.quarantine({ quarantined: true, reason: 'second' })).rejects.toMatchObject({ code: 'NodeQuarantined', status: 409 });
    await expect(h.controller.modify('enabled')).rejects.toMatchObject({ code: 'NodeQuarantined', status: 409 });
    expect(h.store.read()).toEqual(before);
    expect(h.log.filter((l) => l.startsWith('persist'))).toEqual([]);
  });

  it('refuses to quarantine the source of an unfinished migration, changing nothing', async () => {
    const h = await harness({ host: '127.0.10.1' });
    await h.controller.run(runRequest(A));
    await h.controller.migrate(prepareSource(plan([item(A)])));
    const before = structuredClone(h.store.read());
    await expect(h.controller.quarantine({ quarantined: true, reason: '' })).rejects.toMatchObject({ code: 'MigrationInProgress' });
    expect(h.store.read()).toEqual(before);
  });

  it('keeps the quarantine across an NC restart; a release leaves the node disabled, then it can be enabled', async () => {
    const store = await openMemoryNcStore();
    const h = await harness({ store });
    await h.controller.quarantine({ quarantined: true, reason: 'forensics' });
    await h.controller.stop();
    const again = await harness({ store, driver: h.driver, clock: h.clock });
    expect(await again.controller.describe()).toMatchObject({ nodeState: 'disabled', quarantine: { reason: 'forensics' } });
    const released = await again.controller.quarantine({ quarantined: false, reason: '' });
    expect(released).toMatchObject({ previousState: 'disabled', previousQuarantine: { reason: 'forensics' }, node: { nodeState: 'disabled' } });
    expect(released.node.quarantine).toBeUndefined();
    expect(again.store.read().quarantine).toBeUndefined();
    await expect(again.controller.quarantine({ quarantined: false, reason: '' })).rejects.toMatchObject({ code: 'NodeNotQuarantined' });
    expect((await again.controller.modify('enabled')).node.nodeState).toBe('enabled');
  });
});
