/** SimHost.changes (a CountingMap under it): moves with every domain change, never with a read. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../shared/clock.js';
import { CountingMap } from '../../../nc/hypervisor/sim/countingMap.js';
import { MemoryDiskIo } from '../../../nc/hypervisor/sim/diskIo.js';
import { openSimHvMemoryStore } from '../../../nc/hypervisor/sim/hostStore.js';
import { InProcessNetwork } from '../../../nc/hypervisor/sim/migrationChannel.js';
import { MIGRATION_DEFAULTS } from '../../../nc/hypervisor/sim/migrationModel.js';
import { SimHost } from '../../../nc/hypervisor/sim/simHost.js';

describe('CountingMap', () => {
  it('counts set, delete and clear; reads count nothing', () => {
    const m = new CountingMap<string, number>();
    m.set('a', 1).set('b', 2);
    m.get('a');
    expect([...m.values()]).toEqual([1, 2]);
    expect(m.changes).toBe(2);
    m.delete('a');
    m.clear();
    expect(m.changes).toBe(4);
    expect(m.size).toBe(0);
  });
});

describe('SimHost.changes', () => {
  it('moves when a domain is created, prepared or destroyed, not when the host is listed', async () => {
    const clock = new ManualClock(0);
    const h = await SimHost.open(
      { host: '127.0.9.31', capacity: { cores: 4, memoryMiB: 4096, diskGiB: 100 }, storageDir: '/shared', migration: MIGRATION_DEFAULTS, writeIntervalMs: 1000, timeScale: 1 },
      { clock, store: await openSimHvMemoryStore(), disk: new MemoryDiskIo(clock), dialer: new InProcessNetwork() },
    );
    const spec = (id: string) => ({ id, imageId: 'emi-00000001', resources: { cores: 1, memoryMiB: 256, diskGiB: 10 } });
    const seen = [h.changes];
    await h.create(spec('i-00000001'));
    seen.push(h.changes);
    h.list();
    h.get('i-00000001');
    seen.push(h.changes);
    await h.prepareIncoming(spec('i-00000002'), 'm-1');
    seen.push(h.changes);
    await h.destroy('i-00000001');
    seen.push(h.changes);
    expect(seen[1]).toBeGreaterThan(seen[0]!);
    expect(seen[2]).toBe(seen[1]);
    expect(seen[3]).toBeGreaterThan(seen[2]!);
    expect(seen[4]).toBeGreaterThan(seen[3]!);
  });
});
