/**
 * Domain XML from an instance's spec, and Ferry's metadata back from libvirt's XML: pure functions.
 * The spec Ferry needs to re-adopt a domain (image, accounted resources, start time) travels in
 * the domain's own <metadata>, so it moves with the domain in a live migration.
 */
import type { Resources } from '../../../shared/model/resources.js';
import type { DomainSpec, DomainState } from '../driver.js';
import { VIR } from './ffi.js';

export const FERRY_XML_NS = 'urn:ferry:instance:1';

/** 'kvm' only where the probe saw hardware virtualization (kvmProbe.ts); 'qemu' is TCG. */
export type LibvirtDomainType = 'kvm' | 'qemu';

export interface DomainXmlInput {
  readonly spec: DomainSpec;
  readonly domainType: LibvirtDomainType;
  readonly startedAt: number;
  readonly emulator: string;
  /** Guest RAM actually given (MiB); the spec's memory is still what is accounted and recorded. */
  readonly memoryMiB: number;
  readonly vcpus: number;
  /** Boot this kernel and initrd directly instead of the firmware's empty boot (test labs). */
  readonly boot?: DirectKernelBoot;
  /** A file the guest's first serial port appends to (kept across a migration on shared storage). */
  readonly serialLog?: string;
  /** The guest's root disk, a raw file on the cluster's shared disk directory (virtio, vda). */
  readonly disk?: string;
  /**
   * Volumes' `<disk>` elements (volumeDiskXml.ts), in the definition before the guest boots (issue 18:
   * a restart elsewhere, a re-homed instance).
   */
  readonly volumeDisks?: readonly string[];
}

export interface DirectKernelBoot {
  readonly kernel: string;
  readonly initrd: string;
  readonly cmdline?: string;
}

/** What a host really gives a guest: the VM type, capped (a test lab runs tiny firmware-only guests). */
export function guestSize(r: Resources, caps: { readonly memoryMiB?: number; readonly vcpus?: number }): { memoryMiB: number; vcpus: number } {
  return {
    memoryMiB: Math.max(16, Math.min(r.memoryMiB, caps.memoryMiB ?? r.memoryMiB)),
    vcpus: Math.max(1, Math.min(r.cores, caps.vcpus ?? r.cores)),
  };
}

/**
 * A diskless guest that boots its firmware only (enough to prove a live migration of running guest
 * state), or a kernel and initrd given directly; the root disk on shared storage is the image issue's job.
 */
export function buildDomainXml(i: DomainXmlInput): string {
  const r = i.spec.resources;
  return [
    `<domain type='${i.domainType}'>`,
    `  <name>${esc(i.spec.id)}</name>`,
    `  <metadata>`,
    `    <ferry:instance xmlns:ferry='${FERRY_XML_NS}' image-id='${esc(i.spec.imageId)}' cores='${r.cores}' memory-mib='${r.memoryMiB}' disk-gib='${r.diskGiB}' started-at='${i.startedAt}'/>`,
    `  </metadata>`,
    `  <memory unit='MiB'>${i.memoryMiB}</memory>`,
    `  <vcpu>${i.vcpus}</vcpu>`,
    `  <os>`,
    `    <type arch='x86_64' machine='pc'>hvm</type>`,
    ...(i.boot ? [
      `    <kernel>${esc(i.boot.kernel)}</kernel>`,
      `    <initrd>${esc(i.boot.initrd)}</initrd>`,
      `    <cmdline>${esc(i.boot.cmdline ?? 'console=ttyS0 quiet')}</cmdline>`,
    ] : []),
    `  </os>`,
    `  <features><acpi/></features>`,
    `  <on_poweroff>destroy</on_poweroff>`,
    `  <on_reboot>restart</on_reboot>`,
    `  <on_crash>destroy</on_crash>`,
    `  <devices>`,
    `    <emulator>${esc(i.emulator)}</emulator>`,
    // cache=none (O_DIRECT): nothing of the guest's writes is held in this host's page cache, so
    // the destination of a live migration reads what the source wrote.
    ...(i.disk ? [`    <disk type='file' device='disk'><driver name='qemu' type='raw' cache='none'/><source file='${esc(i.disk)}'/><target dev='vda' bus='virtio'/></disk>`] : []),
    ...(i.volumeDisks ?? []).map((d) => d.split('\n').map((l) => `    ${l}`).join('\n')),
    ...(i.serialLog ? [`    <serial type='file'><source path='${esc(i.serialLog)}' append='on'/><target port='0'/></serial>`] : []),
    `    <memballoon model='none'/>`,
    `  </devices>`,
    `</domain>`,
  ].join('\n');
}

