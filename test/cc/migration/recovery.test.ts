/**
 * The runner when things go wrong or change under it, over fake NCs that implement the handshake:
 * every timeout, cancel, events versus polls, listing mid-migration, a CC restart, and the source
 * NC's answers to ccMigrateInstances.
 */
import { describe, expect, it } from 'vitest';
import { CcErrors } from '../../../cc/errors.js';
import { slots } from '../fakeNodes.js';
import { D1, D2, D3, id, S } from './builders.js';
import { ids, liveOn, migrationHarness, sourceWithInstances, TIMEOUTS } from './migrationHarness.js';

describe('timeouts roll back', () => {
  it('prepare: a destination that never answers', async () => {
    const h = await sourceWithInstances(1);
    h.fake.nc(D1).refuseMigrate = (req) => (req.action === 'prepare' ? CcErrors.make('NodeUnreachable', { host: D1, detail: 'timed out', maybeDelivered: true }) : undefined);
    const r = await h.migrate({ instanceId: id(1), destinations: [D1] });
    await h.settle();
    expect(h.states(r.migrationId)).toEqual(['queued']);
    expect((await h.describe(r.migrationId))[0]?.items[0]?.state).toBe('preparing');
    const prepares = (): number => h.fake.migrateCalls(id(1)).filter((c) => c.startsWith('prepare')).length;
    expect(prepares()).toBe(1);
    await h.advance(1000); // a failed call is repeated after a pause (RETRY_MIN_MS), not at once
    expect(prepares()).toBe(2);
    await h.advance(TIMEOUTS.prepareMs - 1000);
    expect(h.fake.item(r.migrationId, id(1))).toMatchObject({ state: 'rolled-back', error: expect.stringContaining('not ready within') });
    expect(prepares()).toBe(2);
    expect(liveOn(h, S)).toEqual([id(1)]);
  });

  it('ready: a source that cannot be made to commit; the destination is cleaned up', async () => {
    const h = await sourceWithInstances(1);
    h.fake.nc(S).refuseMigrate = (req) => (req.action === 'commit' ? CcErrors.make('NodeUnreachable', { host: S, detail: 'timed out', maybeDelivered: true }) : undefined);
    const r = await h.migrate({ instanceId: id(1), destinations: [D1] });
    await h.settle();
    expect(h.fake.nc(D1).incoming.map((x) => x.state)).toEqual(['ready']);
    await h.advance(TIMEOUTS.readyMs - 1);
    expect(h.states(r.migrationId)).toEqual(['queued']);
    await h.advance(1);
    expect(h.fake.item(r.migrationId, id(1))).toMatchObject({ state: 'rolled-back', error: expect.stringContaining('not committed within') });
    expect(h.fake.nc(D1).incoming).toEqual([]);
    expect(h.reserved()).toEqual({});
  });

  it('migrating: the CC backstop aborts a migration its source never finished', async () => {
    const h = await sourceWithInstances(1, { mode: 'manual' });
    const r = await h.migrate({ instanceId: id(1), destinations: [D1] });
    await h.settle();
    expect(h.states(r.migrationId)).toEqual(['migrating']);
    // 256 MiB: allowance 1000 + 1000 × 0.25 = 1250 ms; backstop 2 × 1250 + 500 = 3000 ms.
    await h.advance(2999);
    expect(h.states(r.migrationId)).toEqual(['migrating']);
    await h.advance(1);
    expect(h.fake.item(r.migrationId, id(1))).toMatchObject({ state: 'rolled-back', error: expect.stringContaining('CC backstop') });
    expect(h.fake.nc(D1).incoming).toEqual([]);
    expect(liveOn(h, S)).toEqual([id(1)]);
  });
});

describe('cancel', () => {
  it('rolls back everything not committed: the migrating item is aborted, queued ones cancelled, VMs stay', async () => {
    const h = await sourceWithInstances(3, { limits: { perSource: 2 }, mode: 'manual' });
    const r = await h.migrate({ sourceHost: S });
    await h.settle();
    await h.switchOver(r.migrationId, id(1)); // committed: cleaning
    expect(h.states(r.migrationId)).toEqual(['cleaning', 'migrating', 'queued']);
    const { plan } = await h.cancel(r.migrationId);
    expect(plan.cancelRequested).toBe(true);
    await h.settle();
    expect(h.states(r.migrationId)).toEqual(['cleaning', 'cancelled', 'cancelled']);
    expect(liveOn(h, S)).toEqual(ids(1, 3)); // the cleaning one is still listed by its source until completed
    expect([D1, D2, D3].flatMap((d) => h.fake.nc(d).incoming)).toEqual([]);
    await h.finishCleaning(r.migrationId, id(1));
    await expect(h.cancel(r.migrationId)).rejects.toMatchObject({ code: 'MigrationAlreadyFinished', status: 409 });
  });

  it('an unknown plan is MigrationNotFound (describe and cancel)', async () => {
    const h = await sourceWithInstances(1);
    await expect(h.cancel('mig-deadbeef')).rejects.toMatchObject({ code: 'MigrationNotFound', status: 404 });
    await expect(h.describe('mig-deadbeef')).rejects.toMatchObject({ code: 'MigrationNotFound' });
  });
});

