/**
 * Pause (issue 18 part 6) in the simulated host, under a ManualClock, in memory: a suspended domain
 * stops its activity writes (the host's heartbeat goes on), keeps its resources, survives as
 * suspended in the store, and a live migration of it has no dirty pages and arrives suspended.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../shared/clock.js';
import type { DomainSpec } from '../../../nc/hypervisor/driver.js';
import { MemoryDiskIo } from '../../../nc/hypervisor/sim/diskIo.js';
import { openSimHvMemoryStore } from '../../../nc/hypervisor/sim/hostStore.js';
import { InProcessNetwork } from '../../../nc/hypervisor/sim/migrationChannel.js';
import { MIGRATION_DEFAULTS, planMigration } from '../../../nc/hypervisor/sim/migrationModel.js';
import { SimHost, type SimHostConfig } from '../../../nc/hypervisor/sim/simHost.js';
import { codeOf } from '../../helpers/codeOf.js';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));
const spec = (id: string, memoryMiB = 256): DomainSpec => ({ id, imageId: 'emi-00000001', resources: { cores: 1, memoryMiB, diskGiB: 10 } });

function world() {
  const clock = new ManualClock(1_700_000_000_000);
  return { clock, disk: new MemoryDiskIo(clock), net: new InProcessNetwork() };
}
type World = ReturnType<typeof world>;

async function host(w: World, name: string, over: Partial<SimHostConfig> = {}) {
  const store = await openSimHvMemoryStore();
  const config: SimHostConfig = {
    host: name, capacity: { cores: 8, memoryMiB: 4096, diskGiB: 200 }, storageDir: '/shared',
    migration: MIGRATION_DEFAULTS, writeIntervalMs: 1000, timeScale: 1, ...over,
  };
  const h = await SimHost.open(config, { clock: w.clock, store, disk: w.disk, dialer: w.net });
  w.net.register(`sim://${name}`, h);
  h.start();
  return { h, store };
}

async function drive<T>(clock: ManualClock, p: Promise<T>, stepMs = 10): Promise<T> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  for (let i = 0; i < 1_000_000 && !done; i++) {
    await flush();
    if (!done) clock.advance(stepMs);
  }
  return p;
}

async function tick(w: World, ms = 1000): Promise<void> {
  w.clock.advance(ms);
  await flush();
}

describe('SimHost pause and resume', () => {
  it('a suspended domain stops writing its disk while the heartbeat goes on; resume writes at once', async () => {
    const w = world();
    const { h, store } = await host(w, '127.0.76.11');
    const info = await h.create(spec('i-00000001'));
    await tick(w);
    const suspended = await h.pause('i-00000001');
    expect(suspended.state).toBe('suspended');
    expect(store.read().domains['i-00000001']?.state).toBe('suspended');
    const frozenAt = w.disk.stat(info.diskPath)?.mtimeMs;
    await tick(w);
    await tick(w);
    expect(w.disk.stat(info.diskPath)?.mtimeMs).toBe(frozenAt);
    expect(w.disk.stat('/shared/127.0.76.11/heartbeat')?.mtimeMs).toBe(w.clock.now());
    // A paused QEMU keeps its memory.
    expect(h.free().memoryMiB).toBe(4096 - 256);
    expect((await h.resume('i-00000001')).state).toBe('running');
    expect(w.disk.stat(info.diskPath)?.mtimeMs).toBe(w.clock.now());
    expect(store.read().domains['i-00000001']?.state).toBe('running');
  });

  it('pause and resume are idempotent; a create of a suspended domain answers it as is', async () => {
    const w = world();
    const { h } = await host(w, '127.0.76.11');
    await h.create(spec('i-00000001'));
    const a = await h.pause('i-00000001');
    expect(await h.pause('i-00000001')).toEqual(a);
    expect(await h.create(spec('i-00000001'))).toEqual(a);
    const b = await h.resume('i-00000001');
    expect(await h.resume('i-00000001')).toEqual(b);
  });

  it.each([
    ['an unknown domain', 'pause', 'DomainNotFound'],
    ['an unknown domain', 'resume', 'DomainNotFound'],
    ['a shut-off domain', 'pause', 'DomainStateConflict'],
    ['a shut-off domain', 'resume', 'DomainStateConflict'],
    ['an incoming (paused) domain', 'pause', 'DomainStateConflict'],
    ['an incoming (paused) domain', 'resume', 'DomainStateConflict'],
  ] as const)('%s: %s is refused with %s and nothing changes', async (what, op, code) => {
    const w = world();
    const { h, store } = await host(w, '127.0.76.11');
    if (what === 'a shut-off domain') {
      const s = await openSimHvMemoryStore();
      await s.update((d) => { d.domains['i-00000001'] = { spec: spec('i-00000001'), state: 'running', startedAt: 1 }; });
      const cycled = await SimHost.open({ host: '127.0.76.12', capacity: { cores: 8, memoryMiB: 4096, diskGiB: 200 }, storageDir: '/shared', migration: MIGRATION_DEFAULTS, writeIntervalMs: 1000, timeScale: 1 }, { clock: w.clock, store: s, disk: w.disk, dialer: w.net });
      const before = structuredClone(s.read());
      expect(await codeOf(cycled[op]('i-00000001'))).toBe(code);
      expect(s.read()).toEqual(before);
      return;
    }
    if (what === 'an incoming (paused) domain') await h.prepareIncoming(spec('i-00000001'), 'm-1');
    const before = structuredClone(store.read());
    const listed = h.list();
    expect(await codeOf(h[op]('i-00000001'))).toBe(code);
    expect(store.read()).toEqual(before);
    expect(h.list()).toEqual(listed);
  });

  it('a power cycle brings a suspended domain back shut off', async () => {
    const w = world();
    const { h, store } = await host(w, '127.0.76.11');
    await h.create(spec('i-00000001'));
    await h.pause('i-00000001');
    await h.close();
    const again = await SimHost.open({ host: '127.0.76.11', capacity: { cores: 8, memoryMiB: 4096, diskGiB: 200 }, storageDir: '/shared', migration: MIGRATION_DEFAULTS, writeIntervalMs: 1000, timeScale: 1 }, { clock: w.clock, store, disk: w.disk, dialer: w.net });
    expect(again.get('i-00000001')?.state).toBe('shutoff');
  });
});

describe('SimHost live migration of a suspended domain', () => {
  it('has no dirty pages (one round), never writes on the way, and arrives suspended', async () => {
    // A dirty rate no running guest could converge with: only a suspended one migrates.
    const migration = { ...MIGRATION_DEFAULTS, dirtyRateMiBps: 10_000, maxIterations: 3 };
    const w = world();
    const a = (await host(w, '127.0.76.11', { migration })).h;
    const { h: b, store: bStore } = await host(w, '127.0.76.12', { migration });
    const s = spec('i-00000001', 512);
    await a.create(s);
    await a.pause(s.id);
    const frozen = w.disk.stat('/shared/127.0.76.11/i-00000001.disk');
    await b.prepareIncoming(s, 'm-1');
    const stats = await drive(w.clock, a.migrateOut(s.id, { migrationId: 'm-1', destinationUri: 'sim://127.0.76.12' }));
    const plan = planMigration({ ...migration, dirtyRateMiBps: 0, memoryMiB: 512 });
    expect(stats.iterations).toBe(plan.iterations.length);
    expect(stats.bytesTransferred).toBe(512 * 1024 * 1024);
    expect(a.get(s.id)).toBeUndefined();
    expect(b.get(s.id)?.state).toBe('suspended');
    expect(bStore.read().domains[s.id]?.state).toBe('suspended');
    expect(frozen).toBeDefined();
    // It writes nothing on the destination until resumed, then carries its counter on.
    await tick(w);
    expect(w.disk.stat('/shared/127.0.76.12/i-00000001.disk')).toBeUndefined();
    await b.resume(s.id);
    const counter = (JSON.parse(w.disk.stat('/shared/127.0.76.12/i-00000001.disk')?.contents ?? '{}') as { counter: number }).counter;
    expect(counter).toBe((JSON.parse(frozen?.contents ?? '{}') as { counter: number }).counter + 1);
  });

  it('a failed migration of a suspended domain leaves it suspended on the source', async () => {
    const w = world();
    const a = (await host(w, '127.0.76.11')).h;
    const b = (await host(w, '127.0.76.12')).h;
    await a.create(spec('i-00000001', 1024));
    await a.pause('i-00000001');
    await b.prepareIncoming(spec('i-00000001', 1024), 'm-1');
    const p = a.migrateOut('i-00000001', { migrationId: 'm-1', destinationUri: 'sim://127.0.76.12' });
    await tick(w, 500);
    // During pre-copy it stays suspended and cannot be resumed (the migration owns it).
    expect(a.get('i-00000001')?.state).toBe('suspended');
    expect(await codeOf(a.resume('i-00000001'))).toBe('DomainStateConflict');
    await a.abortMigration('i-00000001', 'm-1');
    expect(await codeOf(p)).toBe('MigrationAborted');
    await flush();
    expect(a.get('i-00000001')?.state).toBe('suspended');
    expect(b.list()).toEqual([]);
  });
});
