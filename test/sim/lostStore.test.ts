/**
 * Issue 16 item 11 in the whole-cloud simulator: `loseNcStore` deletes a crashed NC's nc.json (its
 * identity file stays). Seed 16 loses the store of a node that runs three instances: the invariants
 * (7: it comes back disabled; 1 and 6 once settled: its VMs have live records again and the CC lists
 * them there) must hold. Without the lost-store rule the same seed fails 7, or 6 and 1 without the
 * re-adoption (checked by hand when the rule was written).
 */
import { describe, expect, it } from 'vitest';
import { runSeed, settingsFor } from '../../sim/runSeed.js';
import { generateSchedule } from '../../sim/schedule.js';
import { failures } from './sweep.js';

describe('a lost nc.json in the simulator', () => {
  it('seed 16 loses the store of a node with instances; the node comes back disabled, re-adopts them, and every invariant holds', async () => {
    const r = await runSeed(16, { collectTrace: true });
    expect(r.trace.some((l) => l.endsWith('lost its nc.json'))).toBe(true);
    expect(r.trace.some((l) => l.includes('finds nc.json lost: starts disabled'))).toBe(true);
    expect(failures(r)).toEqual([]);
  });

  it('is drawn in some seeds, once, with the NC restarted after it', () => {
    const counts = [1, 2, 3, 4, 15, 16].map((seed) => {
      const events = generateSchedule(seed, settingsFor(seed)).events;
      const lost = events.filter((e) => e.kind === 'loseNcStore');
      for (const l of lost) expect(events.some((e) => e.kind === 'restartNc' && e.at >= l.at && 'host' in l && e.host === l.host)).toBe(true);
      return lost.length;
    });
    expect(counts).toEqual([0, 1, 0, 0, 1, 1]);
  });
});
