/** Invariant 8 (issue 18): no instance lands on a quarantined node; each case must fire when broken. */
import { describe, expect, it } from 'vitest';
import { NC_STORE_OPTIONS, type NcSnapshot } from '../../nc/ncStore.js';
import { checkQuarantineStep, type QuarantineMemory } from '../../sim/quarantineInvariants.js';
import { generateSchedule } from '../../sim/schedule.js';
import { settingsFor } from '../../sim/runSeed.js';
import type { HostTruth } from '../../sim/truth.js';

const SMALL = { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 };
const [A, B] = ['i-0000000a', 'i-0000000b'];

function nc(ids: string[], quarantineSince?: number, incoming: string[] = []): NcSnapshot {
  const s = NC_STORE_OPTIONS.initial();
  for (const id of ids) {
    s.instances[id] = { instanceId: id, reservationId: 'r-00000001', imageId: 'emi-1', ownerId: 'o', vmType: SMALL, launchTime: 0, phase: 'running', since: 0, migrationState: 'none' };
  }
  for (const id of incoming) {
    s.incoming[id] = { instanceId: id, migrationId: 'mig-0000000a', source: 'h2', reservationId: 'r-00000001', imageId: 'emi-1', ownerId: 'o', vmType: SMALL, launchTime: 0, state: 'preparing', since: 0 };
  }
  return { ...s, ...(quarantineSince !== undefined ? { nodeState: 'disabled' as const, quarantine: { since: quarantineSince, reason: '' } } : {}) };
}

const truth = (snap: NcSnapshot): HostTruth[] => [{ host: 'h1', poweredOn: true, domains: [], nc: snap }];

describe('checkQuarantineStep', () => {
  it('remembers what a quarantined node held and fires on anything new, placed or incoming', () => {
    const memory: QuarantineMemory = new Map();
    expect(checkQuarantineStep(truth(nc([A], 5)), memory)).toEqual([]);
    expect(checkQuarantineStep(truth(nc([A], 5)), memory)).toEqual([]);
    expect(checkQuarantineStep(truth(nc([A, B], 5)), memory).map((v) => v.invariant)).toEqual(['8 quarantine']);
    expect(checkQuarantineStep(truth(nc([A], 5, [B])), memory).map((v) => v.detail)).toEqual(['h1 is quarantined but holds incoming i-0000000b']);
    // An instance that leaves (named and migrated away) is no violation.
    expect(checkQuarantineStep(truth(nc([], 5)), memory)).toEqual([]);
  });

  it('forgets a lifted quarantine; a new one starts from what the node holds then', () => {
    const memory: QuarantineMemory = new Map();
    checkQuarantineStep(truth(nc([A], 5)), memory);
    expect(checkQuarantineStep(truth(nc([A, B])), memory)).toEqual([]);
    expect(memory.size).toBe(0);
    expect(checkQuarantineStep(truth(nc([A, B], 9)), memory)).toEqual([]);
  });

  it('quarantines are drawn in some seeds, each lifted later, with a drain of the node while it holds', () => {
    const drawn = [1, 2, 3, 4, 5, 6, 7, 8].map((seed) => {
      const events = generateSchedule(seed, settingsFor(seed)).events;
      const on = events.filter((e) => e.kind === 'quarantine' && e.quarantined);
      for (const q of on) {
        if (q.kind !== 'quarantine') continue;
        expect(events.some((e) => e.kind === 'quarantine' && !e.quarantined && e.host === q.host && e.at >= q.at)).toBe(true);
        expect(events.some((e) => e.kind === 'drain' && e.host === q.host && e.at >= q.at)).toBe(true);
      }
      return on.length;
    });
    expect(drawn.some((n) => n > 0)).toBe(true);
    expect(drawn.some((n) => n === 0)).toBe(true);
  });
});
