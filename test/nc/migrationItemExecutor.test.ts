/**
 * The live-migration handshake through two NodeControllers (source and destination) over linked
 * fake hypervisors and one ManualClock: every action's happy path and repeat, the source-side
 * timeouts, rollback on both sides, cancel, replan, and the rules around terminate and capacity.
 */
import { describe, expect, it } from 'vitest';
import { openMemoryNcStore } from '../../nc/ncStore.js';
import { harness, runRequest, settle } from './fixtures.js';
import {
  A, B, commit, DST, hv, item, itemOf, MIG, OTHER, pair, plan, prepareDest, prepareSource, replan, rollback, SRC,
  startMigration, TIMEOUTS, whereIs, type Pair,
} from './migrationFixtures.js';
import { FakeDriver } from './fakeDriver.js';

async function advance(p: Pair, ms: number): Promise<void> {
  p.clock.advance(ms);
  await settle();
}

describe('the handshake, happy path', () => {
  it('moves an instance: it ends running on the destination only, the item completed with stats', async () => {
    const p = await pair();
    const prepared = await p.src.controller.migrate(prepareSource(plan([item(A)])));
    expect(prepared.plan?.items).toMatchObject([{ instanceId: A, state: 'queued' }]);
    expect(p.src.store.read().instances[A]).toMatchObject({ migrationState: 'ready', migrationId: MIG });

    const incoming = await p.dst.controller.migrate(prepareDest(A));
    expect(incoming.incoming).toMatchObject({ instanceId: A, migrationId: MIG, source: SRC, state: 'ready' });
    expect(p.dst.driver.domains.get(A)?.state).toBe('paused');
    expect((await p.dst.controller.describe()).used).toEqual({ cores: 1, memoryMiB: 256, diskGiB: 5 });

    const committed = await p.src.controller.migrate(commit(A));
    expect(committed.plan?.items[0]).toMatchObject({ state: 'migrating', startedAt: p.clock.now() });
    await settle();
    expect(p.src.driver.calls).toContain(`migrateOut ${A} ${hv(A)}`);
    expect((await p.src.controller.describe()).instances).toMatchObject([{ instanceId: A, state: 'running', migrationState: 'migrating' }]);

    p.src.driver.progress(hv(A));
    p.src.driver.complete(hv(A), { elapsedMs: 900, downtimeMs: 30, iterations: 3 });
    await settle();

    expect(whereIs(p)).toEqual({ records: [DST], running: [DST] });
    expect(itemOf(p.src)).toMatchObject({
      state: 'completed', endedAt: p.clock.now(),
      stats: { elapsedMs: 900, downtimeMs: 30, bytesTransferred: 64 * 1024 * 1024, iterations: 3 },
    });
    const srcNode = await p.src.controller.describe();
    expect(srcNode.instances).toEqual([]);
    expect(srcNode.plans?.[0]?.items[0]?.state).toBe('completed');
    const dstNode = await p.dst.controller.describe();
    expect(dstNode.incoming).toEqual([]);
    expect(dstNode.instances).toEqual([expect.objectContaining({
      instanceId: A, reservationId: 'r-00000001', imageId: 'emi-00000001', ownerId: 'alice', launchTime: 1000,
      vmType: runRequest(A).vmType, state: 'running', migrationState: 'none',
    })]);
    expect(dstNode.used).toEqual({ cores: 1, memoryMiB: 256, diskGiB: 5 });
  });

  it('persists the whole plan before it answers a source prepare, after looking at the hypervisor', async () => {
    const p = await pair({ instances: [A, B] });
    p.src.log.length = 0;
    const res = await p.src.controller.migrate(prepareSource(plan([item(A), item(B)])));
    p.src.log.push('reply');
    expect(p.src.log).toEqual(['list', `persist {"node":"enabled","${A}":"running","${B}":"running"}`, 'reply']);
    expect(res.plan).toEqual(await p.src.controller.migrate(prepareSource(plan([item(A)]))).then((r) => r.plan));
    expect(Object.values(p.src.store.read().instances).map((r) => r.migrationState)).toEqual(['ready', 'ready']);
  });

  it('persists preparing, prepares the hypervisor, persists ready, then answers a destination prepare', async () => {
    const p = await pair();
    const states: string[] = [];
    const store = p.dst.store;
    const orig = store.update.bind(store);
    store.update = async (m) => {
      const r = await orig(m);
      states.push(store.read().incoming[A]?.state ?? 'none');
      return r;
    };
    p.dst.log.length = 0;
    await p.dst.controller.migrate(prepareDest(A));
    expect(states).toEqual(['preparing', 'ready']);
    expect(p.dst.log.filter((l) => !l.startsWith('persist'))).toEqual([`prepareIncoming ${A} ${hv(A)}`]);
  });

  it('answers every repeat without doing anything twice', async () => {
    const p = await pair();
    await startMigration(p);
    const srcCalls = p.src.driver.calls.length;
    const dstCalls = p.dst.driver.calls.length;
    const before = structuredClone(p.src.store.read());
    const again = [
      await p.src.controller.migrate(prepareSource(plan([item(A)]))),
      await p.src.controller.migrate(commit(A)),
    ];
    const incoming = await p.dst.controller.migrate(prepareDest(A));
    expect(again.map((r) => r.plan?.items[0]?.state)).toEqual(['migrating', 'migrating']);
    expect(incoming.incoming?.state).toBe('ready');
    expect(p.src.store.read()).toEqual(before);
    expect(p.src.driver.calls.slice(srcCalls)).toEqual([]);
    expect(p.dst.driver.calls.slice(dstCalls)).toEqual([]);
    p.src.driver.complete(hv(A));
    await settle();
    // Late messages after completion are harmless too.
    expect((await p.src.controller.migrate(commit(A))).plan?.items[0]?.state).toBe('completed');
    expect((await p.src.controller.migrate(rollback('source'))).plan?.items[0]?.state).toBe('completed');
    expect(await p.dst.controller.migrate(prepareDest(A))).toEqual({ migrationId: MIG });
    expect(whereIs(p)).toEqual({ records: [DST], running: [DST] });
  });

  it('shows progress ticks in describe without persisting them', async () => {
    const p = await pair();
    await startMigration(p);
    p.src.driver.progress(hv(A), 100);
    p.src.driver.progress(hv(A), 50);
    const node = await p.src.controller.describe();
    expect(node.plans?.[0]?.items[0]?.progress).toMatchObject({ bytesTransferred: 150, iteration: 2 });
    expect(itemOf(p.src)?.progress).toBeUndefined();
  });

  it('migrates the items of a drain independently and finishes the plan with the last one', async () => {
    const p = await pair({ instances: [A, B] });
    const drain = plan([item(A), item(B)], { request: { kind: 'drain', destinations: [], allowHosts: true, reserveDestinations: false } });
    await p.src.controller.migrate(prepareSource(drain));
    for (const id of [A, B]) {
      await p.dst.controller.migrate(prepareDest(id));
      await p.src.controller.migrate(commit(id));
    }
    await settle();
    p.src.driver.complete(hv(A));
    await settle();
    expect(p.src.store.read().plans[MIG]?.finishedAt).toBeUndefined();
    p.src.driver.failMigration(hv(B));
    await settle();
    expect(p.src.store.read().plans[MIG]?.items.map((i) => i.state)).toEqual(['completed', 'rolled-back']);
    expect(p.src.store.read().plans[MIG]?.finishedAt).toBe(p.clock.now());
    expect(whereIs(p, A)).toEqual({ records: [DST], running: [DST] });
    expect(whereIs(p, B)).toEqual({ records: [SRC], running: [SRC] });
  });

  it('hints the CC at every change', async () => {
    const p = await pair();
    p.srcEvents.events.length = 0;
    await startMigration(p);
    p.src.driver.complete(hv(A));
    await settle();
    expect(p.srcEvents.events).toEqual([
      { host: SRC, kind: 'migration', migrationId: MIG },
      { host: SRC, kind: 'migration', migrationId: MIG, instanceId: A },
      { host: SRC, kind: 'migration', migrationId: MIG, instanceId: A },
      { host: SRC, kind: 'migration', migrationId: MIG, instanceId: A },
      { host: SRC, kind: 'instance', migrationId: MIG, instanceId: A },
    ]);
    expect(p.dstEvents.events.map((e) => e.kind)).toEqual(['migration', 'migration', 'instance']);
  });
});

