/**
 * The scale mode (`npm run sim -- --hosts N`): one cloud of 200 NCs behind one CC holds every
 * invariant through its chaos and heal phases. Speed is measured by the sweep, not asserted here.
 */
import { describe, expect, it } from 'vitest';
import { runSeed } from '../../sim/runSeed.js';
import { scaleSettings } from '../../sim/scale.js';
import { failures } from './sweep.js';

describe('whole-cloud simulation at scale', () => {
  it('200 hosts, one seed: every invariant holds and the workload reached the whole cloud', async () => {
    const settings = scaleSettings(3, 200);
    expect(new Set(settings.hosts).size).toBe(200);
    const r = await runSeed(3, { settings });
    expect(failures(r)).toEqual([]);
    // The workload grew with the cloud: about one VM per host, drains across it, migrations that completed.
    expect(r.events.filter((e) => e.kind === 'run').length).toBeGreaterThan(50);
    expect(r.events.filter((e) => e.kind === 'drain').length).toBeGreaterThan(5);
    expect(r.coverage['item completed'] ?? 0).toBeGreaterThan(3);
  }, 300_000);
});
