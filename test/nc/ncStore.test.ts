import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ncStorePath, openNcStore, type StoredIncoming, type StoredPlan } from '../../nc/ncStore.js';
import { record } from './fixtures.js';
import { A, item, MIG, plan, prepareDest } from './migrationFixtures.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ferry-ncstore-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

describe('nc.json', () => {
  it('starts enabled and empty, and round-trips plain JSON through a reopen', async () => {
    const s = await openNcStore(dir);
    expect(s.read()).toEqual({ nodeState: 'enabled', instances: {}, plans: {}, incoming: {} });
    const rec = record('i-00000001', 'shutting-down', { terminatedFrom: 'running', since: 42 });
    await s.update((d) => { d.nodeState = 'disabled'; d.instances[rec.instanceId] = rec; });
    const raw = JSON.parse(await readFile(ncStorePath(dir), 'utf8'));
    expect(raw).toMatchObject({ kind: 'ferry-nc', schemaVersion: 1, data: { nodeState: 'disabled' } });
    expect((await openNcStore(dir)).read()).toEqual({ nodeState: 'disabled', instances: { [rec.instanceId]: rec }, plans: {}, incoming: {} });
  });

  it('round-trips migration plans and incoming records, private fields included', async () => {
    const s = await openNcStore(dir);
    const p: StoredPlan = { ...plan([item(A, { state: 'migrating', startedAt: 5 })]), receivedAt: 1 };
    if (p.items[0]) Object.assign(p.items[0], { destinationUri: 'http://127.0.10.2:16509', abort: { reason: 'stalled', cancel: false } });
    const req = prepareDest('i-000000b1');
    if (req.action !== 'prepare' || req.role !== 'destination') throw new Error('fixture');
    const inc: StoredIncoming = { ...req.incoming, state: 'ready', since: 3, rollingBack: true };
    const rec = record(A, 'running', { migrationState: 'migrating', migrationId: MIG });
    await s.update((d) => { d.plans[MIG] = p; d.incoming[inc.instanceId] = inc; d.instances[A] = rec; });
    expect((await openNcStore(dir)).read()).toEqual({ nodeState: 'enabled', instances: { [A]: rec }, plans: { [MIG]: p }, incoming: { [inc.instanceId]: inc } });
  });

  it('loads a schema-1 file written before live migration, with empty plans and incoming', async () => {
    const rec = record('i-00000001', 'running');
    await writeFile(ncStorePath(dir), JSON.stringify({ schemaVersion: 1, kind: 'ferry-nc', data: { nodeState: 'enabled', instances: { [rec.instanceId]: rec } } }));
    expect((await openNcStore(dir)).read()).toEqual({ nodeState: 'enabled', instances: { [rec.instanceId]: rec }, plans: {}, incoming: {} });
  });

  it.each([
    ['a record filed under another id', { nodeState: 'enabled', instances: { 'i-00000002': record('i-00000001', 'running') } }],
    ['an unknown phase', { nodeState: 'enabled', instances: { 'i-00000001': { ...record('i-00000001', 'running'), phase: 'zombie' } } }],
    ['a missing node state', { instances: {} }],
    ['a plan filed under another id', { nodeState: 'enabled', instances: {}, plans: { 'mig-000000ff': { ...plan([item(A)]), receivedAt: 0 } } }],
    ['an incoming record in an unknown state', { nodeState: 'enabled', instances: {}, incoming: { [A]: { state: 'flying' } } }],
  ])('refuses %s as StoreInvalid', async (_n, data) => {
    await writeFile(ncStorePath(dir), JSON.stringify({ schemaVersion: 1, kind: 'ferry-nc', data }));
    await expect(openNcStore(dir)).rejects.toMatchObject({ code: 'StoreInvalid' });
  });
});
