/**
 * Where volumes' data lives (issue 18): the narrow interface the CLC's volume operations use (STYLE
 * habit 4). The embedded default is file-backed (clc/state/fileVolumeBackend.ts): a sparse file per
 * volume in a directory every host of the cloud mounts, handed to the hypervisor as a raw disk. A
 * real deployment would put an iSCSI target or a Ceph RBD image behind this same interface: `create`
 * makes the LUN or image and answers its locator (an IQN and LUN, `rbd:pool/image`), `remove`
 * deletes it, and the NC's driver would connect that locator (an iSCSI login, or libvirt's network
 * disk) where the file backend hands over a path (docs/ARCHITECTURE.md, "Volumes").
 */
export interface VolumeBackend {
  /** A short name for logs and errors ('file'). */
  readonly kind: string;
  /**
   * Makes the storage of a new volume of `sizeGiB` and answers where it is. Idempotent: a volume
   * whose storage exists with that size answers the same locator. Rejects with a coded error.
   */
  create(volumeId: string, sizeGiB: number): Promise<string>;
  /** Removes a volume's storage; one that does not exist is not an error. */
  remove(volumeId: string): Promise<void>;
  /**
   * Fence from storage (issue 18 part 4; the OpenStack fencing blueprint's step): `host` loses its
   * access to the volume before host HA restarts its instance elsewhere. Idempotent. iSCSI would
   * remove the host's initiator from the target's ACL and drop its sessions; Ceph RBD would blocklist
   * the host's client and break its lock. Answers what it did (for the log and the volume's record);
   * rejects with a coded error when it could not, and then nothing is restarted.
   */
  fenceHost(volumeId: string, locator: string, host: string): Promise<string>;
}