describe('finishing without events (level-based)', () => {
  it('finalizes the arrival on the next describe when the event was lost', async () => {
    const p = await pair();
    await startMigration(p);
    p.dst.driver.muted = true;
    p.src.driver.complete(hv(A));
    await settle();
    expect(p.dst.store.read().incoming[A]).toBeDefined();
    const node = await p.dst.controller.describe();
    expect(node.incoming).toEqual([]);
    expect(node.instances.map((i) => [i.instanceId, i.state])).toEqual([[A, 'running']]);
  });

  it('finalizes it on the tick of the injected clock, without any describe', async () => {
    const p = await pair();
    await startMigration(p);
    p.dst.driver.muted = true;
    p.src.driver.complete(hv(A));
    await settle();
    await advance(p, 1000);
    expect(p.dst.store.read().instances[A]).toMatchObject({ phase: 'running', arrivedBy: MIG });
    expect(p.dst.store.read().incoming).toEqual({});
  });
});

describe('source timeouts', () => {
  it('aborts a migration that does not complete in base + per-GiB time; the VM keeps running here', async () => {
    const p = await pair();
    await startMigration(p);
    // Progress keeps the stall clock quiet; 256 MiB allows 30 s + 15 s.
    for (let t = 0; t < 44; t += 4) {
      p.src.driver.progress(hv(A), 1);
      await advance(p, 4000);
    }
    expect(itemOf(p.src)?.state).toBe('migrating');
    p.src.driver.progress(hv(A), 1);
    await advance(p, 1000);
    expect(p.src.driver.calls).toContain(`abortMigration ${A} ${hv(A)}`);
    expect(itemOf(p.src)).toMatchObject({ state: 'rolled-back', error: expect.stringContaining('not completed within 45000 ms') });
    expect(p.src.store.read().instances[A]?.migrationState).toBe('none');
    expect(whereIs(p)).toEqual({ records: [SRC], running: [SRC] });
  });

  it('aborts a migration that makes no progress for stallMs', async () => {
    const p = await pair();
    await startMigration(p);
    p.src.driver.progress(hv(A));
    await advance(p, TIMEOUTS.stallMs - 1000);
    expect(itemOf(p.src)?.state).toBe('migrating');
    await advance(p, 1000);
    expect(itemOf(p.src)).toMatchObject({ state: 'rolled-back', error: expect.stringContaining('no progress for 20000 ms') });
    expect(whereIs(p)).toEqual({ records: [SRC], running: [SRC] });
  });

  it('lets a migration in its switchover finish when the abort comes too late', async () => {
    const p = await pair();
    await startMigration(p);
    p.src.driver.switchover(hv(A));
    await advance(p, TIMEOUTS.stallMs);
    expect(p.src.driver.calls).toContain(`abortMigration ${A} ${hv(A)}`);
    expect(itemOf(p.src)?.state).toBe('migrating');
    p.src.driver.complete(hv(A));
    await settle();
    expect(itemOf(p.src)?.state).toBe('completed');
    expect(whereIs(p)).toEqual({ records: [DST], running: [DST] });
  });
});

