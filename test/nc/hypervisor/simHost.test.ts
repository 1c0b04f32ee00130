/**
 * The simulated host core under a ManualClock, in memory: two hosts on an InProcessNetwork.
 * No network, no disk, no wall time — the same setup the whole-cloud simulator will use.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../shared/clock.js';
import type { Store } from '../../../shared/store/store.js';
import type { DomainSpec, HypervisorEvent } from '../../../nc/hypervisor/driver.js';
import { MemoryDiskIo } from '../../../nc/hypervisor/sim/diskIo.js';
import { openSimHvMemoryStore, type SimHvSnapshot } from '../../../nc/hypervisor/sim/hostStore.js';
import { InProcessNetwork } from '../../../nc/hypervisor/sim/migrationChannel.js';
import { MIGRATION_DEFAULTS, planMigration } from '../../../nc/hypervisor/sim/migrationModel.js';
import { SimHost, type SimHostConfig } from '../../../nc/hypervisor/sim/simHost.js';
import { InProcessDriver } from '../../../nc/hypervisor/sim/inProcessDriver.js';
import { codeOf } from '../../helpers/codeOf.js';
import { credentialPair, makeMigrationCa } from '../../helpers/migrationPki.js';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

function spec(id: string, memoryMiB = 256, cores = 1): DomainSpec {
  return { id, imageId: 'emi-00000001', resources: { cores, memoryMiB, diskGiB: 10 } };
}

interface World {
  clock: ManualClock;
  disk: MemoryDiskIo;
  net: InProcessNetwork;
}

function world(): World {
  const clock = new ManualClock(1_700_000_000_000);
  return { clock, disk: new MemoryDiskIo(clock), net: new InProcessNetwork() };
}

async function host(w: World, name: string, over: Partial<SimHostConfig> = {}, store?: Store<SimHvSnapshot>) {
  const s = store ?? (await openSimHvMemoryStore());
  const config: SimHostConfig = {
    host: name, capacity: { cores: 8, memoryMiB: 4096, diskGiB: 200 }, storageDir: '/shared',
    migration: MIGRATION_DEFAULTS, writeIntervalMs: 1000, timeScale: 1, ...over,
  };
  const h = await SimHost.open(config, { clock: w.clock, store: s, disk: w.disk, dialer: w.net });
  w.net.register(`sim://${name}`, h);
  h.start();
  return { h, store: s };
}

/** Advances the clock in small steps until `p` settles; the migration's pacing runs on this clock. */
async function drive<T>(clock: ManualClock, p: Promise<T>, stepMs = 10): Promise<T> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  for (let i = 0; i < 1_000_000 && !done; i++) {
    await flush();
    if (!done) clock.advance(stepMs);
  }
  return p;
}


function counterIn(w: World, path: string): number {
  const f = w.disk.stat(path);
  return f ? (JSON.parse(f.contents) as { counter: number }).counter : -1;
}