export interface FerryMetadata {
  readonly imageId: string;
  readonly resources: Resources;
  readonly startedAt: number;
}

/** Reads Ferry's metadata element from libvirt's XML; undefined for a domain Ferry did not create. */
export function parseFerryMetadata(xml: string): FerryMetadata | undefined {
  const m = /<(\w+):instance\b([^>]*)\/?>/.exec(xml);
  if (!m || !m[2]?.includes(FERRY_XML_NS)) return undefined;
  const attrs = new Map<string, string>();
  for (const a of m[2].matchAll(/([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attrs.set(a[1] as string, unesc(a[2] ?? a[3] ?? ''));
  const num = (k: string): number | undefined => {
    const v = attrs.get(k);
    const n = v === undefined ? Number.NaN : Number(v);
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  };
  const imageId = attrs.get('image-id');
  const cores = num('cores');
  const memoryMiB = num('memory-mib');
  const diskGiB = num('disk-gib');
  const startedAt = num('started-at');
  if (imageId === undefined || cores === undefined || memoryMiB === undefined || diskGiB === undefined || startedAt === undefined) return undefined;
  return { imageId, resources: { cores, memoryMiB, diskGiB }, startedAt };
}

/** Guest sizing from libvirt's XML, for a domain Ferry did not create (adopted as found). */
export function parseSizing(xml: string): Resources {
  const mem = /<memory(?:\s+unit=['"](\w+)['"])?>(\d+)<\/memory>/.exec(xml);
  const unit = (mem?.[1] ?? 'KiB').toLowerCase();
  const perMiB: Record<string, number> = { b: 1 / 1048576, bytes: 1 / 1048576, kib: 1 / 1024, k: 1 / 1024, mib: 1, m: 1, gib: 1024, g: 1024 };
  const memoryMiB = Math.round(Number(mem?.[2] ?? 0) * (perMiB[unit] ?? 1 / 1024));
  const cores = Number(/<vcpu\b[^>]*>(\d+)<\/vcpu>/.exec(xml)?.[1] ?? 1);
  return { cores, memoryMiB, diskGiB: 0 };
}

/**
 * libvirt's virDomainState (and its reason) → Ferry's DomainState. Paused by a user (virDomainSuspend,
 * or arrived from a migration of a paused guest) is 'suspended'; paused otherwise (a migration's own
 * pause, an I/O error) is 'paused'.
 */
export function domainStateOf(virState: number, reason = 0): DomainState {
  switch (virState) {
    case VIR.DOMAIN_STATE.RUNNING:
    case VIR.DOMAIN_STATE.BLOCKED:
      return 'running';
    case VIR.DOMAIN_STATE.PAUSED:
      return reason === VIR.PAUSED_REASON.USER ? 'suspended' : 'paused';
    case VIR.DOMAIN_STATE.PMSUSPENDED:
      return 'paused';
    case VIR.DOMAIN_STATE.CRASHED:
      return 'crashed';
    default:
      return 'shutoff';
  }
}

/**
 * A definition left on the source after the domain live-migrated away (shut off, reason MIGRATED):
 * the guest runs elsewhere, so it is not a domain of this host.
 */
export function migratedAway(s: { readonly state: number; readonly reason: number }): boolean {
  return s.state === VIR.DOMAIN_STATE.SHUTOFF && s.reason === VIR.SHUTOFF_REASON.MIGRATED;
}

/** The domain's UUID from libvirt's XML (a destination must refuse another domain of the same name). */
export function parseUuid(xml: string): string | undefined {
  return /<uuid>([0-9a-fA-F-]{36})<\/uuid>/.exec(xml)?.[1];
}

/** Escapes text for an XML attribute or element (the driver builds its XML by hand). */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&apos;').replace(/"/g, '&quot;');
}

export function unesc(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&apos;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&');
}