describe('failures and rollback', () => {
  it('rolls back a migration that fails: the instance stays running here and can be terminated again', async () => {
    const p = await pair();
    await startMigration(p);
    p.src.driver.failMigration(hv(A), 'MigrationFailed', 'did not converge in 30 iterations');
    await settle();
    expect(itemOf(p.src)).toMatchObject({ state: 'rolled-back', error: expect.stringContaining('did not converge') });
    expect(p.src.store.read().instances[A]?.migrationState).toBe('none');
    // The destination's copy was dropped with the broken stream; its record waits for the CC's rollback.
    expect(p.dst.driver.domains.has(A)).toBe(false);
    await p.dst.controller.migrate(rollback('destination'));
    expect(p.dst.store.read().incoming).toEqual({});
    expect(await p.src.controller.terminate(A)).toMatchObject({ currentState: 'terminated' });
  });

  it.each([
    ['rollback', false, 'rolled-back'],
    ['cancel', true, 'cancelled'],
  ])('%s of a migrating item aborts it and answers once the VM runs here again', async (_n, cancel, state) => {
    const p = await pair();
    await startMigration(p);
    const res = await p.src.controller.migrate(rollback('source', { cancel, reason: 'operator asked' }));
    expect(res.plan).toMatchObject({ cancelRequested: cancel, items: [{ state, error: 'operator asked' }] });
    expect(p.src.driver.calls).toContain(`abortMigration ${A} ${hv(A)}`);
    expect(whereIs(p)).toEqual({ records: [SRC], running: [SRC] });
    expect(p.src.store.read().instances[A]?.migrationState).toBe('none');
  });

  it('rolls back queued items without touching the hypervisor, and a later commit is refused', async () => {
    const p = await pair({ instances: [A, B] });
    await p.src.controller.migrate(prepareSource(plan([item(A), item(B)])));
    const calls = p.src.driver.calls.length;
    const res = await p.src.controller.migrate(rollback('source', { instanceId: A }));
    expect(res.plan?.items.map((i) => i.state)).toEqual(['rolled-back', 'queued']);
    expect(p.src.driver.calls.slice(calls).filter((c) => !c.startsWith('persist'))).toEqual([]);
    expect(p.src.store.read().instances[A]?.migrationState).toBe('none');
    expect(p.src.store.read().instances[B]?.migrationState).toBe('ready');
    await expect(p.src.controller.migrate(commit(A))).rejects.toMatchObject({ code: 'MigrationNotPrepared', status: 409 });
    // A repeat, and a rollback of an unknown plan, are answered as success.
    expect((await p.src.controller.migrate(rollback('source', { instanceId: A }))).plan?.items[0]?.state).toBe('rolled-back');
    expect(await p.src.controller.migrate(rollback('source', { migrationId: 'mig-000000ff' }))).toEqual({ migrationId: 'mig-000000ff' });
  });

  it('never undoes a completed item', async () => {
    const p = await pair();
    await startMigration(p);
    p.src.driver.complete(hv(A));
    await settle();
    const res = await p.src.controller.migrate(rollback('source', { cancel: true }));
    expect(res.plan).toMatchObject({ cancelRequested: true, items: [{ state: 'completed' }] });
    expect(whereIs(p)).toEqual({ records: [DST], running: [DST] });
  });

  it('rolls back the destination: the reservation is released, and a repeat is harmless', async () => {
    const p = await pair();
    await p.dst.controller.migrate(prepareDest(A));
    expect(await p.dst.controller.migrate(rollback('destination'))).toEqual({ migrationId: MIG });
    expect(p.dst.driver.calls).toContain(`abortIncoming ${A} ${hv(A)}`);
    expect(p.dst.driver.domains.has(A)).toBe(false);
    const node = await p.dst.controller.describe();
    expect(node.incoming).toEqual([]);
    expect(node.used).toEqual({ cores: 0, memoryMiB: 0, diskGiB: 0 });
    expect(await p.dst.controller.migrate(rollback('destination'))).toEqual({ migrationId: MIG });
  });

  it('keeps an instance that arrived before the destination rollback did', async () => {
    const p = await pair();
    await startMigration(p);
    p.dst.driver.muted = true;
    p.src.driver.complete(hv(A));
    await settle();
    await p.dst.controller.migrate(rollback('destination'));
    expect(p.dst.store.read().instances[A]).toMatchObject({ phase: 'running', arrivedBy: MIG });
    expect(whereIs(p)).toEqual({ records: [DST], running: [DST] });
  });

  it('a destination rollback during the transfer breaks it: the source rolls back', async () => {
    const p = await pair();
    await startMigration(p);
    await p.dst.controller.migrate(rollback('destination'));
    await settle();
    expect(itemOf(p.src)?.state).toBe('rolled-back');
    expect(whereIs(p)).toEqual({ records: [SRC], running: [SRC] });
  });
});