describe('events and polls', () => {
  it('an NC\'s event moves the next item at once; without events the poll does it, one interval later', async () => {
    for (const events of [true, false]) {
      const h = await sourceWithInstances(2, { limits: { perSource: 1 }, events, pollMs: 5000 });
      const r = await h.migrate({ sourceHost: S, destinations: [D1] });
      await h.settle();
      if (events) {
        expect(h.states(r.migrationId)).toEqual(['completed', 'completed']);
      } else {
        expect(h.states(r.migrationId)).toEqual(['completed', 'queued']); // done on the NC; the CC has not looked yet
        await h.advance(5000);
        expect(h.states(r.migrationId)).toEqual(['completed', 'completed']);
      }
      await h.keeper.stop();
    }
  });

  it('ccNodeEvent from an unregistered host is NodeNotFound', async () => {
    const h = await sourceWithInstances(0);
    await expect(h.ops.ccNodeEvent({ host: '127.0.11.99', kind: 'migration' }, { peer: 't' })).rejects.toMatchObject({ code: 'NodeNotFound' });
  });
});

describe('listing during a migration', () => {
  it('lists the instance once: from the source, with its route, until the item completes; then from the destination', async () => {
    const h = await sourceWithInstances(1, { mode: 'manual' });
    const r = await h.migrate({ instanceId: id(1), destinations: [D1] });
    await h.settle();
    const once = async () => {
      const list = (await h.instances()).filter((i) => i.instanceId === id(1));
      expect(list).toHaveLength(1);
      return list[0];
    };
    expect(await once()).toMatchObject({ host: S, migrationState: 'migrating', migrationSource: S, migrationDestination: D1 });
    await h.switchOver(r.migrationId, id(1));
    expect(h.fake.live(D1).map((i) => i.instanceId)).toEqual([id(1)]); // both NCs report it now
    expect(await once()).toMatchObject({ host: S, migrationState: 'cleaning', migrationSource: S, migrationDestination: D1 });
    await h.finishCleaning(r.migrationId, id(1));
    expect(await once()).toMatchObject({ host: D1, migrationState: 'none', migrationSource: '', migrationDestination: '' });
    const located = await h.ops.ccTerminateInstances({ instanceIds: [id(1)] }, { peer: 't' });
    expect(located.instances).toHaveLength(1);
    expect(h.fake.callsOf('terminate').map((c) => c.host)).toEqual([D1]);
  });
});

