/** DescribeVolumes filters, EC2's names and semantics (instanceFilters.ts: OR within, AND across, wildcards). Pure. */
import { filterPredicate, isTagKeyFilterName, tagKeyOf, TAG_FILTER_PREFIX, type TagKeyFilterName } from './instanceFilters.js';
import type { VolumeRecord } from './volumeRecords.js';

const iso = (ms: number): string => new Date(ms).toISOString();

export const VOLUME_FILTERS = Object.freeze({
  'volume-id': (v: VolumeRecord) => [v.volumeId],
  status: (v: VolumeRecord) => [v.state],
  size: (v: VolumeRecord) => [String(v.size)],
  'availability-zone': (v: VolumeRecord) => [v.partition],
  'volume-type': (v: VolumeRecord) => [v.volumeType],
  'create-time': (v: VolumeRecord) => [iso(v.createTime)],
  'attachment.instance-id': (v: VolumeRecord) => (v.attachment ? [v.attachment.instanceId] : []),
  'attachment.device': (v: VolumeRecord) => (v.attachment ? [v.attachment.device] : []),
  'attachment.status': (v: VolumeRecord) => (v.attachment ? [v.attachment.status] : []),
  'attachment.attach-time': (v: VolumeRecord) => (v.attachment ? [iso(v.attachment.attachTime)] : []),
  'attachment.delete-on-termination': (v: VolumeRecord) => (v.attachment ? [String(v.attachment.deleteOnTermination)] : []),
  encrypted: () => ['false'],
  'tag-key': (v: VolumeRecord) => (v.userTags ?? []).map((t) => t.key),
  'tag-value': (v: VolumeRecord) => (v.userTags ?? []).map((t) => t.value),
} satisfies Record<string, (v: VolumeRecord) => readonly string[]>);

export type VolumeFilterName = keyof typeof VOLUME_FILTERS | TagKeyFilterName;
export const VOLUME_FILTER_NAMES = Object.freeze([...Object.keys(VOLUME_FILTERS), `${TAG_FILTER_PREFIX}<key>`]);

export function isVolumeFilterName(name: string): name is VolumeFilterName {
  return Object.prototype.hasOwnProperty.call(VOLUME_FILTERS, name) || isTagKeyFilterName(name);
}

function offeredBy(name: VolumeFilterName): (v: VolumeRecord) => readonly string[] {
  if (!isTagKeyFilterName(name)) return VOLUME_FILTERS[name];
  const key = tagKeyOf(name);
  return (v) => (v.userTags ?? []).filter((t) => t.key === key).map((t) => t.value);
}

export function volumeFilterPredicate(filters: readonly { readonly name: VolumeFilterName; readonly values: readonly string[] }[]): (v: VolumeRecord) => boolean {
  return filterPredicate(filters.map((f) => ({ offered: offeredBy(f.name), values: f.values })));
}