describe('commit checks', () => {
  it('refuses to commit when the domain stopped after prepare, and changes nothing', async () => {
    const p = await pair();
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    await p.dst.controller.migrate(prepareDest(A));
    p.src.driver.powerCycle();
    const before = structuredClone(p.src.store.read());
    await expect(p.src.controller.migrate(commit(A))).rejects.toMatchObject({ code: 'InstanceNotRunning', fields: { state: 'shutoff' } });
    expect(p.src.store.read()).toEqual(before);
    expect(p.src.driver.calls.filter((c) => c.startsWith('migrateOut'))).toEqual([]);
  });
});

describe('replan', () => {
  it('moves a queued item to a new destination, counting the attempt, and commits there', async () => {
    const p = await pair();
    const other = new FakeDriver(OTHER);
    p.src.driver.link(other);
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    const res = await p.src.controller.migrate(replan(A, OTHER));
    expect(res.plan?.items[0]).toMatchObject({ destination: OTHER, attempts: 2, state: 'queued' });
    expect((await p.src.controller.migrate(replan(A, OTHER))).plan?.items[0]?.attempts).toBe(2);
    await expect(p.src.controller.migrate(commit(A))).rejects.toMatchObject({ code: 'MigrationNotPrepared' });
    await other.prepareIncoming({ id: A, resources: { cores: 1, memoryMiB: 256, diskGiB: 5 }, imageId: 'emi-00000001' }, hv(A));
    await p.src.controller.migrate(commit(A, { destination: OTHER, destinationUri: other.uri }));
    await settle();
    p.src.driver.complete(hv(A));
    await settle();
    expect(itemOf(p.src)?.state).toBe('completed');
    expect(other.domains.get(A)?.state).toBe('running');
  });

  it('fails a queued item with the reason given, releasing its instance', async () => {
    const p = await pair();
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    const res = await p.src.controller.migrate(replan(A, '', 'destination full at execution time'));
    expect(res.plan?.items[0]).toMatchObject({ state: 'failed', destination: '', error: 'destination full at execution time' });
    expect((await p.src.controller.migrate(replan(A, '', 'again'))).plan?.items[0]?.error).toBe('destination full at execution time');
    expect(p.src.store.read().instances[A]?.migrationState).toBe('none');
    expect(p.src.store.read().plans[MIG]?.finishedAt).toBe(p.clock.now());
  });
});

