/**
 * RebootInstances' hard-reboot fallback (issue 18 part 5): the decision as a table, and the NC's
 * runner over the FakeDriver and the injected clock: a guest that honours the ACPI request is left
 * alone; one that ignores it is reset once the bound has passed, never before; one stopped
 * meanwhile is not reset; each outcome recorded on the instance (lastReboot).
 */
import { describe, expect, it } from 'vitest';
import { rebootFallbackStep, type RebootFallbackStep } from '../../nc/rebootFallback.js';
import { DEFAULT_REBOOT_TIMEOUT_MS } from '../../nc/rebootWatcher.js';
import { harness, runRequest, settle } from './fixtures.js';

const A = 'i-0000000a';

describe('rebootFallbackStep', () => {
  const w = { instanceId: A, askedAt: 1000, deadline: 1000 + DEFAULT_REBOOT_TIMEOUT_MS };
  it.each<[string, boolean, boolean, number, RebootFallbackStep]>([
    ['the guest rebooted before the deadline', true, true, 5000, 'rebooted'],
    ['the guest rebooted, then was stopped', true, false, w.deadline, 'rebooted'],
    ['stopped or moving meanwhile, before the deadline', false, false, 5000, 'moot'],
    ['stopped or moving meanwhile, at the deadline', false, false, w.deadline, 'moot'],
    ['still running, nothing yet, before the deadline', false, true, w.deadline - 1, 'wait'],
    ['still running, nothing at the deadline', false, true, w.deadline, 'reset'],
    ['still running, nothing long after', false, true, w.deadline + 60_000, 'reset'],
  ])('%s', (_n, rebooted, stillRunning, now, step) => {
    expect(rebootFallbackStep(w, { rebooted, stillRunning }, now)).toBe(step);
  });
});

describe('the NC\'s reboot fallback', () => {
  it('a guest that honours the request is not reset; its reboot is recorded as the guest\'s', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    await h.controller.rebootInstance(A);
    await settle();
    expect(h.store.read().instances[A]?.lastReboot).toEqual({ at: h.clock.now(), how: 'guest' });
    h.clock.advance(DEFAULT_REBOOT_TIMEOUT_MS * 2);
    await settle();
    expect(h.driver.calls.filter((c) => c.startsWith('reset'))).toEqual([]);
  });

  it('a guest that ignores it is reset once the bound has passed, not a moment before, and it says so', async () => {
    const h = await harness();
    h.driver.guestIgnoresAcpi = true;
    await h.controller.run(runRequest(A));
    const askedAt = h.clock.now();
    await h.controller.rebootInstance(A);
    h.clock.advance(DEFAULT_REBOOT_TIMEOUT_MS - 1);
    await settle();
    expect(h.driver.calls.filter((c) => c.startsWith('reset'))).toEqual([]);
    expect(h.store.read().instances[A]?.lastReboot).toBeUndefined();
    h.clock.advance(1);
    await settle();
    expect(h.driver.calls.filter((c) => c.startsWith('reset'))).toEqual([`reset ${A}`]);
    expect(h.store.read().instances[A]?.lastReboot).toEqual({ at: askedAt, how: 'reset' });
    expect((await h.controller.describe()).instances.find((i) => i.instanceId === A)).toMatchObject({ state: 'running', lastReboot: { how: 'reset' } });
  });

  it('a second request restarts the wait; an instance stopped by its user meanwhile is not reset', async () => {
    const h = await harness();
    h.driver.guestIgnoresAcpi = true;
    await h.controller.run(runRequest(A));
    await h.controller.rebootInstance(A);
    h.clock.advance(DEFAULT_REBOOT_TIMEOUT_MS / 2);
    await h.controller.rebootInstance(A);
    h.clock.advance(DEFAULT_REBOOT_TIMEOUT_MS / 2);
    await settle();
    expect(h.driver.calls.filter((c) => c.startsWith('reset'))).toEqual([]);
    await h.controller.stopInstance({ instanceId: A, force: false });
    h.clock.advance(DEFAULT_REBOOT_TIMEOUT_MS);
    await settle();
    expect(h.driver.calls.filter((c) => c.startsWith('reset'))).toEqual([]);
    expect(h.store.read().instances[A]?.lastReboot).toBeUndefined();
  });
});
