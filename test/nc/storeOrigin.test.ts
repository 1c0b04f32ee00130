/**
 * Issue 16 item 11: a first start told apart from a lost store. The pure rules table-driven, then
 * openNcStoreAtStart over a real state directory, then the controller's side (fakes, ManualClock):
 * re-adoption, the first look at the hypervisor, and only an enable ending it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ncStorePath, openMemoryNcStore } from '../../nc/ncStore.js';
import {
  firstLookVerdict, identityPath, initialSnapshot, openNcStoreAtStart, storeOrigin, type NcIdentity,
} from '../../nc/storeOrigin.js';
import { domain, harness, HOST, record, runRequest, settle } from './fixtures.js';
import { FakeDriver } from './fakeDriver.js';
import { ManualClock } from '../../shared/clock.js';

const IDENTITY: NcIdentity = { host: HOST, firstStartAt: Date.UTC(2026, 0, 1) };
const NOW = Date.UTC(2026, 5, 1);

describe('storeOrigin (pure)', () => {
  it.each([
    ['nc.json there: resume', true, undefined, 'found'],
    ['nc.json there, identity too: resume', true, IDENTITY, 'found'],
    ['neither: created (the hypervisor decides)', false, undefined, 'created'],
    ['identity without nc.json: lost', false, IDENTITY, 'lost'],
  ] as const)('%s', (_n, found, identity, kind) => {
    expect(storeOrigin(found, identity, NOW).kind).toBe(kind);
  });

  it('recreates a lost store disabled, saying why; a created one enabled but unchecked', () => {
    const lost = storeOrigin(false, IDENTITY, NOW);
    expect(initialSnapshot(lost)).toEqual({
      nodeState: 'disabled', instances: {}, plans: {}, incoming: {},
      lostStore: { detectedAt: NOW, adopted: [], evidence: 'nc.json is missing but nc-identity.json says this node first started at 2026-01-01T00:00:00.000Z' },
    });
    expect(initialSnapshot(storeOrigin(false, undefined, NOW))).toEqual({ nodeState: 'enabled', instances: {}, plans: {}, incoming: {}, firstStartUnchecked: true });
  });

  it('takes any domain at the first look for a lost store, none for a first start', () => {
    expect(firstLookVerdict([], NOW)).toBeUndefined();
    expect(firstLookVerdict([domain('i-00000002', 'shutoff'), domain('i-00000001')], NOW)).toEqual({
      detectedAt: NOW, adopted: [],
      evidence: 'nc.json and nc-identity.json are missing but the hypervisor holds 2 domain(s) (i-00000001, i-00000002): not a first start',
    });
  });
});

describe('openNcStoreAtStart (a real state directory)', () => {
  let dir: string;
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ferry-nc-origin-')); });
  afterEach(async () => { await rm(dir, { recursive: true, force: true }); });
  const open = (now: number) => openNcStoreAtStart({ stateDir: dir, host: HOST, now });

  it('a first start creates nc.json (enabled, unchecked), then the identity file; the next start resumes', async () => {
    const first = await open(1000);
    expect(first.origin.kind).toBe('created');
    expect(first.identity).toBeUndefined();
    expect(first.store.read()).toMatchObject({ nodeState: 'enabled', firstStartUnchecked: true });
    expect((await readdir(dir)).sort()).toEqual(['nc-identity.json', 'nc.json']);
    const again = await open(2000);
    expect(again.origin.kind).toBe('found');
    expect(again.identity).toEqual({ host: HOST, firstStartAt: 1000 });
  });

  it('a deleted nc.json is a lost store: recreated disabled, the identity file kept as it was', async () => {
    const first = await open(1000);
    await first.store.update((d) => { d.nodeState = 'enabled'; delete d.firstStartUnchecked; d.instances['i-00000001'] = record('i-00000001', 'running'); });
    await rm(ncStorePath(dir));
    const after = await open(5000);
    expect(after.origin).toMatchObject({ kind: 'lost', lostStore: { detectedAt: 5000, adopted: [] } });
    expect(after.store.read()).toMatchObject({ nodeState: 'disabled', instances: {}, lostStore: { detectedAt: 5000 } });
    expect(after.identity).toEqual({ host: HOST, firstStartAt: 1000 });
    // Still lost at the next start until an administrator enables it: it is in nc.json now.
    expect((await open(6000)).store.read()).toMatchObject({ nodeState: 'disabled', lostStore: { detectedAt: 5000 } });
  });

  it('an NC from before the identity file gets one at its next start, from then on protected', async () => {
    await writeFile(ncStorePath(dir), JSON.stringify({ schemaVersion: 1, kind: 'ferry-nc', data: { nodeState: 'disabled', instances: {} } }));
    expect((await open(3000)).origin.kind).toBe('found');
    expect(existsSync(identityPath(dir))).toBe(true);
    await rm(ncStorePath(dir));
    expect((await open(4000)).origin.kind).toBe('lost');
  });

  it('refuses a corrupt identity file with the store code, never taking it for a first start', async () => {
    await writeFile(identityPath(dir), '{"schemaVersion":1,');
    await expect(open(1000)).rejects.toMatchObject({ code: 'StoreCorrupt' });
    expect(existsSync(ncStorePath(dir))).toBe(false);
  });
});

describe('the NodeController after a lost store', () => {
  const I1 = 'i-00000001';
  const I2 = 'i-00000002';

  async function withDomains(seed: (s: Awaited<ReturnType<typeof openMemoryNcStore>>) => Promise<void>, states: ('running' | 'paused' | 'shutoff')[] = ['running', 'shutoff']) {
    const clock = new ManualClock(NOW);
    const driver = new FakeDriver(HOST, undefined, () => clock.now());
    [I1, I2, 'i-00000003'].slice(0, states.length).forEach((id, k) => driver.domains.set(id, domain(id, states[k])));
    const store = await openMemoryNcStore();
    await seed(store);
    const events: string[] = [];
    const h = await harness({ clock, driver, store, notifier: { notify: (e) => { events.push(e.kind); } } });
    await settle();
    return { ...h, events };
  }

  it('re-adopts the domains of a lost store, says so, and stays disabled until an enable', async () => {
    const lostStore = storeOrigin(false, IDENTITY, NOW);
    if (lostStore.kind !== 'lost') throw new Error('fixture');
    const h = await withDomains(async (s) => { await s.update((d) => Object.assign(d, initialSnapshot(lostStore))); });
    const node = await h.controller.describe();
    expect(node.nodeState).toBe('disabled');
    expect(node.instances.map((i) => [i.instanceId, i.state, i.adopted])).toEqual([[I1, 'running', true], [I2, 'stopped', true]]);
    expect(node.lostStore).toMatchObject({ adopted: [I1, I2], evidence: expect.stringContaining('nc-identity.json') });
    expect(node.used.cores).toBe(2);
    expect(h.events).toContain('node');
    // Maintenance is kept: a disable changes nothing, a run is refused.
    await h.controller.modify('disabled');
    await expect(h.controller.run(runRequest('i-00000009'))).rejects.toMatchObject({ code: 'NodeDisabled' });
    expect((await h.controller.describe()).lostStore).toBeDefined();
    // An adopted instance can be terminated like any other.
    expect((await h.controller.terminate(I2)).currentState).toBe('terminated');
    expect(h.driver.domains.has(I2)).toBe(false);
    // Only an administrator's enable ends it.
    const r = await h.controller.modify('enabled');
    expect(r).toMatchObject({ previousState: 'disabled', node: { nodeState: 'enabled' } });
    expect(r.node.lostStore).toBeUndefined();
    expect(h.store.read().lostStore).toBeUndefined();
  });

  it('while the store is lost, also adopts a domain that turns up later (a migration that ended here), at the next poll', async () => {
    const lostStore = storeOrigin(false, IDENTITY, NOW);
    if (lostStore.kind !== 'lost') throw new Error('fixture');
    const h = await withDomains(async (s) => { await s.update((d) => Object.assign(d, initialSnapshot(lostStore))); }, []);
    expect((await h.controller.describe()).lostStore?.adopted).toEqual([]);
    h.driver.domains.set('i-00000007', domain('i-00000007'));
    const node = await h.controller.describe();
    expect(node.instances.map((i) => [i.instanceId, i.adopted])).toEqual([['i-00000007', true]]);
    expect(node.lostStore?.adopted).toEqual(['i-00000007']);
    // Once enabled, the NC is back to its ordinary rule: a domain without a record is left alone.
    await h.controller.modify('enabled');
    h.driver.domains.set('i-00000008', domain('i-00000008'));
    expect((await h.controller.describe()).instances.map((i) => i.instanceId)).toEqual(['i-00000007']);
  });

  it('takes domains at the first look of a store created without an identity for a lost store', async () => {
    const h = await withDomains(async (s) => { await s.update((d) => Object.assign(d, initialSnapshot({ kind: 'created' }))); }, ['running']);
    expect(h.store.read()).toMatchObject({ nodeState: 'disabled', lostStore: { adopted: [I1], evidence: expect.stringContaining('not a first start') } });
    expect(h.store.read().firstStartUnchecked).toBeUndefined();
    expect((await h.controller.describe()).instances.map((i) => i.instanceId)).toEqual([I1]);
  });

  it('a real first start (no domains) stays enabled and settles the question for good', async () => {
    const h = await withDomains(async (s) => { await s.update((d) => Object.assign(d, initialSnapshot({ kind: 'created' }))); }, []);
    expect(h.store.read()).toEqual({ nodeState: 'enabled', instances: {}, plans: {}, incoming: {} });
    await h.controller.run(runRequest('i-00000009'));
    expect((await h.controller.describe()).lostStore).toBeUndefined();
  });

  it('leaves orphans alone on a store that was not lost (as before)', async () => {
    const h = await withDomains(async () => undefined, ['running']);
    const node = await h.controller.describe();
    expect(node).toMatchObject({ nodeState: 'enabled', instances: [] });
    expect(node.used.cores).toBe(1);
    expect(node.lostStore).toBeUndefined();
  });
});