describe('the node around migrations', () => {
  it('refuses to terminate an instance while it migrates, on either side, and allows it after', async () => {
    const p = await pair();
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    await expect(p.src.controller.terminate(A)).rejects.toMatchObject({ code: 'InstanceMigrating', status: 409, fields: { migrationState: 'ready' } });
    await p.dst.controller.migrate(prepareDest(A));
    await expect(p.dst.controller.terminate(A)).rejects.toMatchObject({ code: 'InstanceMigrating' });
    await p.src.controller.migrate(commit(A));
    await expect(p.src.controller.terminate(A)).rejects.toMatchObject({ code: 'InstanceMigrating', fields: { migrationState: 'migrating' } });
    await p.src.controller.migrate(rollback('source'));
    expect(await p.src.controller.terminate(A)).toMatchObject({ currentState: 'terminated' });
  });

  it('a disabled destination refuses unless the plan named it; a disabled source keeps running its VMs', async () => {
    const p = await pair();
    await p.dst.controller.modify('disabled');
    await expect(p.dst.controller.migrate(prepareDest(A))).rejects.toMatchObject({ code: 'NodeDisabled' });
    expect(p.dst.store.read().incoming).toEqual({});
    expect((await p.dst.controller.migrate(prepareDest(A, { allowDisabled: true }))).incoming?.state).toBe('ready');
    await p.src.controller.modify('disabled');
    expect((await p.src.controller.describe()).instances.map((i) => i.state)).toEqual(['running']);
    await expect(p.src.controller.run(runRequest(B))).rejects.toMatchObject({ code: 'NodeDisabled' });
  });

  it('counts incoming records against runs, and refuses to run an incoming id', async () => {
    const dst = new FakeDriver(DST, { cores: 1, memoryMiB: 4096, diskGiB: 100 });
    const h = await harness({ host: DST, driver: dst, store: await openMemoryNcStore() });
    await h.controller.migrate(prepareDest(A));
    await expect(h.controller.run(runRequest(B))).rejects.toMatchObject({ code: 'InsufficientCapacity' });
    await expect(h.controller.run(runRequest(A))).rejects.toMatchObject({ code: 'InstanceExists' });
    await expect(h.controller.migrate(prepareDest(B))).rejects.toMatchObject({ code: 'InsufficientCapacity' });
  });

  it('keeps finished plans for DescribeMigrations, then lets them expire on the injected clock', async () => {
    const p = await pair();
    await startMigration(p);
    p.src.driver.complete(hv(A));
    await settle();
    await advance(p, 60 * 60 * 1000);
    expect((await p.src.controller.describe()).plans?.map((x) => x.migrationId)).toEqual([MIG]);
    await advance(p, 5 * 60 * 60 * 1000);
    expect((await p.src.controller.describe()).plans).toEqual([]);
    expect(p.src.store.read().plans).toEqual({});
  });
});