describe('SimHost lifecycle', () => {
  it('a running domain rewrites its disk file and the heartbeat every interval', async () => {
    const w = world();
    const { h } = await host(w, '127.0.9.11');
    const info = await h.create(spec('i-00000001'));
    expect(info).toMatchObject({ state: 'running', diskPath: '/shared/127.0.9.11/i-00000001.disk', startedAt: w.clock.now() });
    const first = w.disk.stat(info.diskPath);
    expect(first).toBeDefined();
    w.clock.advance(1000);
    await flush();
    w.clock.advance(1000);
    await flush();
    expect(w.disk.stat(info.diskPath)?.mtimeMs).toBe((first?.mtimeMs ?? 0) + 2000);
    expect(counterIn(w, info.diskPath)).toBe(3);
    expect(w.disk.stat('/shared/127.0.9.11/heartbeat')?.mtimeMs).toBe(w.clock.now());
  });

  it('create is idempotent for the same spec and refuses another spec under the same id', async () => {
    const w = world();
    const { h, store } = await host(w, '127.0.9.11');
    const a = await h.create(spec('i-00000001'));
    expect(await h.create(spec('i-00000001'))).toEqual(a);
    const before = structuredClone(store.read());
    expect(await codeOf(h.create(spec('i-00000001', 512)))).toBe('DomainExists');
    expect(store.read()).toEqual(before);
    expect(h.list()).toHaveLength(1);
  });

  it('refuses a domain over capacity and changes nothing', async () => {
    const w = world();
    const { h, store } = await host(w, '127.0.9.11');
    await h.create(spec('i-00000001', 3072));
    expect(await codeOf(h.create(spec('i-00000002', 2048)))).toBe('InsufficientHostResources');
    expect(await codeOf(h.create(spec('i-00000003', 256, 9)))).toBe('InsufficientHostResources');
    expect(h.list().map((d) => d.id)).toEqual(['i-00000001']);
    expect(Object.keys(store.read().domains)).toEqual(['i-00000001']);
    expect(w.disk.stat('/shared/127.0.9.11/i-00000002.disk')).toBeUndefined();
  });

  it('destroy removes definition, disk file and emits stopped; unknown ids are fine', async () => {
    const w = world();
    const { h, store } = await host(w, '127.0.9.11');
    const events: HypervisorEvent[] = [];
    h.onEvent((e) => events.push(e));
    const info = await h.create(spec('i-00000001'));
    await h.destroy('i-00000001');
    await h.destroy('i-00000001');
    await h.destroy('i-0000dead');
    expect(h.list()).toEqual([]);
    expect(store.read().domains).toEqual({});
    expect(w.disk.stat(info.diskPath)).toBeUndefined();
    expect(events).toEqual([{ kind: 'started', id: 'i-00000001' }, { kind: 'stopped', id: 'i-00000001', reason: 'destroyed' }]);
  });

  it('after a power cycle stored domains come back shutoff, do not write, hold nothing, and can be started', async () => {
    const w = world();
    const { h, store } = await host(w, '127.0.9.11');
    const info = await h.create(spec('i-00000001', 4096));
    for (let i = 0; i < 3; i++) {
      w.clock.advance(1000);
      await flush();
    }
    await h.close(); // the "host" dies; its store survives
    const { h: again } = await host(w, '127.0.9.11', {}, store);
    expect(again.get('i-00000001')?.state).toBe('shutoff');
    const mtime = w.disk.stat(info.diskPath)?.mtimeMs;
    w.clock.advance(5000);
    await flush();
    expect(w.disk.stat(info.diskPath)?.mtimeMs).toBe(mtime);
    expect(again.free().memoryMiB).toBe(4096);
    const restarted = await again.create(spec('i-00000001', 4096));
    expect(restarted.state).toBe('running');
    expect(counterIn(w, info.diskPath)).toBe(5); // counter carried on from the disk file (1 + 3 ticks + 1)
    await again.destroy('i-00000001');
    expect(again.list()).toEqual([]);
  });
});

describe('SimHost activity under a ManualClock', () => {
  it('a big clock jump folds missed ticks into one write stamped with the latest time', async () => {
    const w = world();
    const { h } = await host(w, '127.0.9.11');
    const info = await h.create(spec('i-00000001'));
    w.clock.advance(10_000);
    await flush();
    expect(w.disk.stat(info.diskPath)?.mtimeMs).toBe(w.clock.now());
    expect(w.disk.stat('/shared/127.0.9.11/heartbeat')?.mtimeMs).toBe(w.clock.now());
  });

  it('a thousand hosts run in one process with no timers of their own', async () => {
    const w = world();
    const hosts = [];
    for (let i = 0; i < 1000; i++) hosts.push((await host(w, `127.0.${10 + Math.floor(i / 250)}.${i % 250}`)).h);
    await Promise.all(hosts.map((h, i) => h.create(spec(`i-${i.toString(16).padStart(8, '0')}`))));
    for (let s = 0; s < 5; s++) {
      w.clock.advance(1000);
      await flush();
    }
    expect(w.disk.files.size).toBe(2000); // one disk file and one heartbeat per host
    for (const f of w.disk.files.values()) expect(f.mtimeMs).toBe(w.clock.now());
    expect(w.clock.pendingTimers()).toBe(1000); // exactly one activity timer per host
  });
});

