/**
 * The flags of a cloud whose NCs drive the libvirt lab's daemons (scripts/libvirtLab.ts): each NC on
 * its lab host's address, its libvirtd at qemu+tcp://<host>:<port>/system, and the CC's migration
 * URI template to match. One description for the libvirt cloud tests and the migration-libvirt bench.
 */
import type { CloudLayoutOptions } from './cloudLayout.js';

export interface LibvirtCloudOptions {
  /** The lab's libvirtd port (one port, one address per host). */
  readonly libvirtPort: number;
  /** --libvirt-guest-memory-cap (MiB): the lab's guests stay small whatever their instance type. */
  readonly guestMemoryCapMiB: number;
  /** --libvirt-migration-bandwidth (MiB/s); libvirt's default when undefined. */
  readonly migrationBandwidthMiBs?: number;
  /** libvirt's own TLS: the host's migration TLS directory (--libvirt-tls-dir). */
  readonly tlsDirOf?: (host: string) => string;
  /** Per-migration tunnels (--libvirt-tunnel-*); used instead of libvirt's TLS when both are given. */
  readonly tunnel?: { readonly port: number; readonly local: 'host' | 'loopback'; readonly dataPorts: { readonly min: number; readonly max: number } };
  /** A booted Linux guest instead of firmware only (--libvirt-guest-kernel/-initrd). */
  readonly guest?: { readonly kernel: string; readonly initrd: string };
  /** The CC's --poll-interval-ms (its default when undefined). */
  readonly pollIntervalMs?: number;
}

export function libvirtCloudArgs(o: LibvirtCloudOptions): Required<Pick<CloudLayoutOptions, 'hypervisorArgs' | 'ccArgs'>> {
  const uri = (host: string): string => `qemu+tcp://${host}:${o.libvirtPort}/system`;
  return {
    hypervisorArgs: (host) => [
      '--hypervisor', 'libvirt', '--libvirt-uri', uri(host), '--libvirt-guest-memory-cap', String(o.guestMemoryCapMiB),
      ...(o.tlsDirOf ? ['--libvirt-tls-dir', o.tlsDirOf(host)] : []),
      ...(o.migrationBandwidthMiBs !== undefined ? ['--libvirt-migration-bandwidth', String(o.migrationBandwidthMiBs)] : []),
      ...(o.tunnel ? ['--libvirt-tunnel-port', String(o.tunnel.port), '--libvirt-tunnel-local', o.tunnel.local,
        '--libvirt-tunnel-data-ports', `${o.tunnel.dataPorts.min}-${o.tunnel.dataPorts.max}`] : []),
      ...(o.guest ? ['--libvirt-guest-kernel', o.guest.kernel, '--libvirt-guest-initrd', o.guest.initrd] : []),
    ],
    ccArgs: [...(o.pollIntervalMs !== undefined ? ['--poll-interval-ms', String(o.pollIntervalMs)] : []),
      '--migration-uri-template', `qemu+tcp://{host}:${o.libvirtPort}/system`],
  };
}
