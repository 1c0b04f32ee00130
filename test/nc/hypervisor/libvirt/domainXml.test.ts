import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildDomainXml, domainStateOf, guestSize, parseFerryMetadata, parseSizing, parseUuid,
} from '../../../../nc/hypervisor/libvirt/domainXml.js';
import { VIR } from '../../../../nc/hypervisor/libvirt/ffi.js';
import { buildVolumeDiskXml, parseDisks, parseVolumes, volumeTargetDev } from '../../../../nc/hypervisor/libvirt/volumeDiskXml.js';

const spec = { id: 'i-12345678', resources: { cores: 2, memoryMiB: 512, diskGiB: 10 }, imageId: 'emi-abc' };

describe('buildDomainXml', () => {
  it('builds a TCG firmware-only domain with Ferry metadata', () => {
    const xml = buildDomainXml({ spec, domainType: 'qemu', startedAt: 1700, emulator: '/usr/bin/qemu-system-x86_64', memoryMiB: 64, vcpus: 1 });
    expect(xml).toMatch(/^<domain type='qemu'>/);
    expect(xml).toContain('<name>i-12345678</name>');
    expect(xml).toContain("<memory unit='MiB'>64</memory>");
    expect(xml).toContain('<vcpu>1</vcpu>');
    expect(xml).not.toContain('<disk');
    expect(parseFerryMetadata(xml)).toEqual({ imageId: 'emi-abc', resources: spec.resources, startedAt: 1700 });
  });

  it('boots a kernel directly and logs the serial port to a file when asked', () => {
    const xml = buildDomainXml({
      spec, domainType: 'qemu', startedAt: 0, emulator: 'q', memoryMiB: 128, vcpus: 1,
      boot: { kernel: '/lab/guest/vmlinuz', initrd: '/lab/guest/initrd.img' }, serialLog: '/lab/i-1.serial',
    });
    expect(xml).toContain('<kernel>/lab/guest/vmlinuz</kernel>');
    expect(xml).toContain('<initrd>/lab/guest/initrd.img</initrd>');
    expect(xml).toContain('<cmdline>console=ttyS0 quiet</cmdline>');
    expect(xml).toContain("<serial type='file'><source path='/lab/i-1.serial' append='on'/><target port='0'/></serial>");
    const withDisk = buildDomainXml({ spec, domainType: 'qemu', startedAt: 0, emulator: 'q', memoryMiB: 64, vcpus: 1, disk: '/shared/disks/i-1.img' });
    expect(withDisk).toContain("<disk type='file' device='disk'><driver name='qemu' type='raw' cache='none'/><source file='/shared/disks/i-1.img'/><target dev='vda' bus='virtio'/></disk>");
    const plain = buildDomainXml({ spec, domainType: 'qemu', startedAt: 0, emulator: 'q', memoryMiB: 64, vcpus: 1 });
    expect(plain).not.toMatch(/<kernel>|<serial/);
  });

  it('holds the volumes it is given in its definition, after the root disk (issue 18: at boot, not hot-plugged)', () => {
    const vol = { volumeId: 'vol-0000000a', device: '/dev/sdf', path: '/shared/volumes/vol-0000000a.img' };
    const xml = buildDomainXml({
      spec, domainType: 'qemu', startedAt: 0, emulator: 'q', memoryMiB: 64, vcpus: 1, disk: '/shared/disks/i-1.img', volumeDisks: [buildVolumeDiskXml(vol)],
    });
    expect(parseVolumes(xml)).toEqual([vol]);
    expect(parseDisks(xml).map((d) => d.target)).toEqual(['vda', volumeTargetDev(vol.device)]);
  });

  it('uses kvm only when told to', () => {
    expect(buildDomainXml({ spec, domainType: 'kvm', startedAt: 0, emulator: 'q', memoryMiB: 64, vcpus: 1 })).toMatch(/^<domain type='kvm'>/);
  });

  it('escapes what it embeds, and the metadata round-trips any image id and sizes', () => {
    fc.assert(fc.property(
      fc.string(), fc.nat(64), fc.nat(1 << 20), fc.nat(4096), fc.nat(2 ** 45),
      (imageId, cores, memoryMiB, diskGiB, startedAt) => {
        const s = { id: 'i-1', imageId, resources: { cores, memoryMiB, diskGiB } };
        const xml = buildDomainXml({ spec: s, domainType: 'qemu', startedAt, emulator: 'q', memoryMiB: 64, vcpus: 1 });
        const raw = /image-id='([^']*)'/.exec(xml)?.[1] ?? '';
        expect(raw).not.toMatch(/[<>"]|&(?!(amp|lt|gt|apos|quot);)/);
        expect(parseFerryMetadata(xml)).toEqual({ imageId, resources: s.resources, startedAt });
      },
    ));
  });
});

