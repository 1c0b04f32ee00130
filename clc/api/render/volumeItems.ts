/** Volumes in EC2's XML shapes (CreateVolume's answer, DescribeVolumes' volumeSet items, the attachment answers). */
import type { VolumeRecord } from '../../core/volumeRecords.js';
import type { XmlObject } from '../xmlResponse.js';
import { tagSetItems } from './tagItems.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/** EC2's attachment item; `status` may be given (the state a reply reports). */
export function attachmentItem(v: VolumeRecord, status?: string): XmlObject {
  const a = v.attachment;
  if (!a) return {};
  return {
    volumeId: v.volumeId, instanceId: a.instanceId, device: a.device, status: status ?? a.status,
    attachTime: iso(a.attachTime), deleteOnTermination: a.deleteOnTermination,
  };
}

/** The volume's fields, as CreateVolume answers them and DescribeVolumes lists them (without attachmentSet). */
export function volumeFields(v: VolumeRecord): XmlObject {
  return {
    volumeId: v.volumeId,
    size: v.size,
    snapshotId: '',
    availabilityZone: v.partition,
    status: v.state,
    createTime: iso(v.createTime),
    volumeType: v.volumeType,
    encrypted: false,
    multiAttachEnabled: false,
    tagSet: tagSetItems(v.userTags ?? []),
  };
}

export function volumeItem(v: VolumeRecord): XmlObject {
  return { ...volumeFields(v), attachmentSet: v.attachment ? [attachmentItem(v)] : [] };
}
