/** Volumes as libvirt disks: the disk XML, the volumes read back from a domain's XML, and conflicts (table-driven). */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildDomainXml } from '../../../../nc/hypervisor/libvirt/domainXml.js';
import {
  buildVolumeDiskXml, parseDisks, parseVolumes, volumeAttachConflict, volumeTargetDev,
} from '../../../../nc/hypervisor/libvirt/volumeDiskXml.js';
import type { VolumeAttachmentSpec } from '../../../../shared/protocol/volumes.js';

const vol = (volumeId: string, device: string, path = `/srv/volumes/${volumeId}.img`): VolumeAttachmentSpec => ({ volumeId, device, path });
const A = vol('vol-0000000a', '/dev/vdb');
const B = vol('vol-0000000b', '/dev/sdf');

/** A domain XML as libvirt prints a running guest's: double-quoted or single-quoted attributes, extra elements. */
const liveXml = `<domain type='qemu' id='3'>
  <name>i-1</name>
  <devices>
    <disk type="file" device="disk">
      <driver name="qemu" type="raw" cache="none"/>
      <source file="/srv/disks/i-1.img" index="2"/>
      <backingStore/>
      <target dev="vda" bus="virtio"/>
      <alias name="virtio-disk0"/>
    </disk>
    <disk type='file' device='disk'>
      <driver name='qemu' type='raw' cache='none'/>
      <source file='/srv/volumes/vol-0123456789abcdef0.img' index='1'/>
      <backingStore/>
      <target dev='vdf' bus='virtio'/>
      <serial>vol-0123456789abcdef0</serial>
      <alias name='ua-dev-xvdf'/>
      <address type='pci' domain='0x0000' bus='0x00' slot='0x07' function='0x0'/>
    </disk>
    <disk type='file' device='disk'>
      <source file='/srv/other.img'/>
      <target dev='vdg' bus='virtio'/>
      <serial>not-a-volume</serial>
    </disk>
  </devices>
</domain>`;

describe('volume disk XML', () => {
  it.each([
    ['/dev/vdb', 'vdb'],
    ['/dev/sdf', 'vdf'],
    ['/dev/xvdg', 'vdg'],
    ['/dev/hdc', 'vdc'],
    ['/dev/sdaa', 'vdaa'],
  ])('device %s is the virtio disk %s', (device, target) => {
    expect(volumeTargetDev(device)).toBe(target);
  });

  it.each([
    [A, ["<source file='/srv/volumes/vol-0000000a.img'/>", "<target dev='vdb' bus='virtio'/>", '<serial>vol-0000000a</serial>', "<alias name='ua-dev-vdb'/>"]],
    [B, ["<target dev='vdf' bus='virtio'/>", '<serial>vol-0000000b</serial>', "<alias name='ua-dev-sdf'/>"]],
    [vol('vol-0000000c', '/dev/vdc', "/srv/it's & <x>.img"), ["<source file='/srv/it&apos;s &amp; &lt;x&gt;.img'/>"]],
  ])('builds a raw, uncached virtio disk with the volume id as serial (%#)', (v, parts) => {
    const xml = buildVolumeDiskXml(v);
    expect(xml).toMatch(/^<disk type='file' device='disk'>/);
    expect(xml).toContain("<driver name='qemu' type='raw' cache='none'/>");
    for (const p of parts) expect(xml).toContain(p);
  });

  it('reads the volumes back from libvirt\'s live XML: root disk and foreign disks are not volumes', () => {
    expect(parseVolumes(liveXml)).toEqual([vol('vol-0123456789abcdef0', '/dev/xvdf')]);
    expect(parseDisks(liveXml).map((d) => d.target)).toEqual(['vda', 'vdf', 'vdg']);
  });

  it('falls back to the guest name when the alias is missing or does not match the target', () => {
    const plain = buildVolumeDiskXml(A).replace(/<alias[^>]*>/, '');
    expect(parseVolumes(`<devices>${plain}</devices>`)).toEqual([A]);
    const lying = buildVolumeDiskXml(A).replace('ua-dev-vdb', 'ua-dev-sdz');
    expect(parseVolumes(`<devices>${lying}</devices>`)).toEqual([A]);
  });

  it('round-trips every valid attachment through a domain XML', () => {
    const spec = { id: 'i-1', resources: { cores: 1, memoryMiB: 64, diskGiB: 1 }, imageId: 'emi-1' };
    const domain = buildDomainXml({ spec, domainType: 'qemu', startedAt: 1, emulator: 'q', memoryMiB: 64, vcpus: 1, disk: '/srv/disks/i-1.img' });
    const arb = fc.record({
      volumeId: fc.stringMatching(/^vol-(?:[0-9a-f]{8}|[0-9a-f]{17})$/),
      device: fc.tuple(fc.constantFrom('sd', 'xvd', 'vd', 'hd'), fc.stringMatching(/^[b-z][a-z]?$/)).map(([p, l]) => `/dev/${p}${l}`),
      path: fc.stringMatching(/^[\w .'"&<>-]{1,20}$/).map((n) => `/srv/v/${n}.img`),
    });
    fc.assert(fc.property(arb, (v) => {
      const xml = domain.replace('</devices>', `${buildVolumeDiskXml(v)}\n</devices>`);
      expect(parseVolumes(xml)).toEqual([v]);
    }));
  });
});

describe('volumeAttachConflict', () => {
  const disks = (xml: string): ReturnType<typeof parseDisks> => parseDisks(xml);
  const host = [
    { id: 'i-1', disks: disks(`<devices><disk><source file='/srv/disks/i-1.img'/><target dev='vda'/></disk>${buildVolumeDiskXml(A)}</devices>`) },
    { id: 'i-2', disks: disks(`<devices><disk><source file='/srv/disks/i-2.img'/><target dev='vda'/></disk></devices>`) },
  ];
  it.each<[string, string, VolumeAttachmentSpec, RegExp | undefined]>([
    ['a repeat of the same attachment', 'i-1', A, undefined],
    ['the same attachment under another name of the same disk', 'i-1', { ...A, device: '/dev/sdb' }, undefined],
    ['a new volume on a free device', 'i-1', B, undefined],
    ['the same volume on another device', 'i-1', { ...A, device: '/dev/vdc' }, /attached as vdb/],
    ['the same volume from another file', 'i-1', { ...A, path: '/srv/x.img' }, /attached from/],
    ['another volume on a taken device', 'i-1', { ...B, device: '/dev/xvdb' }, /holds vol-0000000a/],
    ['a volume held by another domain', 'i-2', A, /attached to domain i-1/],
    ['another domain\'s root disk as the file', 'i-1', { ...B, path: '/srv/disks/i-2.img' }, /disk of domain i-2/],
    ['its own root disk as the file', 'i-1', { ...B, path: '/srv/disks/i-1.img' }, /already its disk vda/],
  ])('%s', (_name, id, v, expected) => {
    const clash = volumeAttachConflict(host, id, v);
    if (expected === undefined) expect(clash).toBeUndefined();
    else expect(clash).toMatch(expected);
  });
});