describe('SimHost live migration (in process)', () => {
  async function pair(over: Partial<SimHostConfig> = {}) {
    const w = world();
    const a = await host(w, '127.0.9.11', over);
    const b = await host(w, '127.0.9.12', over);
    return { w, a: a.h, b: b.h, bStore: b.store };
  }

  it('moves a running domain: paused on the destination until the last round, stats from the model', async () => {
    const { w, a, b, bStore } = await pair();
    const s = spec('i-00000001', 256);
    await a.create(s);
    const aEvents: HypervisorEvent[] = [];
    const bEvents: HypervisorEvent[] = [];
    a.onEvent((e) => aEvents.push(e));
    b.onEvent((e) => bEvents.push(e));
    await b.prepareIncoming(s, 'm-1');
    expect(b.get(s.id)?.state).toBe('paused');
    expect(b.free().memoryMiB).toBe(4096 - 256);

    const p = a.migrateOut(s.id, { migrationId: 'm-1', destinationUri: 'sim://127.0.9.12' });
    // Half-way through round 1 the source still runs and writes; the destination waits, paused.
    await flush();
    w.clock.advance(1000);
    await flush();
    expect(a.get(s.id)?.state).toBe('running');
    expect(b.get(s.id)?.state).toBe('paused');
    const counterMid = counterIn(w, '/shared/127.0.9.11/i-00000001.disk');
    expect(counterMid).toBeGreaterThan(1);

    const stats = await drive(w.clock, p);
    const plan = planMigration({ ...MIGRATION_DEFAULTS, memoryMiB: 256 });
    expect(plan.converged).toBe(true);
    expect(stats).toEqual({
      migrationId: 'm-1', id: s.id, elapsedMs: plan.totalMs, downtimeMs: plan.downtimeMs,
      bytesTransferred: plan.bytesTransferred, iterations: plan.iterations.length,
    });
    expect(a.get(s.id)).toBeUndefined();
    expect(w.disk.stat('/shared/127.0.9.11/i-00000001.disk')).toBeUndefined();
    expect(b.get(s.id)).toMatchObject({ state: 'running', diskPath: '/shared/127.0.9.12/i-00000001.disk' });
    expect(bStore.read().domains[s.id]?.state).toBe('running');
    expect(counterIn(w, '/shared/127.0.9.12/i-00000001.disk')).toBeGreaterThan(counterMid);
    const progress = aEvents.filter((e) => e.kind === 'migration-progress');
    expect(progress).toHaveLength(plan.iterations.length);
    expect(aEvents.at(-1)).toEqual({ kind: 'stopped', id: s.id, reason: 'migrated' });
    expect(bEvents).toEqual([
      { kind: 'migration-incoming-done', migrationId: 'm-1', id: s.id },
      { kind: 'started', id: s.id },
    ]);
    expect(a.migrationStatus(s.id, 'm-1')).toEqual({ state: 'completed', stats });
  });

  it('refuses to stream to a host that has not prepared, and the domain keeps running', async () => {
    const { w, a, b } = await pair();
    await a.create(spec('i-00000001'));
    expect(await codeOf(drive(w.clock, a.migrateOut('i-00000001', { migrationId: 'm-1', destinationUri: 'sim://127.0.9.12' })))).toBe('IncomingNotPrepared');
    expect(a.get('i-00000001')?.state).toBe('running');
    expect(b.list()).toEqual([]);
    // A migration can be tried again afterwards.
    await b.prepareIncoming(spec('i-00000001'), 'm-2');
    expect(await codeOf(drive(w.clock, a.migrateOut('i-00000001', { migrationId: 'm-3', destinationUri: 'sim://127.0.9.12' })))).toBe('IncomingMismatch');
    expect(b.get('i-00000001')?.state).toBe('paused'); // m-2's reservation is untouched
    await drive(w.clock, a.migrateOut('i-00000001', { migrationId: 'm-2', destinationUri: 'sim://127.0.9.12' }));
    expect(b.get('i-00000001')?.state).toBe('running');
  });

  it('an aborted migration leaves the domain running on the source and nothing on the destination', async () => {
    const { w, a, b } = await pair();
    await a.create(spec('i-00000001', 1024));
    await b.prepareIncoming(spec('i-00000001', 1024), 'm-1');
    const p = a.migrateOut('i-00000001', { migrationId: 'm-1', destinationUri: 'sim://127.0.9.12' });
    await flush();
    w.clock.advance(500);
    await flush();
    expect(b.get('i-00000001')?.state).toBe('paused');
    await a.abortMigration('i-00000001', 'm-1');
    expect(await codeOf(p)).toBe('MigrationAborted');
    await flush();
    expect(a.get('i-00000001')?.state).toBe('running');
    expect(b.list()).toEqual([]);
    expect(b.free().memoryMiB).toBe(4096);
    expect(a.migrationStatus('i-00000001', 'm-1')).toMatchObject({ state: 'failed', error: { code: 'MigrationAborted' } });
    await a.abortMigration('i-00000001', 'm-1'); // idempotent
  });

  it('a guest dirtying faster than the link fails after maxIterations and stays on the source', async () => {
    const { w, a, b } = await pair({ migration: { ...MIGRATION_DEFAULTS, dirtyRateMiBps: 200, maxIterations: 5 } });
    await a.create(spec('i-00000001', 512));
    await b.prepareIncoming(spec('i-00000001', 512), 'm-1');
    const p = a.migrateOut('i-00000001', { migrationId: 'm-1', destinationUri: 'sim://127.0.9.12' });
    const started = w.clock.now();
    expect(await codeOf(drive(w.clock, p))).toBe('MigrationFailed');
    expect(w.clock.now() - started).toBeGreaterThanOrEqual(5 * 4000); // five full rounds of 512 MiB were paid for
    expect(a.get('i-00000001')?.state).toBe('running');
    expect(b.list()).toEqual([]);
  });

  it('prepare checks capacity, conflicts and mismatches; abortIncoming frees the reservation', async () => {
    const { a, b } = await pair();
    await b.create(spec('i-00000009', 3900));
    expect(await codeOf(b.prepareIncoming(spec('i-00000001', 256), 'm-1'))).toBe('InsufficientHostResources');
    await b.destroy('i-00000009');
    await b.prepareIncoming(spec('i-00000001', 256), 'm-1');
    await b.prepareIncoming(spec('i-00000001', 256), 'm-1'); // idempotent
    expect(await codeOf(b.prepareIncoming(spec('i-00000001', 256), 'm-2'))).toBe('IncomingMismatch');
    expect(await codeOf(b.prepareIncoming(spec('i-00000001', 512), 'm-1'))).toBe('IncomingMismatch');
    await a.create(spec('i-00000002'));
    expect(await codeOf(a.prepareIncoming(spec('i-00000002'), 'm-3'))).toBe('DomainStateConflict');
    await b.abortIncoming('i-00000001', 'm-other'); // not ours: no-op
    expect(b.get('i-00000001')?.state).toBe('paused');
    await b.abortIncoming('i-00000001', 'm-1');
    expect(b.list()).toEqual([]);
    expect(b.free().memoryMiB).toBe(4096);
  });

  it('the destination aborting mid-stream fails the migration; the source keeps the domain', async () => {
    const { w, a, b } = await pair();
    await a.create(spec('i-00000001', 1024));
    await b.prepareIncoming(spec('i-00000001', 1024), 'm-1');
    const p = a.migrateOut('i-00000001', { migrationId: 'm-1', destinationUri: 'sim://127.0.9.12' });
    await flush();
    w.clock.advance(100);
    await flush();
    await b.abortIncoming('i-00000001', 'm-1');
    expect(await codeOf(drive(w.clock, p))).toBe('MigrationFailed');
    expect(a.get('i-00000001')?.state).toBe('running');
    expect(b.list()).toEqual([]);
  });

  it('destroy during pre-copy aborts the migration first; close resumes nothing it does not own', async () => {
    const { w, a, b } = await pair();
    await a.create(spec('i-00000001', 1024));
    await b.prepareIncoming(spec('i-00000001', 1024), 'm-1');
    const p = a.migrateOut('i-00000001', { migrationId: 'm-1', destinationUri: 'sim://127.0.9.12' });
    await flush();
    w.clock.advance(100);
    await a.destroy('i-00000001');
    expect(await codeOf(p)).toBe('MigrationAborted');
    expect(a.list()).toEqual([]);
    await flush();
    expect(b.list()).toEqual([]);
    await a.close();
    expect(await codeOf(a.create(spec('i-00000002')))).toBe('HypervisorUnavailable');
  });

  it('migrating an unknown or shut-off domain is a coded error', async () => {
    const { a } = await pair();
    expect(await codeOf(a.migrateOut('i-0000dead', { migrationId: 'm-1', destinationUri: 'sim://127.0.9.12' }))).toBe('DomainNotFound');
  });

  it('the in-process driver validates input with the daemon’s schemas', async () => {
    const { a } = await pair();
    const d = new InProcessDriver(a);
    expect(await codeOf(d.create({ ...spec('../etc'), id: '../etc' }))).toBe('HypervisorBadRequest');
    expect(await codeOf(d.create({ ...spec('i-1'), resources: { cores: 0, memoryMiB: 1, diskGiB: 1 } }))).toBe('HypervisorBadRequest');
    expect(await d.list()).toEqual([]);
    expect((await d.connect()).hypervisor).toBe('sim');
  });
});

