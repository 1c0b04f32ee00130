/**
 * A volume as the CLC keeps it in clc.json (issue 18): EC2's fields, its state (volumeMachine.ts),
 * where the backend put it, and its attachment. The attachment is recorded here, by volume, with
 * the instance it belongs to, so that what moves or restarts an instance (live migration, host HA's
 * restart elsewhere) finds its volumes by instance id (volumesOf); the NC that runs the instance
 * keeps the same attachment in its instance record.
 */
import { z } from 'zod';
import { instanceIdSchema, partitionSchema } from '../../shared/protocol/common.js';
import { attachmentStatusSchema, deviceSchema, volumeIdSchema, volumePathSchema } from '../../shared/protocol/volumes.js';
import { byCodeUnits } from './codeUnits.js';
import { tagSchema } from './userTags.js';
import { VOLUME_STATES, type VolumeState } from './volumeMachine.js';

export const volumeAttachmentRecordSchema = z.object({
  instanceId: instanceIdSchema,
  device: deviceSchema,
  status: attachmentStatusSchema,
  /** Epoch ms the attach was accepted. */
  attachTime: z.number(),
  /** EC2's flag; Ferry's attached volumes outlive their instance (false), as EC2's attached ones do by default. */
  deleteOnTermination: z.boolean(),
  /**
   * Host HA fenced the host that ran the instance from this volume before restarting it elsewhere
   * (issue 18 part 4): which host, when, and what the backend did. Kept as the attachment's history.
   */
  fencedFrom: z.object({ host: z.string().min(1), at: z.number(), detail: z.string() }).optional(),
});
export type VolumeAttachmentRecord = z.infer<typeof volumeAttachmentRecordSchema>;

export const volumeRecordSchema = z.object({
  volumeId: volumeIdSchema,
  ownerId: z.string().min(1),
  /** GiB. */
  size: z.number().int().min(1),
  /** Its availability zone (= partition). */
  partition: partitionSchema,
  volumeType: z.string().min(1),
  /** Epoch ms. */
  createTime: z.number(),
  state: z.enum(VOLUME_STATES as [VolumeState, ...VolumeState[]]),
  /** Where the backend keeps its data (the file backend: the file); absent until made. */
  path: volumePathSchema.optional(),
  /** Why it is in `error`. */
  error: z.string().optional(),
  clientToken: z.string().optional(),
  userTags: z.array(tagSchema).optional(),
  attachment: volumeAttachmentRecordSchema.optional(),
});
export type VolumeRecord = z.infer<typeof volumeRecordSchema>;

/** Create time, then id: DescribeVolumes' order. */
export function compareVolumes(a: Pick<VolumeRecord, 'createTime' | 'volumeId'>, b: Pick<VolumeRecord, 'createTime' | 'volumeId'>): number {
  return a.createTime - b.createTime || byCodeUnits(a.volumeId, b.volumeId);
}

/** The volumes attached (in any attachment state) to `instanceId`. */
export function volumesOf(volumes: Readonly<Record<string, VolumeRecord>>, instanceId: string): VolumeRecord[] {
  return Object.values(volumes).filter((v) => v.attachment?.instanceId === instanceId).sort(compareVolumes);
}
