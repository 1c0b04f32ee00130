import { pendingRecord } from '../../nc/admission.js';
import { describe, expect, it } from 'vitest';
import { openMemoryNcStore, type NcSnapshot } from '../../nc/ncStore.js';
import { NodeController } from '../../nc/nodeController.js';
import { HypervisorErrors } from '../../nc/hypervisor/errors.js';
import { ManualClock } from '../../shared/clock.js';
import { silentLogger } from '../../shared/log.js';
import { StoreErrors } from '../../shared/store/errors.js';
import type { Store } from '../../shared/store/store.js';
import { FakeDriver } from './fakeDriver.js';
import { harness, HOST, LARGE, runRequest, settle, SMALL } from './fixtures.js';

const A = 'i-0000000a';
const B = 'i-0000000b';

describe('ncRunInstance', () => {
  it('persists pending, creates, persists running, then replies', async () => {
    const h = await harness({ storeDelayMs: 5 });
    h.log.length = 0;
    const res = await h.controller.run(runRequest(A));
    h.log.push('reply');
    expect(res.instance).toMatchObject({ instanceId: A, state: 'running', hypervisorState: 'running', migrationState: 'none' });
    expect(h.log).toEqual([`persist {"node":"enabled","${A}":"pending"}`, `create ${A}`, `persist {"node":"enabled","${A}":"running"}`, 'reply']);
    expect(h.driver.domains.get(A)).toMatchObject({ resources: { cores: 1, memoryMiB: 256, diskGiB: 5 }, imageId: 'emi-00000001' });
    expect(Object.keys(h.driver.domains.get(A)?.resources ?? {}).sort()).toEqual(['cores', 'diskGiB', 'memoryMiB']);
  });

  it('answers a retry with the same spec without creating again', async () => {
    const h = await harness();
    const first = await h.controller.run(runRequest(A));
    h.log.length = 0;
    const again = await h.controller.run(runRequest(A));
    expect(again).toEqual(first);
    expect(h.log).toEqual([]);
  });

  it('refuses the same id with another spec and changes nothing', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    const before = structuredClone(h.store.read());
    h.log.length = 0;
    await expect(h.controller.run(runRequest(A, { vmType: LARGE }))).rejects.toMatchObject({ code: 'InstanceExists', status: 409 });
    expect(h.store.read()).toEqual(before);
    expect(h.log).toEqual([]);
  });

  it('lets only one of two racing runs take the last slot', async () => {
    const driver = new FakeDriver(HOST, { cores: 2, memoryMiB: 4096, diskGiB: 100 });
    driver.overcommit = true;
    const h = await harness({ driver });
    await h.controller.run(runRequest(A));
    const results = await Promise.allSettled([h.controller.run(runRequest(B)), h.controller.run(runRequest('i-0000000c'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'InsufficientCapacity' });
    expect(driver.domains.size).toBe(2);
  });

  it('drops the pending record when the hypervisor definitely refuses', async () => {
    const h = await harness();
    h.driver.failNext('create', HypervisorErrors.make('InsufficientHostResources', { id: A, host: HOST, need: 'x', free: 'y' }));
    await expect(h.controller.run(runRequest(A))).rejects.toMatchObject({ code: 'InsufficientCapacity' });
    expect(h.store.read().instances).toEqual({});
  });

  it('keeps the pending record when the create outcome is unknown, and re-adoption settles it', async () => {
    const h = await harness();
    // The create reaches the hypervisor but the answer is lost.
    h.driver.afterCreate = async () => { h.driver.afterCreate = undefined; throw h.driver.unavailable(); };
    await expect(h.controller.run(runRequest(A))).rejects.toMatchObject({ code: 'HypervisorUnavailable', retryable: true });
    expect(h.store.read().instances[A]?.phase).toBe('pending');
    expect(h.controller.healthy).toBe(false);
    h.clock.advance(500);
    await settle();
    expect(h.controller.healthy).toBe(true);
    expect(h.store.read().instances[A]?.phase).toBe('running');
  });

  it('carries a pending record on when the caller retries', async () => {
    const h = await harness();
    h.driver.failNext('create');
    await expect(h.controller.run(runRequest(A))).rejects.toMatchObject({ code: 'HypervisorUnavailable' });
    h.driver.failNext('connect'); // keep the link down so re-adoption does not drop it first
    h.clock.advance(500);
    await settle();
    h.clock.advance(1000);
    await settle();
    const res = await h.controller.run(runRequest(A));
    expect(res.instance.state).toBe('running');
  });

  it.each([
    ['before the domain is created', 1],
    ['after the domain is created, before running is persisted', 2],
  ])('never loses an acknowledged instance when the NC dies %s', async (_n, failingWrite) => {
    const inner = await openMemoryNcStore();
    let writes = 0;
    // A store that "dies" at the given write: that write and every later one fail, as in a crash.
    const dying: Store<NcSnapshot> = {
      read: () => inner.read(),
      update: (m) => (++writes >= failingWrite
        ? Promise.reject(StoreErrors.make('StoreWriteFailed', { file: 'nc.json', detail: 'crash' }))
        : inner.update(m)),
    };
    const driver = new FakeDriver(HOST);
    const h = await harness({ driver, store: dying });
    writes = 0;
    await expect(h.controller.run(runRequest(A))).rejects.toMatchObject({ code: 'StateWriteFailed' });
    // Restart over what reached the disk.
    const again = await harness({ driver, store: inner });
    const node = await again.controller.describe();
    const inst = node.instances.find((i) => i.instanceId === A);
    if (failingWrite === 1) {
      expect(inst).toBeUndefined();
      expect(driver.domains.has(A)).toBe(false);
    } else {
      expect(inst?.state).toBe('running');
    }
    // The caller's retry is answered either way, and never creates a second domain.
    const retry = await again.controller.run(runRequest(A));
    expect(retry.instance.state).toBe('running');
    expect(driver.domains.size).toBe(1);
  });
});

describe('ncTerminateInstance', () => {
  it('persists shutting-down, destroys, persists terminated, and answers a repeat the same', async () => {
    const h = await harness({ storeDelayMs: 5 });
    await h.controller.run(runRequest(A));
    h.log.length = 0;
    const first = await h.controller.terminate(A);
    h.log.push('reply');
    expect(first).toEqual({ instanceId: A, previousState: 'running', currentState: 'terminated' });
    expect(h.log).toEqual([`persist {"node":"enabled","${A}":"shutting-down"}`, `destroy ${A}`, `persist {"node":"enabled","${A}":"terminated"}`, 'reply']);
    h.log.length = 0;
    expect(await h.controller.terminate(A)).toEqual(first);
    expect(h.log).toEqual([]);
  });

  it('a re-homed copy keeps where it came from; a move forgets only a stopped copy; a user\'s terminate marks the tombstone', async () => {
    const h = await harness();
    await h.controller.run({ ...runRequest(A), moved: { from: '127.0.89.9', generation: 2 } });
    expect((await h.controller.describe()).instances.find((i) => i.instanceId === A)?.moved).toEqual({ from: '127.0.89.9', generation: 2 });
    expect(h.store.read().instances[A]?.moved).toEqual({ from: '127.0.89.9', generation: 2 });
    await expect(h.controller.terminate(A, 'move')).rejects.toMatchObject({ code: 'InstanceStateConflict' });
    expect(h.store.read().instances[A]?.phase).toBe('running');
    await h.controller.stopInstance({ instanceId: A, force: true });
    await h.controller.terminate(A, 'move');
    expect(h.store.read().instances[A]).toMatchObject({ phase: 'terminated', endedBy: 'move' });
    // The user's word reaches a tombstone a move left: kept, and reported.
    expect(await h.controller.terminate(A, 'user')).toEqual({ instanceId: A, previousState: 'stopped', currentState: 'terminated' });
    expect(h.store.read().instances[A]?.endedBy).toBe('user');
    expect((await h.controller.describe()).instances.find((i) => i.instanceId === A)?.endedBy).toBe('user');
  });

  it('forgets tombstones after an hour of the injected clock', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    await h.controller.terminate(A);
    h.clock.advance(59 * 60 * 1000);
    expect((await h.controller.describe()).instances.map((i) => i.state)).toEqual(['terminated']);
    h.clock.advance(60 * 1000);
    expect((await h.controller.describe()).instances).toEqual([]);
    await expect(h.controller.terminate(A)).rejects.toMatchObject({ code: 'InstanceNotFound', status: 404 });
  });

  it('refuses an unknown instance', async () => {
    const h = await harness();
    await expect(h.controller.terminate(A)).rejects.toMatchObject({ code: 'InstanceNotFound', fields: { instanceId: A, host: HOST } });
  });

  it('finishes a terminate the hypervisor missed once it is back', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    h.driver.failNext('destroy');
    await expect(h.controller.terminate(A)).rejects.toMatchObject({ code: 'HypervisorUnavailable' });
    expect(h.store.read().instances[A]?.phase).toBe('shutting-down');
    h.clock.advance(500);
    await settle();
    expect(h.driver.domains.has(A)).toBe(false);
    expect(h.store.read().instances[A]?.phase).toBe('terminated');
    expect(await h.controller.terminate(A)).toEqual({ instanceId: A, previousState: 'running', currentState: 'terminated' });
  });
});

