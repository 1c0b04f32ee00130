/** How Ferry asks libvirt for a live migration (pure): flags and typed parameters. */
import { VIR } from './ffi.js';

/**
 * The QEMU stream goes straight to the destination host's address (the host of its libvirt URI);
 * no port, so the destination libvirtd picks a free one from its migration port range.
 */
export function migrationUriFor(destinationUri: string): string {
  return `tcp://${destinationHost(destinationUri)}`;
}

/** The destination host's address from its libvirt URI (127.0.0.1 for a local socket URI). */
export function destinationHost(destinationUri: string): string {
  let host = '';
  try {
    host = new URL(destinationUri).hostname;
  } catch {
    // Not a URL libvirt would take either; the call itself reports it.
  }
  return host || '127.0.0.1';
}

/**
 * Live, peer-to-peer (the source libvirtd drives the destination's), persistent on the destination.
 * Not UNDEFINE_SOURCE: the driver reads the completed job's statistics on the source first, then
 * undefines it itself. `sharedDisks`: the guest's disks are on the cluster's shared disk directory,
 * which libvirt recognises as shared only on NFS, GFS2 and the like ("Migration without shared
 * storage is unsafe" otherwise, whatever the cache mode): the operator declared it shared
 * (--libvirt-disk-dir), so UNSAFE. The same holds for a guest with volumes (issue 18): they live on
 * the cloud's shared storage, and the destination connected them in its prepare.
 */
export function migrationFlags(tls: boolean, sharedDisks = false): number {
  const m = VIR.MIGRATE;
  return m.LIVE | m.PEER2PEER | m.PERSIST_DEST | (tls ? m.TLS : 0) | (sharedDisks ? m.UNSAFE : 0);
}

/** Where QEMU's stream goes instead of straight to the destination (a migration tunnel's ends). */
export interface StreamRoute {
  /** What the source's QEMU connects to. */
  readonly uri: string;
  /** Where the destination's QEMU listens (same port). */
  readonly listenAddress: string;
}

/**
 * Through a tunnel: the source's QEMU connects to the tunnel's local end at `localAddress:port`;
 * the destination's QEMU listens on the same port at its own local address, where the tunnel's
 * other end delivers the stream. Plain TCP between QEMU and the tunnel, never between hosts.
 */
export function tunnelRoute(localAddress: string, peerLocalAddress: string, port: number): StreamRoute {
  return { uri: `tcp://${localAddress}:${port}`, listenAddress: peerLocalAddress };
}

/**
 * The incoming QEMU listens on the destination's own address only (libvirt's default is every
 * address); `bandwidthMiBs` caps the stream (QEMU's own default is ~1 Gbit/s).
 */
export function migrationParams(destinationUri: string, bandwidthMiBs?: number, route?: StreamRoute): Record<string, string | number> {
  const p: Record<string, string | number> = {
    [VIR.MIGRATE_PARAM_URI]: route?.uri ?? migrationUriFor(destinationUri),
    [VIR.MIGRATE_PARAM_LISTEN_ADDRESS]: route?.listenAddress ?? destinationHost(destinationUri),
  };
  if (bandwidthMiBs !== undefined) p[VIR.MIGRATE_PARAM_BANDWIDTH] = bandwidthMiBs;
  return p;
}