describe('SimHost credential policy', () => {
  const ca = makeMigrationCa('policy');
  const item = { migrationId: 'mig-0000a11c', instanceId: 'i-0000a11c', source: '127.0.9.31', destination: '127.0.9.32' };
  const key = `${item.migrationId}-${item.instanceId}`;
  const s = spec(item.instanceId);

  it('a host that requires credentials still lets a restarted NC join a migration it began with one', async () => {
    const w = world();
    const a = (await host(w, item.source, { requireMigrationCredentials: true })).h;
    // The in-process network carries no TLS: an unguarded destination stands in for the far end.
    const b = (await host(w, item.destination)).h;
    await a.create(s);
    await b.prepareIncoming(s, key);
    const target = { migrationId: key, destinationUri: `sim://${item.destination}` };
    const first = await a.beginMigration(s.id, { ...target, credential: credentialPair(ca, item).source });
    const joined = await a.beginMigration(s.id, target);
    expect(joined).toBe(first);
    await drive(w.clock, first.done);
    expect(b.get(s.id)?.state).toBe('running');
    // A new migration without one is refused before anything changes.
    await a.create(spec('i-0000b0b0'));
    expect(await codeOf(a.beginMigration('i-0000b0b0', { migrationId: 'm-x', destinationUri: `sim://${item.destination}` }))).toBe('MigrationCredentialInvalid');
    expect(a.get('i-0000b0b0')?.state).toBe('running');
    expect(a.migrationStatus('i-0000b0b0', 'm-x')).toEqual({ state: 'unknown' });
  });

  it('refuses a plaintext stream for a domain prepared with a credential (no downgrade), leaving it prepared', async () => {
    const w = world();
    const b = (await host(w, item.destination)).h;
    await b.prepareIncoming(s, key, credentialPair(ca, item).destination);
    await expect(b.acceptIncoming(s.id, key)).rejects.toMatchObject({ code: 'MigrationCredentialRejected', fields: { reason: 'no-certificate' } });
    expect(b.get(s.id)?.state).toBe('paused');
  });
});
