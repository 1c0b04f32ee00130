/**
 * Shutdown and reboot (issue 18 part 5) in the simulated host, under a ManualClock, in memory: a
 * shut-down domain stays defined (its store record shutoff, its disk file kept), stops writing,
 * frees its resources and starts again with its disk counter going on; a reboot keeps it running
 * and writing at once; both are refused for a suspended, an incoming or an unknown domain.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../shared/clock.js';
import type { DomainSpec, HypervisorEvent } from '../../../nc/hypervisor/driver.js';
import { MemoryDiskIo } from '../../../nc/hypervisor/sim/diskIo.js';
import { decodeDiskCounter } from '../../../nc/hypervisor/sim/hostLedger.js';
import { openSimHvMemoryStore } from '../../../nc/hypervisor/sim/hostStore.js';
import { InProcessNetwork } from '../../../nc/hypervisor/sim/migrationChannel.js';
import { MIGRATION_DEFAULTS } from '../../../nc/hypervisor/sim/migrationModel.js';
import { SimHost, type SimHostConfig } from '../../../nc/hypervisor/sim/simHost.js';
import { codeOf } from '../../helpers/codeOf.js';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));
const ID = 'i-00000001';
const spec: DomainSpec = { id: ID, imageId: 'emi-00000001', resources: { cores: 1, memoryMiB: 256, diskGiB: 10 } };

async function setup(over: Partial<SimHostConfig> = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const disk = new MemoryDiskIo(clock);
  const store = await openSimHvMemoryStore();
  const config: SimHostConfig = {
    host: '127.0.80.31', capacity: { cores: 8, memoryMiB: 4096, diskGiB: 200 }, storageDir: '/shared',
    migration: MIGRATION_DEFAULTS, writeIntervalMs: 1000, timeScale: 1, ...over,
  };
  const h = await SimHost.open(config, { clock, store, disk, dialer: new InProcessNetwork() });
  h.start();
  const events: HypervisorEvent[] = [];
  h.onEvent((e) => events.push(e));
  const tick = async (): Promise<void> => { clock.advance(1000); await flush(); };
  return { h, store, disk, clock, events, tick };
}

describe('SimHost shutdown and reboot', () => {
  it('a shut-down domain stays defined, stops writing, frees its resources, and starts again with its counter going on', async () => {
    const { h, store, disk, clock, events, tick } = await setup();
    const info = await h.create(spec);
    await tick();
    await tick();
    const before = decodeDiskCounter((await disk.read(info.diskPath)) ?? undefined);
    expect(before).toBeGreaterThan(1);
    const off = await h.shutdown(ID, { force: false });
    expect(off.state).toBe('shutoff');
    expect(store.read().domains[ID]?.state).toBe('shutoff');
    expect(events.at(-1)).toEqual({ kind: 'stopped', id: ID, reason: 'shutdown' });
    expect(h.free().memoryMiB).toBe(4096);
    const stoppedAt = disk.stat(info.diskPath)?.mtimeMs;
    await tick();
    expect(disk.stat(info.diskPath)?.mtimeMs).toBe(stoppedAt);
    expect(clock.now()).toBeGreaterThan(stoppedAt ?? 0);
    // Idempotent.
    expect((await h.shutdown(ID, { force: true })).state).toBe('shutoff');
    expect((await h.create(spec)).state).toBe('running');
    expect(decodeDiskCounter((await disk.read(info.diskPath)) ?? undefined)).toBeGreaterThan(before);
  });

  it('a reboot keeps it running and writing: its counter goes on at once', async () => {
    const { h, disk, tick } = await setup();
    const info = await h.create(spec);
    await tick();
    const before = decodeDiskCounter((await disk.read(info.diskPath)) ?? undefined);
    expect((await h.reboot(ID)).state).toBe('running');
    expect(decodeDiskCounter((await disk.read(info.diskPath)) ?? undefined)).toBe(before + 1);
  });

  it('refuses a suspended, a shut-off (reboot) and an unknown domain, changing nothing', async () => {
    const { h, store } = await setup();
    await h.create(spec);
    await h.pause(ID);
    expect(await codeOf(h.shutdown(ID, { force: false }))).toBe('DomainStateConflict');
    expect(await codeOf(h.reboot(ID))).toBe('DomainStateConflict');
    expect(store.read().domains[ID]?.state).toBe('suspended');
    await h.resume(ID);
    await h.shutdown(ID, { force: true });
    expect(await codeOf(h.reboot(ID))).toBe('DomainStateConflict');
    expect(await codeOf(h.shutdown('i-0000ffff', { force: false }))).toBe('DomainNotFound');
    expect(await codeOf(h.reboot('i-0000ffff'))).toBe('DomainNotFound');
  });

  it('define (a cold move) records the domain shut off without starting it: no disk write, nothing held; create starts it', async () => {
    const { h, store, disk, events } = await setup();
    const info = await h.define(spec);
    expect(info.state).toBe('shutoff');
    expect(store.read().domains[ID]?.state).toBe('shutoff');
    expect(await disk.read(info.diskPath)).toBeUndefined();
    expect(h.free().memoryMiB).toBe(4096);
    expect(events).toEqual([]);
    expect((await h.define(spec)).state).toBe('shutoff');
    expect(await codeOf(h.define({ ...spec, imageId: 'emi-00000002' }))).toBe('DomainExists');
    expect((await h.create(spec)).state).toBe('running');
    expect(events).toEqual([{ kind: 'started', id: ID }]);
  });
});

describe('SimHost create and define with volumes (issue 18)', () => {
  const vol = (k: number, device = `/dev/vd${String.fromCharCode(97 + k)}`) => ({ volumeId: `vol-0000000${k}`, device, path: `/shared/volumes/vol-0000000${k}.img` });

  it('a new domain holds the volumes of its spec from the start, persisted; the spec itself is stored without them', async () => {
    const { h, store } = await setup();
    const info = await h.create({ ...spec, volumes: [vol(1)] });
    expect(info.volumes).toEqual([vol(1)]);
    expect(store.read().domains[ID]).toMatchObject({ state: 'running', volumes: [vol(1)] });
    expect(store.read().domains[ID]?.spec).toEqual(spec);
    // The same spec again (a retried run) answers it as it is.
    expect((await h.create({ ...spec, volumes: [vol(1)] })).volumes).toEqual([vol(1)]);
  });

  it('define holds them shut off; a shut-off domain started with another volume in its spec has both', async () => {
    const { h, store } = await setup();
    expect(await h.define({ ...spec, volumes: [vol(1)] })).toMatchObject({ state: 'shutoff', volumes: [vol(1)] });
    expect(store.read().domains[ID]?.volumes).toEqual([vol(1)]);
    const started = await h.create({ ...spec, volumes: [vol(2)] });
    expect(started).toMatchObject({ state: 'running', volumes: [vol(1), vol(2)] });
  });

  it('a volume another domain holds, or a device the domain uses for another volume, is VolumeConflict and nothing is made', async () => {
    const { h, store } = await setup();
    await h.create({ ...spec, volumes: [vol(1)] });
    const other = { ...spec, id: 'i-00000002' };
    expect(await codeOf(h.create({ ...other, volumes: [vol(1)] }))).toBe('VolumeConflict');
    expect(await codeOf(h.define({ ...other, volumes: [vol(1)] }))).toBe('VolumeConflict');
    expect(store.read().domains['i-00000002']).toBeUndefined();
    await h.shutdown(ID, { force: true });
    expect(await codeOf(h.create({ ...spec, volumes: [vol(2, vol(1).device)] }))).toBe('VolumeConflict');
    expect(store.read().domains[ID]).toMatchObject({ state: 'shutoff', volumes: [vol(1)] });
  });
});

describe('SimHost reboot and reset (issue 18: the hard-reboot fallback)', () => {
  it('a guest that honours ACPI reboots when asked and says so (rebooted); a reset reboots it too', async () => {
    const { h, events } = await setup();
    await h.create(spec);
    await h.reboot(ID);
    expect(events.filter((e) => e.kind === 'rebooted')).toEqual([{ kind: 'rebooted', id: ID }]);
    await h.reset(ID);
    expect(events.filter((e) => e.kind === 'rebooted')).toHaveLength(2);
  });

  it('with --guest-ignores-acpi a reboot request changes nothing (no event, no write); reset still reboots it', async () => {
    const { h, disk, events } = await setup({ guestIgnoresAcpi: true });
    const info = await h.create(spec);
    const before = await disk.read(info.diskPath);
    expect((await h.reboot(ID)).state).toBe('running');
    expect(events.filter((e) => e.kind === 'rebooted')).toEqual([]);
    expect(await disk.read(info.diskPath)).toEqual(before);
    expect((await h.reset(ID)).state).toBe('running');
    expect(events.filter((e) => e.kind === 'rebooted')).toEqual([{ kind: 'rebooted', id: ID }]);
    expect(decodeDiskCounter((await disk.read(info.diskPath)) ?? undefined)).toBeGreaterThan(decodeDiskCounter(before ?? undefined));
  });

  it('reset is refused for a shut-off or unknown domain', async () => {
    const { h } = await setup();
    await h.create(spec);
    await h.shutdown(ID, { force: true });
    expect(await codeOf(h.reset(ID))).toBe('DomainStateConflict');
    expect(await codeOf(h.reset('i-0000ffff'))).toBe('DomainNotFound');
  });
});
