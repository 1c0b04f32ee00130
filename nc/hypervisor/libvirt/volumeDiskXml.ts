/**
 * A volume as a disk of a libvirt domain (issue 18), and the volumes read back from a domain's XML:
 * pure functions. The domain's XML is the record: list() after an NC restart re-adopts attachments
 * from it, and it moves with the domain in a live migration.
 *
 * Every volume is a virtio disk, so its guest name takes the requested letters on `vd` (/dev/sdf →
 * vdf; EC2 likewise shows sdf as xvdf); the name asked for is kept in the disk's user alias
 * (`ua-dev-sdf`) and its `<serial>` is the volume id, which is how a disk is known to be a volume.
 */
import { esc, unesc } from './domainXml.js';
import { DEVICE_NAME, VOLUME_ID, type VolumeAttachmentSpec } from '../../../shared/protocol/volumes.js';

const ALIAS_PREFIX = 'ua-dev-';

/** The virtio target a device name becomes: /dev/sdf, /dev/xvdf, /dev/hdf and /dev/vdf are all vdf. */
export function volumeTargetDev(device: string): string {
  const m = /^\/dev\/(?:sd|xvd|vd|hd)([a-z]{1,2})$/.exec(device);
  // The spec was validated at the edge (shared/protocol/volumes.ts): this is a programming error.
  if (!m) throw new TypeError(`not a device name: ${device}`);
  return `vd${m[1] as string}`;
}

/**
 * The disk element for attach and detach. cache=none (O_DIRECT), as for root disks: the volume's
 * file is on storage every host sees, and no host's page cache may hold the guest's writes.
 */
export function buildVolumeDiskXml(v: VolumeAttachmentSpec): string {
  return [
    `<disk type='file' device='disk'>`,
    `  <driver name='qemu' type='raw' cache='none'/>`,
    `  <source file='${esc(v.path)}'/>`,
    `  <target dev='${volumeTargetDev(v.device)}' bus='virtio'/>`,
    `  <serial>${esc(v.volumeId)}</serial>`,
    `  <alias name='${ALIAS_PREFIX}${v.device.slice('/dev/'.length)}'/>`,
    `</disk>`,
  ].join('\n');
}

/** One disk of a domain as its XML shows it (root disk, volume, or a disk Ferry did not add). */
export interface DomainDisk {
  readonly target: string;
  readonly path?: string;
  readonly serial?: string;
  readonly alias?: string;
}

/** Every `<disk>` of a domain's XML, in document order. */
export function parseDisks(domainXml: string): DomainDisk[] {
  const out: DomainDisk[] = [];
  for (const m of domainXml.matchAll(/<disk\b[^>]*>([\s\S]*?)<\/disk>/g)) {
    const body = m[1] ?? '';
    const target = attr(body, 'target', 'dev');
    if (target === undefined) continue;
    const path = attr(body, 'source', 'file');
    const serial = /<serial>([^<]*)<\/serial>/.exec(body)?.[1];
    const alias = attr(body, 'alias', 'name');
    out.push({ target, ...(path !== undefined ? { path } : {}), ...(serial !== undefined ? { serial: unesc(serial) } : {}), ...(alias !== undefined ? { alias } : {}) });
  }
  return out;
}

/** The volumes attached to a domain: its file disks whose serial is a volume id. */
export function parseVolumes(domainXml: string): VolumeAttachmentSpec[] {
  const out: VolumeAttachmentSpec[] = [];
  for (const d of parseDisks(domainXml)) {
    if (d.serial === undefined || !VOLUME_ID.test(d.serial) || d.path === undefined) continue;
    const asked = d.alias?.startsWith(ALIAS_PREFIX) ? `/dev/${d.alias.slice(ALIAS_PREFIX.length)}` : undefined;
    const device = asked !== undefined && DEVICE_NAME.test(asked) && volumeTargetDev(asked) === d.target ? asked : `/dev/${d.target}`;
    out.push({ volumeId: d.serial, device, path: d.path });
  }
  return out;
}

/** Whether two attachments of one volume are the same one (same file, same guest disk). */
export function sameAttachment(a: VolumeAttachmentSpec, b: VolumeAttachmentSpec): boolean {
  return a.volumeId === b.volumeId && a.path === b.path && volumeTargetDev(a.device) === volumeTargetDev(b.device);
}

/**
 * What attaching `v` to domain `id` would break, given the disks of every domain on this host;
 * undefined when nothing does (including a repeat of the same attachment).
 */
export function volumeAttachConflict(
  domains: readonly { readonly id: string; readonly disks: readonly DomainDisk[] }[], id: string, v: VolumeAttachmentSpec,
): string | undefined {
  const target = volumeTargetDev(v.device);
  for (const d of domains) {
    for (const disk of d.disks) {
      const isVolume = disk.serial === v.volumeId;
      if (d.id !== id) {
        if (isVolume) return `volume ${v.volumeId} is attached to domain ${d.id}`;
        if (disk.path === v.path) return `file ${v.path} is a disk of domain ${d.id}`;
        continue;
      }
      if (isVolume && disk.target !== target) return `volume ${v.volumeId} is attached as ${disk.target}`;
      if (isVolume && disk.path !== v.path) return `volume ${v.volumeId} is attached from ${disk.path ?? 'another source'}`;
      if (!isVolume && disk.target === target) return `device ${v.device} (${target}) holds ${disk.serial ?? 'another disk'}`;
      if (!isVolume && disk.path === v.path) return `file ${v.path} is already its disk ${disk.target}`;
    }
  }
  return undefined;
}

function attr(body: string, element: string, name: string): string | undefined {
  const el = new RegExp(`<${element}\\b([^>]*)/?>`).exec(body)?.[1];
  if (el === undefined) return undefined;
  const m = new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(el);
  return m ? unesc(m[1] ?? m[2] ?? '') : undefined;
}