describe('ncModifyNode', () => {
  it('persists the node state before replying, and is idempotent', async () => {
    const h = await harness({ storeDelayMs: 20 });
    h.log.length = 0;
    const res = await h.controller.modify('disabled');
    h.log.push('reply');
    expect(res).toMatchObject({ previousState: 'enabled', node: { nodeState: 'disabled' } });
    expect(h.log.indexOf('persist {"node":"disabled"}')).toBeGreaterThanOrEqual(0);
    expect(h.log.indexOf('persist {"node":"disabled"}')).toBeLessThan(h.log.indexOf('reply'));
    h.log.length = 0;
    const again = await h.controller.modify('disabled');
    expect(again).toMatchObject({ previousState: 'disabled', node: { nodeState: 'disabled' } });
    expect(h.log.filter((l) => l.startsWith('persist'))).toEqual([]);
    await expect(h.controller.run(runRequest(A))).rejects.toMatchObject({ code: 'NodeDisabled', status: 409 });
  });

  it('keeps the node state across a restart', async () => {
    const store = await openMemoryNcStore();
    const h = await harness({ store });
    await h.controller.modify('disabled');
    const again = await harness({ store, driver: h.driver });
    expect((await again.controller.describe()).nodeState).toBe('disabled');
  });
});

describe('ncDescribeResource and the hypervisor link', () => {
  it('reports capacity, used and instances', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    await h.controller.run(runRequest(B, { vmType: LARGE }));
    const node = await h.controller.describe();
    expect(node).toMatchObject({
      host: HOST, nodeState: 'enabled', healthy: true, hypervisor: 'sim',
      capacity: { cores: 4, memoryMiB: 4096, diskGiB: 100 }, used: { cores: 3, memoryMiB: 768, diskGiB: 15 },
    });
    expect(node.instances.map((i) => [i.instanceId, i.state])).toEqual([[A, 'running'], [B, 'running']]);
  });

  it('starts without a hypervisor, answers from records, and reconnects in the background', async () => {
    const store = await openMemoryNcStore();
    const first = await harness({ store });
    await first.controller.run(runRequest(A));
    first.driver.down = true;
    const h = await harness({ store, driver: first.driver });
    const down = await h.controller.describe();
    expect(down).toMatchObject({ healthy: false, capacity: { cores: 0 }, used: { cores: 1 } });
    expect(down.instances).toMatchObject([{ instanceId: A, state: 'running', hypervisorState: 'unknown' }]);
    await expect(h.controller.run(runRequest(B))).rejects.toMatchObject({ code: 'HypervisorUnavailable', status: 503 });
    h.driver.down = false;
    h.driver.powerCycle();
    h.clock.advance(500);
    await settle();
    const up = await h.controller.describe();
    expect(up).toMatchObject({ healthy: true, capacity: { cores: 4 } });
    expect(up.instances).toMatchObject([{ instanceId: A, state: 'stopped', hypervisorState: 'shutoff' }]);
  });

  it('answers with last-known states when the hypervisor goes away, backing off while it stays away', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    h.driver.down = true;
    const node = await h.controller.describe();
    expect(node.healthy).toBe(false);
    expect(node.instances).toMatchObject([{ instanceId: A, state: 'running', hypervisorState: 'running' }]);
    const connects = () => h.driver.calls.filter((c) => c === 'connect').length;
    const before = connects();
    h.clock.advance(500);
    await settle();
    h.clock.advance(1000);
    await settle();
    h.clock.advance(1999);
    await settle();
    expect(connects() - before).toBe(2); // 500 ms, then 1 s; the 2 s retry is not due yet
    h.driver.down = false;
    h.clock.advance(1);
    await settle();
    expect(h.controller.healthy).toBe(true);
  });

  it('counts a domain it has no record of, and leaves it alone', async () => {
    const driver = new FakeDriver(HOST, { cores: 2, memoryMiB: 4096, diskGiB: 100 });
    driver.addDomain('i-000000ff', { cores: 1, memoryMiB: 256, diskGiB: 5 });
    const h = await harness({ driver });
    const node = await h.controller.describe();
    expect(node.used).toEqual({ cores: 1, memoryMiB: 256, diskGiB: 5 });
    expect(node.instances).toEqual([]);
    await h.controller.run(runRequest(A));
    await expect(h.controller.run(runRequest(B))).rejects.toMatchObject({ code: 'InsufficientCapacity' });
    expect(driver.domains.has('i-000000ff')).toBe(true);
    expect(driver.calls.filter((c) => c.startsWith('destroy'))).toEqual([]);
  });

  it('re-adopts at start: pending with a domain runs, pending without one is dropped', async () => {
    const store = await openMemoryNcStore();
    await store.update((d) => {
      d.instances[A] = { ...pendingRecord(runRequest(A), 0), vmType: SMALL };
      d.instances[B] = { ...pendingRecord(runRequest(B), 0), vmType: SMALL };
    });
    const driver = new FakeDriver(HOST);
    driver.addDomain(A, SMALL);
    const h = await harness({ store, driver });
    expect((await h.controller.describe()).instances.map((i) => [i.instanceId, i.state])).toEqual([[A, 'running']]);
  });

  it('stops reconnecting once stopped', async () => {
    const clock = new ManualClock();
    const driver = new FakeDriver(HOST);
    driver.down = true;
    const c = new NodeController({ host: HOST, hypervisor: 'sim', store: await openMemoryNcStore(), driver, clock, logger: silentLogger() });
    await c.start();
    expect(clock.pendingTimers()).toBe(1);
    await c.stop();
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('ncStartInstance', () => {
  it('starts a shut-off instance it holds from its own domain, once, and answers a repeat as is', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    h.driver.powerCycle();
    await h.controller.describe();
    const before = structuredClone(h.store.read());
    h.log.length = 0;
    const res = await h.controller.startInstance(A);
    expect(res.instance).toMatchObject({ instanceId: A, state: 'running', hypervisorState: 'running' });
    expect(h.log).toEqual([`create ${A}`]);
    expect(h.driver.domains.get(A)?.state).toBe('running');
    // Nothing to persist: the record was `running` all along (only its domain stopped).
    expect(h.store.read()).toEqual(before);
    h.log.length = 0;
    expect((await h.controller.startInstance(A)).instance.state).toBe('running');
    expect(h.log).toEqual([]);
  });

  it('refuses on a disabled node and changes nothing', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    await h.controller.modify('disabled');
    h.driver.powerCycle();
    await h.controller.describe();
    h.log.length = 0;
    await expect(h.controller.startInstance(A)).rejects.toMatchObject({ code: 'NodeDisabled' });
    expect(h.log).toEqual([]);
    expect(h.driver.domains.get(A)?.state).toBe('shutoff');
  });

  it('refuses an id it does not hold, and a terminated one', async () => {
    const h = await harness();
    await expect(h.controller.startInstance(A)).rejects.toMatchObject({ code: 'InstanceNotFound' });
    await h.controller.run(runRequest(B));
    await h.controller.terminate(B);
    await expect(h.controller.startInstance(B)).rejects.toMatchObject({ code: 'InstanceNotStartable' });
  });
});
