/**
 * A terminate that finds no such instance fences the id: a run request for it that arrives later
 * (overtaken on the network by the terminate the CC sent to settle an unanswered run) is refused,
 * so the CC's re-placement elsewhere cannot end with the VM running on two nodes. Found by the
 * simulator (sim/regressionSeeds.ts, seed 2).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOMBSTONES } from '../../nc/termination.js';
import { harness, runRequest } from './fixtures.js';

const A = 'i-0000000a';

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'no error';
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

describe('run after a terminate that found nothing', () => {
  it('is refused and creates nothing; the fence is in the store, so it survives an NC restart', async () => {
    const h = await harness();
    expect(await codeOf(h.controller.terminate(A))).toBe('InstanceNotFound');
    expect(h.store.read().fenced?.[A]).toBeDefined();
    expect(await codeOf(h.controller.run(runRequest(A)))).toBe('InstanceExists');
    expect(h.driver.domains.has(A)).toBe(false);
    expect(h.store.read().instances[A]).toBeUndefined();
  });

  it('lasts as long as a tombstone, then the id may be used again', async () => {
    const h = await harness();
    await codeOf(h.controller.terminate(A));
    h.clock.advance(DEFAULT_TOMBSTONES.ttlMs);
    await h.controller.describe(); // any write prunes; describe writes when something expired
    await codeOf(h.controller.terminate('i-0000000b'));
    expect(h.store.read().fenced?.[A]).toBeUndefined();
    expect((await h.controller.run(runRequest(A))).instance.state).toBe('running');
  });

  it('does not touch runs of other ids', async () => {
    const h = await harness();
    await codeOf(h.controller.terminate(A));
    expect((await h.controller.run(runRequest('i-0000000b'))).instance.state).toBe('running');
  });
});
