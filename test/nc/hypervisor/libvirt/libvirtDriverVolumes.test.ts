/** The libvirt driver's volume attach and detach against the hand-written fake libvirtd (fakeLibvirt.ts). */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../shared/clock.js';
import type { DomainSpec, VolumeAttachmentSpec } from '../../../../nc/hypervisor/driver.js';
import { VIR } from '../../../../nc/hypervisor/libvirt/ffi.js';
import { LibvirtDriver } from '../../../../nc/hypervisor/libvirt/libvirtDriver.js';
import { FakeLibvirtd } from './fakeLibvirt.js';
import { codeOf } from '../../../helpers/codeOf.js';

const spec = (id: string): DomainSpec => ({ id, resources: { cores: 1, memoryMiB: 256, diskGiB: 5 }, imageId: 'emi-1' });
const V: VolumeAttachmentSpec = { volumeId: 'vol-0000000a', device: '/dev/sdf', path: '/srv/volumes/vol-0000000a.img' };
const W: VolumeAttachmentSpec = { volumeId: 'vol-0000000b', device: '/dev/vdg', path: '/srv/volumes/vol-0000000b.img' };

function setup(): { fake: FakeLibvirtd; driver: LibvirtDriver; clock: ManualClock; fresh: () => LibvirtDriver } {
  const fake = new FakeLibvirtd();
  const clock = new ManualClock(1_000);
  const fresh = (): LibvirtDriver => new LibvirtDriver({
    uri: 'qemu+tcp://127.0.0.1:16511/system', host: '127.0.0.1', domainType: 'qemu', open: fake.open, clock, volumeDetachTimeoutMs: 1_000,
  });
  return { fake, driver: fresh(), clock, fresh };
}

const stop = (fake: FakeLibvirtd, id: string): void => {
  const d = fake.domains.get(id);
  if (d) d.state = VIR.DOMAIN_STATE.SHUTOFF;
};

describe('LibvirtDriver volumes', () => {
  it('attaches to a running domain live and in its definition, idempotently, and a new driver reads it back', async () => {
    const { fake, driver, fresh } = setup();
    await driver.create(spec('i-1'));
    expect((await driver.attachVolume('i-1', V)).volumes).toEqual([V]);
    const d = fake.domains.get('i-1');
    expect(d?.xml).toContain("<target dev='vdf' bus='virtio'/>");
    expect(d?.config).toContain('<serial>vol-0000000a</serial>');
    const before = d?.xml;
    expect((await driver.attachVolume('i-1', V)).volumes).toEqual([V]);
    expect(d?.xml).toBe(before); // nothing attached twice
    expect((await fresh().list()).map((x) => x.volumes)).toEqual([[V]]);
  });

  it.each<[string, string, VolumeAttachmentSpec]>([
    ['another volume on a taken device', 'i-1', { ...W, device: '/dev/xvdf' }],
    ['the volume on another device', 'i-1', { ...V, device: '/dev/vdh' }],
    ['the volume from another file', 'i-1', { ...V, path: '/srv/other.img' }],
    ['the volume on another domain', 'i-2', V],
  ])('refuses %s with VolumeConflict and changes nothing', async (_name, id, v) => {
    const { fake, driver } = setup();
    await driver.create(spec('i-1'));
    await driver.create(spec('i-2'));
    await driver.attachVolume('i-1', V);
    const xmls = [...fake.domains.values()].map((d) => [d.xml, d.config]);
    expect(await codeOf(driver.attachVolume(id, v))).toBe('VolumeConflict');
    expect([...fake.domains.values()].map((d) => [d.xml, d.config])).toEqual(xmls);
  });

  it('answers DomainNotFound for an unknown domain', async () => {
    const { driver } = setup();
    expect(await codeOf(driver.attachVolume('i-9', V))).toBe('DomainNotFound');
    expect(await codeOf(driver.detachVolume('i-9', V.volumeId))).toBe('DomainNotFound');
  });

  it('attaches to and detaches from a shut-off domain\'s definition only', async () => {
    const { fake, driver } = setup();
    await driver.create(spec('i-1'));
    stop(fake, 'i-1');
    expect(await driver.attachVolume('i-1', V)).toMatchObject({ state: 'shutoff', volumes: [V] });
    expect(fake.domains.get('i-1')?.config).toContain('vol-0000000a');
    expect(await driver.create(spec('i-1'))).toMatchObject({ state: 'running', volumes: [V] }); // boots with it
    stop(fake, 'i-1');
    expect((await driver.detachVolume('i-1', V.volumeId)).volumes).toEqual([]);
    expect(fake.domains.get('i-1')?.config).not.toContain('vol-0000000a');
  });

  it('detaches live then from the definition; a volume not attached is not an error', async () => {
    const { fake, driver } = setup();
    await driver.create(spec('i-1'));
    await driver.attachVolume('i-1', V);
    await driver.attachVolume('i-1', W);
    expect((await driver.detachVolume('i-1', V.volumeId)).volumes).toEqual([W]);
    const d = fake.domains.get('i-1');
    expect(d?.xml).not.toContain('vol-0000000a');
    expect(d?.config).not.toContain('vol-0000000a');
    expect(d?.config).toContain('vol-0000000b');
    expect((await driver.detachVolume('i-1', V.volumeId)).volumes).toEqual([W]);
  });

  it('a guest that never releases the disk: VolumeDetachTimeout at the deadline, still attached live and in the definition', async () => {
    const { fake, driver, clock } = setup();
    await driver.create(spec('i-1'));
    await driver.attachVolume('i-1', V);
    fake.ignoreUnplug = true;
    const detach = codeOf(driver.detachVolume('i-1', V.volumeId));
    let code: string | undefined;
    void detach.then((c) => { code = c; });
    for (let i = 0; i < 100 && code === undefined; i++) {
      await new Promise((r) => setImmediate(r));
      clock.advance(100);
    }
    expect(code).toBe('VolumeDetachTimeout');
    expect(clock.now()).toBeGreaterThanOrEqual(2_000);
    expect((await driver.info('i-1'))?.volumes).toEqual([V]);
    expect(fake.domains.get('i-1')?.config).toContain('vol-0000000a');
    // Once the guest lets go, a retry finishes the job.
    fake.ignoreUnplug = false;
    expect((await driver.detachVolume('i-1', V.volumeId)).volumes).toEqual([]);
  });
});

describe('libvirt driver: a guest with volumes migrates', () => {
  const DEST = 'qemu+tcp://127.0.0.2:16512/system';

  it('asks libvirt for an unsafe-checked migration only when the guest holds volumes (they are on shared storage) and copies no storage', async () => {
    const { fake, driver } = setup();
    await driver.create(spec('i-2'));
    await driver.create(spec('i-3'));
    await driver.attachVolume('i-3', V);
    await driver.migrateOut('i-2', { migrationId: 'm-2', destinationUri: DEST });
    await driver.migrateOut('i-3', { migrationId: 'm-3', destinationUri: DEST });
    const m = VIR.MIGRATE;
    expect(fake.migrations.map((x) => [x.name, x.flags])).toEqual([
      ['i-2', m.LIVE | m.PEER2PEER | m.PERSIST_DEST],
      ['i-3', m.LIVE | m.PEER2PEER | m.PERSIST_DEST | m.UNSAFE],
    ]);
  });
});
