/**
 * The plan driver and the migration operations over fake NCs that implement the handshake: whole
 * migrations end to end, concurrency limits, reservations and re-planning at execution time.
 */
import { describe, expect, it } from 'vitest';
import { CcErrors } from '../../../cc/errors.js';
import { SMALL, slots } from '../fakeNodes.js';
import { D1, D2, D3, id, S } from './builders.js';
import { ids, liveOn, migrationHarness, sourceWithInstances } from './migrationHarness.js';

describe('drain, end to end', () => {
  it('with an allow list: every instance ends on an allowed host; commits carry the migration endpoint; nothing stays reserved', async () => {
    const h = await sourceWithInstances(3);
    const r = await h.migrate({ sourceHost: S, destinations: [D2, D3] });
    expect(r.migrationId).toBe('mig-00000001');
    expect(r.plan.items.every((i) => [D2, D3].includes(i.destination))).toBe(true);
    expect(r.unplaced).toEqual([]);
    await h.settle();
    expect(h.states(r.migrationId)).toEqual(['completed', 'completed', 'completed']);
    expect(liveOn(h, S)).toEqual([]);
    expect([...liveOn(h, D2), ...liveOn(h, D3)].sort()).toEqual(ids(1, 3));
    expect(liveOn(h, D1)).toEqual([]);
    expect(h.fake.commits.map((c) => c.destinationUri).sort()).toEqual(
      r.plan.items.map((i) => `http://${i.destination}:16509`).sort(),
    );
    expect(h.reserved()).toEqual({});
    for (const host of [D1, D2, D3]) expect(h.fake.nc(host).incoming).toEqual([]);
    const [described] = await h.describe(r.migrationId);
    expect(described).toMatchObject({ finished: true, sourceReachable: true });
    expect(described?.items.every((i) => i.stats !== undefined && i.endedAt !== undefined)).toBe(true);
  });

  it('with a deny list: nothing lands on the denied host', async () => {
    const h = await sourceWithInstances(4);
    const r = await h.migrate({ sourceHost: S, destinations: [D1], allowHosts: false });
    await h.settle();
    expect(h.states(r.migrationId)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(liveOn(h, D1)).toEqual([]);
    expect(h.fake.callsOf('migrate').some((c) => c.host === D1)).toBe(false);
  });

  it('the handshake per item: prepare on the destination, then commit on the source, each once', async () => {
    const h = await sourceWithInstances(1);
    await h.migrate({ instanceId: id(1), destinations: [D1] });
    await h.settle();
    expect(h.fake.migrateCalls(id(1))).toEqual([`prepare-destination@${D1}`, `commit@${S}`]);
    expect(h.fake.migrateCalls().filter((c) => c.startsWith('prepare-source'))).toEqual([`prepare-source@${S}`]);
  });
});

describe('concurrency limits', () => {
  it('per source: queued items wait for a slot and start in plan order as slots free', async () => {
    const h = await sourceWithInstances(3, { limits: { perSource: 1 }, mode: 'manual' });
    const { migrationId } = await h.migrate({ sourceHost: S });
    await h.settle();
    expect(h.states(migrationId)).toEqual(['migrating', 'queued', 'queued']);
    const described = (await h.describe(migrationId))[0];
    expect(described?.items.map((i) => i.state)).toEqual(['migrating', 'queued', 'queued']);
    await h.complete(migrationId, ids(1, 3));
    expect(h.states(migrationId)).toEqual(['completed', 'completed', 'completed']);
    const order = h.fake.callsOf('migrate').filter((c) => c.action === 'commit').map((c) => c.instanceId);
    expect(order).toEqual(ids(1, 3));
  });

  it('per destination and per cluster, across plans of different sources', async () => {
    const S2 = '127.0.11.5';
    const h = await migrationHarness({
      nodes: [[S, slots(4)], [S2, slots(4)], [D1, slots(8)]], limits: { perDestination: 1, perSource: 2, perCluster: 8 }, mode: 'manual',
    });
    h.fake.sneak(S, id(1));
    h.fake.sneak(S2, id(2));
    await h.keeper.refreshHosts([S, S2], 500);
    const a = await h.migrate({ instanceId: id(1), destinations: [D1] });
    const b = await h.migrate({ instanceId: id(2), destinations: [D1] });
    await h.settle();
    expect([...h.states(a.migrationId), ...h.states(b.migrationId)]).toEqual(['migrating', 'queued']);
    await h.complete(a.migrationId, [id(1)]);
    expect(h.states(b.migrationId)).toEqual(['migrating']);
  });
});

describe('reservations', () => {
  it('a plan holds its destinations\' room: RunInstances cannot take it; completion hands it to the VMs, counted once', async () => {
    const h = await migrationHarness({ nodes: [[S, slots(2)], [D1, slots(2)]], mode: 'manual', limits: { perSource: 1 } });
    for (const i of ids(1, 2)) h.fake.sneak(S, i);
    await h.keeper.refreshHosts([S], 500);
    const before = await h.ops.ccDescribeResources({ vmTypes: [SMALL] }, { peer: 't' });
    expect(before.matrix[0]).toMatchObject({ available: 2, max: 4 });
    const r = await h.migrate({ sourceHost: S });
    // The matrix in the answer is after the reservation: D1's room is the plan's, S still runs both.
    expect(r.matrix).toEqual([expect.objectContaining({ vmType: 'm1.small', available: 0, max: 4 })]);
    await h.settle();
    expect(h.reserved()).toEqual({ [D1]: 1 }); // one item prepared (D1 counts it itself), one still reserved here
    await expect(h.run([id(0x50)], 1)).rejects.toMatchObject({ code: 'InsufficientInstanceCapacity' });
    expect(h.fake.callsOf('run')).toEqual([]);
    await h.complete(r.migrationId, ids(1, 2));
    expect(h.reserved()).toEqual({});
    const m = await h.ops.ccDescribeResources({ vmTypes: [SMALL] }, { peer: 't' });
    expect(m.matrix[0]).toMatchObject({ available: 2 }); // S: 2 free; D1: 2 - 2 VMs (not 2 - 4)
    expect(h.fake.live(D1).map((i) => i.instanceId).sort()).toEqual(ids(1, 2));
  });

  it('rollback and cancel release the room', async () => {
    const h = await migrationHarness({ nodes: [[S, slots(2)], [D1, slots(2)]], mode: 'manual', limits: { perSource: 1 } });
    for (const i of ids(1, 2)) h.fake.sneak(S, i);
    await h.keeper.refreshHosts([S], 500);
    const r = await h.migrate({ sourceHost: S });
    await h.settle();
    await h.failTransfer(r.migrationId, id(1), 'the network went away');
    // The failed item's destination record is cleaned up; the second item took the slot.
    expect(h.states(r.migrationId)).toEqual(['rolled-back', 'migrating']);
    expect(h.fake.nc(D1).incoming.map((x) => x.instanceId)).toEqual([id(2)]);
    await h.cancel(r.migrationId);
    await h.settle();
    expect(h.states(r.migrationId)).toEqual(['rolled-back', 'cancelled']);
    expect(h.fake.nc(D1).incoming).toEqual([]);
    expect(h.reserved()).toEqual({});
    const started = await h.run(ids(0x60, 2), 2);
    expect(started.instances.map((i) => i.host)).toEqual([D1, D1]);
  });

  it('reserveDestinations keeps new instances off the destinations until the plan ends', async () => {
    const h = await migrationHarness({ nodes: [[S, slots(4)], [D1, slots(8)], [D2, slots(1)]], mode: 'manual' });
    h.fake.sneak(S, id(1));
    await h.keeper.refreshHosts([S], 500);
    const r = await h.migrate({ instanceId: id(1), destinations: [D1], reserveDestinations: true });
    await h.settle();
    const first = await h.run([id(0x70)], 1);
    expect(first.instances.map((i) => i.host)).toEqual([S]); // spread would pick D1 (most free) if it were not reserved
    await h.complete(r.migrationId, [id(1)]);
    const after = await h.run([id(0x71)], 1, 'r-0000000c');
    expect(after.instances.map((i) => i.host)).toEqual([D1]);
  });
});

describe('re-check at execution time', () => {
  it('a queued item whose destination was disabled meanwhile is re-planned, never sent there', async () => {
    const h = await sourceWithInstances(2, { limits: { perSource: 1 }, mode: 'manual' });
    const r = await h.migrate({ sourceHost: S, destinations: [D1], allowHosts: false });
    await h.settle();
    const second = r.plan.items[1];
    if (!second) throw new Error('two items expected');
    // Disable the second item's destination (through the CC, so the view knows at once).
    await h.ops.ccModifyNode({ host: second.destination, stateName: 'disabled', vmTypes: [{ name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 }] }, { peer: 't' });
    await h.complete(r.migrationId, [id(1)]);
    const item = h.fake.item(r.migrationId, id(2));
    expect(item).toMatchObject({ state: 'migrating', attempts: 2 });
    expect(item?.destination).not.toBe(second.destination);
    expect(item?.destination).not.toBe(D1);
    expect(h.fake.migrateCalls(id(2))).toEqual([`replan@${S}`, `prepare-destination@${item?.destination}`, `commit@${S}`]);
  });

  it('a destination that refuses to prepare is replaced', async () => {
    const h = await sourceWithInstances(1);
    h.fake.nc(D1).refuseMigrate = (req) => (req.action === 'prepare' ? CcErrors.make('NodeFull', { host: D1, detail: 'its own accounting says no' }) : undefined);
    const r = await h.migrate({ instanceId: id(1), destinations: [D3], allowHosts: false });
    expect(r.plan.items[0]?.destination).toBe(D1);
    await h.settle();
    expect(h.fake.item(r.migrationId, id(1))).toMatchObject({ state: 'completed', destination: D2, attempts: 2 });
    expect(h.fake.migrateCalls(id(1))).toEqual([`prepare-destination@${D1}`, `replan@${S}`, `prepare-destination@${D2}`, `commit@${S}`]);
  });

  it('with nowhere else to go, the item fails with the reason and the VM stays', async () => {
    const h = await sourceWithInstances(1);
    h.fake.nc(D1).refuseMigrate = () => CcErrors.make('NodeDisabled', { host: D1 });
    const r = await h.migrate({ instanceId: id(1), destinations: [D1] });
    await h.settle();
    expect(h.fake.item(r.migrationId, id(1))).toMatchObject({ state: 'failed', error: expect.stringContaining(`destination ${D1} refused`) });
    expect(liveOn(h, S)).toEqual([id(1)]);
  });
});
