/**
 * Volumes on the wire (issue 18): the ids, device names and attachment records the CLC, CC, NC and
 * hypervisor drivers all validate against. A volume's `path` is where the storage backend put it
 * (the file-backed default: `<storageDir>/volumes/<vol-id>.img`, a directory every host sees); a
 * backend over iSCSI or Ceph RBD would carry its own locator here instead.
 */
import { z } from 'zod';

/** EC2's form: `vol-` and 8 or 17 hex digits. */
export const VOLUME_ID = /^vol-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;
export const volumeIdSchema = z.string().regex(VOLUME_ID, 'expected vol- and 8 or 17 hex digits');

/** Linux block device names as EC2 and Eucalyptus take them: /dev/sdf, /dev/xvdg, /dev/vdb. */
export const DEVICE_NAME = /^\/dev\/(?:sd|xvd|vd|hd)[a-z]{1,2}$/;
export const deviceSchema = z.string().regex(DEVICE_NAME, 'expected a device name like /dev/sdf or /dev/vdb');

/** The root disk's names: never free for a volume. */
export const ROOT_DEVICES: readonly string[] = Object.freeze(['/dev/sda', '/dev/sda1', '/dev/xvda', '/dev/vda', '/dev/hda']);

/** An absolute path without `..` segments or NULs (the file backend's locator). */
export const volumePathSchema = z.string().min(2).max(4096)
  .refine((p) => p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\0'), 'expected an absolute path without ..');

/** What a hypervisor needs to connect one volume to one domain. */
export const volumeAttachmentSpecSchema = z.object({
  volumeId: volumeIdSchema,
  device: deviceSchema,
  path: volumePathSchema,
});
export type VolumeAttachmentSpec = z.infer<typeof volumeAttachmentSpecSchema>;

/** EC2's attachment states (the NC's and the CLC's records). */
export const attachmentStatusSchema = z.enum(['attaching', 'attached', 'detaching', 'detached']);
export type AttachmentStatus = z.infer<typeof attachmentStatusSchema>;

/** An attachment as an NC reports it with its instance. */
export const ncVolumeAttachmentSchema = volumeAttachmentSpecSchema.extend({ status: attachmentStatusSchema });
export type NcVolumeAttachment = z.infer<typeof ncVolumeAttachmentSchema>;
