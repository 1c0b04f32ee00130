/**
 * The simulated host's migration link (issue 19's drain bench): outgoing streams share the host's
 * `nicMbps` (a stream starting while k run gets min(bandwidth, nic / (k + 1))), and each guest may
 * dirty its memory at its own rate (`dirtyRateOf`). Under a ManualClock, in memory.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../shared/clock.js';
import type { DomainSpec, MigrationStats } from '../../../nc/hypervisor/driver.js';
import { MemoryDiskIo } from '../../../nc/hypervisor/sim/diskIo.js';
import { openSimHvMemoryStore } from '../../../nc/hypervisor/sim/hostStore.js';
import { InProcessNetwork } from '../../../nc/hypervisor/sim/migrationChannel.js';
import { MIGRATION_DEFAULTS, planMigration } from '../../../nc/hypervisor/sim/migrationModel.js';
import { SimHost, type SimHostConfig } from '../../../nc/hypervisor/sim/simHost.js';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));
const spec = (id: string, memoryMiB = 512): DomainSpec => ({ id, imageId: 'emi-00000001', resources: { cores: 1, memoryMiB, diskGiB: 10 } });

async function pair(over: Partial<SimHostConfig>) {
  const clock = new ManualClock(1_700_000_000_000);
  const disk = new MemoryDiskIo(clock);
  const net = new InProcessNetwork();
  const open = async (name: string, o: Partial<SimHostConfig>) => {
    const config: SimHostConfig = {
      host: name, capacity: { cores: 16, memoryMiB: 16384, diskGiB: 400 }, storageDir: '/shared',
      migration: MIGRATION_DEFAULTS, writeIntervalMs: 1000, timeScale: 1, ...o,
    };
    const h = await SimHost.open(config, { clock, store: await openSimHvMemoryStore(), disk, dialer: net });
    net.register(`sim://${name}`, h);
    h.start();
    return h;
  };
  return { clock, a: await open('127.0.76.31', over), b: await open('127.0.76.32', {}) };
}

/** Starts each guest's migration to b at once (in order) and runs the clock until all have ended. */
async function migrateAll(w: Awaited<ReturnType<typeof pair>>, specs: readonly DomainSpec[]): Promise<MigrationStats[]> {
  for (const s of specs) {
    await w.a.create(s);
    await w.b.prepareIncoming(s, `m-${s.id}`);
  }
  const all = Promise.all(specs.map((s) => w.a.migrateOut(s.id, { migrationId: `m-${s.id}`, destinationUri: 'sim://127.0.76.32' })));
  let done = false;
  all.then(() => (done = true), () => (done = true));
  for (let i = 0; i < 1_000_000 && !done; i++) {
    await flush();
    if (!done) w.clock.advance(10);
  }
  return all;
}

const guests = ['i-00000001', 'i-00000002', 'i-00000003'].map((id) => spec(id));

describe('SimHost migration link', () => {
  it('without nicMbps every stream runs at the full bandwidth', async () => {
    const stats = await migrateAll(await pair({}), guests);
    const full = planMigration({ ...MIGRATION_DEFAULTS, memoryMiB: 512 });
    for (const s of stats) expect(s.bytesTransferred).toBe(full.bytesTransferred);
    expect(new Set(stats.map((s) => s.iterations))).toEqual(new Set([full.iterations.length]));
  });

  it('with nicMbps the third concurrent stream shares the link and sends more rounds', async () => {
    const stats = await migrateAll(await pair({ nicMbps: 2 * MIGRATION_DEFAULTS.bandwidthMbps }), guests);
    const full = planMigration({ ...MIGRATION_DEFAULTS, memoryMiB: 512 });
    const third = planMigration({ ...MIGRATION_DEFAULTS, memoryMiB: 512, bandwidthMbps: (2 * MIGRATION_DEFAULTS.bandwidthMbps) / 3 });
    expect(stats.map((s) => s.bytesTransferred)).toEqual([full.bytesTransferred, full.bytesTransferred, third.bytesTransferred]);
    expect(third.bytesTransferred).toBeGreaterThan(full.bytesTransferred);
    expect(stats[2]!.elapsedMs).toBeGreaterThan(stats[0]!.elapsedMs);
  });

  it('dirtyRateOf sets each guest\'s dirty rate; a guest it does not name keeps the host\'s', async () => {
    const quiet = spec('i-0000000a', 1024);
    const busy = spec('i-0000000b', 512);
    const stats = await migrateAll(await pair({ dirtyRateOf: (s) => (s.id === quiet.id ? 0 : undefined) }), [quiet, busy]);
    expect(stats[0]!.bytesTransferred).toBe(1024 * 1024 * 1024);
    expect(stats[0]!.iterations).toBe(planMigration({ ...MIGRATION_DEFAULTS, memoryMiB: 1024, dirtyRateMiBps: 0 }).iterations.length);
    expect(stats[1]!.bytesTransferred).toBe(planMigration({ ...MIGRATION_DEFAULTS, memoryMiB: 512 }).bytesTransferred);
  });
});