describe('parsing libvirt\'s own XML', () => {
  // As libvirt 9 gives it back (virsh dumpxml): double quotes, re-indented, its own elements added.
  const fromLibvirt = `<domain type="qemu" id="3">
  <name>i-12345678</name>
  <uuid>0b5cf1a4-4a0e-4b8e-9a43-3b2f6d9c1e11</uuid>
  <metadata>
    <ferry:instance xmlns:ferry="urn:ferry:instance:1" image-id="emi-abc" cores="2" memory-mib="512" disk-gib="10" started-at="1700"/>
  </metadata>
  <memory unit="KiB">65536</memory>
  <currentMemory unit="KiB">65536</currentMemory>
  <vcpu placement="static">1</vcpu>
</domain>`;

  it('reads metadata, sizing and uuid', () => {
    expect(parseFerryMetadata(fromLibvirt)).toEqual({ imageId: 'emi-abc', resources: spec.resources, startedAt: 1700 });
    expect(parseSizing(fromLibvirt)).toEqual({ cores: 1, memoryMiB: 64, diskGiB: 0 });
    expect(parseUuid(fromLibvirt)).toBe('0b5cf1a4-4a0e-4b8e-9a43-3b2f6d9c1e11');
  });

  it.each([
    ['no metadata', '<domain><name>x</name></domain>'],
    ['another namespace', '<domain><metadata><a:instance xmlns:a="urn:other" image-id="e" cores="1" memory-mib="1" disk-gib="1" started-at="1"/></metadata></domain>'],
    ['a missing field', '<domain><metadata><f:instance xmlns:f="urn:ferry:instance:1" image-id="e" cores="1" memory-mib="1" started-at="1"/></metadata></domain>'],
    ['a negative size', '<domain><metadata><f:instance xmlns:f="urn:ferry:instance:1" image-id="e" cores="-1" memory-mib="1" disk-gib="1" started-at="1"/></metadata></domain>'],
  ])('treats a domain with %s as not Ferry\'s', (_what, xml) => {
    expect(parseFerryMetadata(xml)).toBeUndefined();
  });
});

describe('guestSize', () => {
  it.each([
    [{ cores: 4, memoryMiB: 2048, diskGiB: 1 }, { memoryMiB: 64, vcpus: 1 }, { memoryMiB: 64, vcpus: 1 }],
    [{ cores: 1, memoryMiB: 32, diskGiB: 1 }, { memoryMiB: 64 }, { memoryMiB: 32, vcpus: 1 }],
    [{ cores: 2, memoryMiB: 512, diskGiB: 1 }, {}, { memoryMiB: 512, vcpus: 2 }],
    [{ cores: 0, memoryMiB: 0, diskGiB: 0 }, {}, { memoryMiB: 16, vcpus: 1 }],
  ])('sizes %o under caps %o as %o', (r, caps, want) => {
    expect(guestSize(r, caps)).toEqual(want);
  });
});

describe('domainStateOf', () => {
  const S = VIR.DOMAIN_STATE;
  it.each([
    [S.RUNNING, 'running'], [S.BLOCKED, 'running'], [S.PAUSED, 'paused'], [S.PMSUSPENDED, 'paused'],
    [S.SHUTDOWN, 'shutoff'], [S.SHUTOFF, 'shutoff'], [S.NOSTATE, 'shutoff'], [S.CRASHED, 'crashed'],
  ])('virDomainState %i is %s', (v, want) => {
    expect(domainStateOf(v)).toBe(want);
  });
});
