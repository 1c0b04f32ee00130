/**
 * Connecting a volume's storage to this host (issue 18), a narrow interface (STYLE habit 4) so a
 * backend other than shared files plugs in. A live migration's destination connects the instance's
 * volumes at prepare, before the source commits, and disconnects them when the migration rolls back
 * or is cancelled; the source disconnects them once the instance runs on the destination (cleaning).
 * Connecting gives this host access to the volume's data; it never writes it, and disconnecting
 * never deletes it.
 *
 * What a real backend does here (docs/ARCHITECTURE.md, "Volumes in live migration and fencing"):
 * iSCSI exports the LUN to this host and logs in (connect), logs out and removes the host from the
 * target's ACL (disconnect); Ceph RBD authorizes and maps the image for this host, then unmaps it
 * and blocklists the host's client. The embedded file backend's volumes are files on the directory
 * every host mounts: access needs no grant, and QEMU's image lock keeps one writer (see
 * `SharedFileVolumes`).
 */
import { stat } from 'node:fs/promises';
import type { VolumeAttachmentSpec } from '../shared/protocol/volumes.js';
import { NcErrors } from './errors.js';

export interface VolumeConnector {
  /**
   * Makes each volume reachable from this host for `instanceId`. Idempotent. A volume that cannot be
   * reached is VolumeUnavailable, and the volumes connected by this call are disconnected again.
   */
  connect(instanceId: string, volumes: readonly VolumeAttachmentSpec[]): Promise<void>;
  /** Revokes this host's access to the volumes for `instanceId`. Idempotent; never touches their data. */
  disconnect(instanceId: string, volumes: readonly VolumeAttachmentSpec[]): Promise<void>;
}

/**
 * The file backend: a volume is `<storage>/volumes/<vol-id>.img` on the directory every host mounts
 * at the same path. Connecting checks that this host sees the file (a host whose shared mount is
 * gone must not take the instance); there is no access to grant or revoke. Single-writer holds
 * through QEMU's image locks (OFD locks on the file; the incoming QEMU takes its write lock only at
 * the switch-over, when the source's is dropped) and, for a fenced host, through its power fence.
 */
export class SharedFileVolumes implements VolumeConnector {
  constructor(private readonly host: string) {}

  async connect(instanceId: string, volumes: readonly VolumeAttachmentSpec[]): Promise<void> {
    for (const v of volumes) {
      const found = await stat(v.path).then((s) => (s.isFile() ? undefined : 'not a regular file'), (e: NodeJS.ErrnoException) => e.code ?? 'unreadable');
      if (found !== undefined) {
        throw NcErrors.make('VolumeUnavailable', { host: this.host, instanceId, volumeId: v.volumeId, detail: `${v.path}: ${found}` });
      }
    }
  }

  disconnect(): Promise<void> {
    return Promise.resolve();
  }
}
