/** ncPauseInstance through the NodeController and a FakeDriver (issue 18 part 6). */
import { describe, expect, it } from 'vitest';
import { openMemoryNcStore } from '../../nc/ncStore.js';
import { HypervisorErrors } from '../../nc/hypervisor/errors.js';
import { harness, runRequest } from './fixtures.js';

const A = 'i-0000000a';

describe('ncPauseInstance', () => {
  it('persists paused, suspends, then replies; the instance reports running with paused', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    h.log.length = 0;
    const res = await h.controller.pauseInstance({ instanceId: A, paused: true });
    h.log.push('reply');
    expect(h.log.map((l) => l.replace(/ \{.*\}$/, ''))).toEqual(['persist', `pause ${A}`, 'reply']);
    expect(h.store.read().instances[A]?.paused).toBe(true);
    expect(res).toMatchObject({ previouslyPaused: false, instance: { state: 'running', hypervisorState: 'suspended', paused: true } });
    expect(h.driver.domains.get(A)?.state).toBe('suspended');
    // Idempotent: nothing written, nothing asked.
    h.log.length = 0;
    expect(await h.controller.pauseInstance({ instanceId: A, paused: true })).toMatchObject({ previouslyPaused: true, instance: { paused: true } });
    expect(h.log).toEqual([]);
    const resumed = await h.controller.pauseInstance({ instanceId: A, paused: false });
    expect(resumed).toMatchObject({ previouslyPaused: true, instance: { state: 'running', hypervisorState: 'running' } });
    expect(resumed.instance.paused).toBeUndefined();
    expect(h.store.read().instances[A]?.paused).toBeUndefined();
  });

  it('a restarted NC keeps a paused instance paused and reports it', async () => {
    const store = await openMemoryNcStore();
    const h = await harness({ store });
    await h.controller.run(runRequest(A));
    await h.controller.pauseInstance({ instanceId: A, paused: true });
    await h.controller.stop();
    const again = await harness({ store, driver: h.driver });
    const node = await again.controller.describe();
    expect(node.instances.find((i) => i.instanceId === A)).toMatchObject({ state: 'running', hypervisorState: 'suspended', paused: true });
  });

  it('start-up settles a pause a crash left half-done: a paused record suspends its running domain', async () => {
    const store = await openMemoryNcStore();
    const h = await harness({ store });
    await h.controller.run(runRequest(A));
    await h.controller.stop();
    await store.update((d) => { const r = d.instances[A]; if (r) r.paused = true; });
    const again = await harness({ store, driver: h.driver });
    expect(h.driver.domains.get(A)?.state).toBe('suspended');
    expect((await again.controller.describe()).instances[0]).toMatchObject({ paused: true, hypervisorState: 'suspended' });
  });

  it('a hypervisor refusal undoes the record: nothing changed', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    const before = structuredClone(h.store.read());
    h.driver.failNext('pause', HypervisorErrors.make('DomainStateConflict', { id: A, host: h.driver.host, state: 'running', operation: 'pause' }));
    await expect(h.controller.pauseInstance({ instanceId: A, paused: true })).rejects.toMatchObject({ code: 'HypervisorRefused', fields: { hypervisorCode: 'DomainStateConflict' } });
    expect(h.store.read().instances).toEqual(before.instances);
    expect(h.driver.domains.get(A)?.state).toBe('running');
  });

  it('refuses an unknown instance and a terminated one, changing nothing', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    await h.controller.terminate(A);
    const before = structuredClone(h.store.read());
    h.log.length = 0;
    await expect(h.controller.pauseInstance({ instanceId: 'i-0000000f', paused: true })).rejects.toMatchObject({ code: 'InstanceNotFound', status: 404 });
    await expect(h.controller.pauseInstance({ instanceId: A, paused: true })).rejects.toMatchObject({ code: 'InstanceNotPausable', status: 409 });
    expect(h.store.read()).toEqual(before);
    expect(h.log).toEqual([]);
  });

  it('a power-cycled paused instance started again is frozen at once', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    await h.controller.pauseInstance({ instanceId: A, paused: true });
    h.driver.powerCycle();
    await h.controller.describe();
    const res = await h.controller.startInstance(A);
    expect(res.instance).toMatchObject({ hypervisorState: 'suspended', paused: true });
    expect(h.driver.domains.get(A)?.state).toBe('suspended');
  });
});