describe('CC restart', () => {
  it('a new CC over the same NCs resumes every plan from what they report', async () => {
    const h = await sourceWithInstances(3, { limits: { perSource: 2 }, mode: 'manual' });
    // Commits fail for now, so one item is left prepared (ready) but not committed.
    h.fake.nc(S).refuseMigrate = (req) => (req.action === 'commit' && req.instanceId === id(2) ? CcErrors.make('NodeUnreachable', { host: S, detail: 'timed out', maybeDelivered: true }) : undefined);
    const r = await h.migrate({ sourceHost: S });
    await h.settle();
    expect(h.states(r.migrationId)).toEqual(['migrating', 'queued', 'queued']);
    const readyAt = h.fake.item(r.migrationId, id(2))?.destination ?? '';
    expect(h.fake.nc(readyAt).incoming.find((x) => x.instanceId === id(2))?.state).toBe('ready');

    h.fake.nc(S).refuseMigrate = undefined;
    await h.restart();
    // Nothing was durable in the CC: the plan, the reservation and the ready destination come from the NCs.
    expect((await h.describe()).map((p) => p.migrationId)).toEqual([r.migrationId]);
    expect(h.states(r.migrationId)).toEqual(['migrating', 'migrating', 'queued']);
    expect(h.reserved()).toEqual({ [r.plan.items[2]?.destination ?? '']: 1 });
    await h.complete(r.migrationId, ids(1, 3));
    expect(h.states(r.migrationId)).toEqual(['completed', 'completed', 'completed']);
    expect(liveOn(h, S)).toEqual([]);
    // The restarted CC's phase timers started again at the restart: no early timeouts fired.
    expect(h.fake.migrateCalls().filter((c) => c.startsWith('rollback'))).toEqual([]);
  });

  it('resumes plans of several sources, including one cancelled before the crash', async () => {
    const S2 = '127.0.11.5';
    const h = await migrationHarness({ nodes: [[S, slots(2)], [S2, slots(2)], [D1, slots(4)], [D2, slots(4)]], mode: 'manual', limits: { perSource: 1 } });
    await h.settle();
    for (const i of ids(1, 2)) h.fake.sneak(S, i);
    for (const i of ids(0x11, 2)) h.fake.sneak(S2, i);
    await h.keeper.refreshHosts([S, S2], 500);
    const a = await h.migrate({ sourceHost: S, destinations: [D1] });
    const b = await h.migrate({ sourceHost: S2, destinations: [D2] });
    await h.settle();
    // The cancel reaches the source NC, then the CC dies before cleaning the destination up.
    h.fake.nc(D2).link = 'down';
    await h.cancel(b.migrationId);
    await h.settle();
    expect(h.fake.nc(D2).incoming.map((r) => r.instanceId)).toEqual([id(0x11)]);

    await h.restart();
    h.fake.nc(D2).link = 'up';
    await h.keeper.refreshHosts([D2], 500);
    await h.settle();
    expect(h.fake.nc(D2).incoming).toEqual([]);
    expect(h.states(b.migrationId)).toEqual(['cancelled', 'cancelled']);
    expect(h.states(a.migrationId)).toEqual(['migrating', 'queued']);
    await h.complete(a.migrationId, ids(1, 2));
    expect(h.states(a.migrationId)).toEqual(['completed', 'completed']);
    expect(liveOn(h, D1)).toEqual(ids(1, 2));
    expect(liveOn(h, S2)).toEqual(ids(0x11, 2));
  });

  it('after a restart, a timeout counts from the restart (late, never early)', async () => {
    const h = await sourceWithInstances(1, { mode: 'manual' });
    const r = await h.migrate({ instanceId: id(1), destinations: [D1] });
    await h.settle();
    await h.advance(2000);
    await h.restart();
    await h.advance(2999);
    expect(h.states(r.migrationId)).toEqual(['migrating']);
    await h.advance(1);
    expect(h.states(r.migrationId)).toEqual(['rolled-back']);
  });
});

describe('ccMigrateInstances against its source NC', () => {
  it('a source NC refusal (an instance it knows is moving) is the answer: no plan, nothing reserved', async () => {
    const h = await sourceWithInstances(2);
    h.fake.nc(S).refuseMigrate = (req) => (req.action === 'prepare' ? CcErrors.withMessage('MigrationInProgress', `instance ${id(2)} is in mig-0000ffff`, { host: S }) : undefined);
    await expect(h.migrate({ sourceHost: S })).rejects.toMatchObject({ code: 'MigrationInProgress', status: 409, message: expect.stringContaining(id(2)) });
    await h.settle();
    expect(h.fake.nc(S).plans).toEqual([]);
    expect(h.reserved()).toEqual({});
    expect(h.fake.migrateCalls()).toEqual([`prepare-source@${S}`]);
  });

  it('a lost answer from the source is settled by asking it: the plan it persisted is the answer', async () => {
    const h = await sourceWithInstances(1);
    h.fake.nc(S).dropReplies = 1;
    const r = await h.migrate({ instanceId: id(1), destinations: [D1] });
    expect(r.plan.migrationId).toBe(r.migrationId);
    await h.settle();
    expect(h.states(r.migrationId)).toEqual(['completed']);
  });

  it('goes through the placement queue with RunInstances: the two never take the same last slot', async () => {
    const h = await migrationHarness({ nodes: [[S, slots(1)], [D1, slots(1)]] });
    await h.settle();
    h.fake.sneak(S, id(1));
    await h.keeper.refreshHosts([S], 500);
    let open!: () => void;
    const held = new Promise<void>((r) => { open = r; });
    h.fake.gate = (call) => (call.op === 'run' ? held : Promise.resolve());
    const run = h.run([id(0x50)]);
    await new Promise((r) => setImmediate(r));
    const migrate = h.migrate({ instanceId: id(1) });
    await new Promise((r) => setImmediate(r));
    expect(h.fake.migrateCalls()).toEqual([]); // waiting for the RunInstances ahead of it
    open();
    await expect(run).resolves.toMatchObject({ instances: [{ host: D1 }] });
    await expect(migrate).rejects.toMatchObject({ code: 'InsufficientCapacityForMigration' });
    h.fake.gate = undefined;
  });
});
