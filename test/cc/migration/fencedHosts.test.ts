/**
 * Hosts host HA fences (ccSetFencedHosts, sent by the CLC every HA pass) are never a migration
 * destination or a placement, whatever their NC says; a CC that has not heard the list since it
 * started holds new items (queued, not failed) — simulator seed 730: a queued item was prepared on a
 * fenced host whose NC came back enabled right after a CC restart.
 */
import { describe, expect, it } from 'vitest';
import { CTX, runReq } from '../harness.js';
import { D1, D2, D3, S } from './builders.js';
import { liveOn, sourceWithInstances } from './migrationHarness.js';

describe('fenced hosts in the CC', () => {
  it('a CC that awaits the fenced list starts nothing until it arrives, then avoids the fenced host', async () => {
    const h = await sourceWithInstances(3, { awaitFencedHosts: true });
    const r = await h.migrate({ sourceHost: S, destinations: [D1, D2, D3] });
    await h.settle();
    expect(h.states(r.migrationId)).toEqual(['queued', 'queued', 'queued']);
    expect(h.fake.callsOf('migrate').filter((c) => c.action === 'prepare-destination')).toEqual([]);
    const told = await h.ops.ccSetFencedHosts({ hosts: [D1] }, CTX);
    expect(told.hosts).toEqual([D1]);
    await h.settle();
    expect(h.states(r.migrationId)).toEqual(['completed', 'completed', 'completed']);
    expect(liveOn(h, D1)).toEqual([]);
    expect(h.fake.callsOf('migrate').some((c) => c.host === D1)).toBe(false);
  });

  it('a drain naming only fenced hosts places nothing there', async () => {
    const h = await sourceWithInstances(2);
    await h.ops.ccSetFencedHosts({ hosts: [D1, D2, D3] }, CTX);
    await expect(h.migrate({ sourceHost: S, destinations: [D1] })).rejects.toThrow();
    expect(h.fake.callsOf('migrate').some((c) => c.host === D1)).toBe(false);
  });

  it('RunInstances never places on a fenced host', async () => {
    const h = await sourceWithInstances(0);
    await h.ops.ccSetFencedHosts({ hosts: [S, D1, D2] }, CTX);
    const out = await h.ops.ccRunInstances(runReq(['i-0000aa01', 'i-0000aa02']), CTX);
    expect(out.instances.map((i) => i.host)).toEqual([D3, D3]);
  });

  it('an empty list lifts the avoidance', async () => {
    const h = await sourceWithInstances(1);
    await h.ops.ccSetFencedHosts({ hosts: [D2, D3] }, CTX);
    await h.ops.ccSetFencedHosts({ hosts: [] }, CTX);
    expect([...h.keeper.fencedHosts()]).toEqual([]);
    const r = await h.migrate({ sourceHost: S, destinations: [D2] });
    await h.settle();
    expect(h.states(r.migrationId)).toEqual(['completed']);
    expect(liveOn(h, D2)).toHaveLength(1);
  });
});
