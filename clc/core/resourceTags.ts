/**
 * DescribeTags' list: every tag of the given instances (system and user, clc/core/instanceTags.ts)
 * and volumes (user tags) as EC2's resource-tag items, filtered with EC2's DescribeTags filters
 * (same wildcard semantics as DescribeInstances'), in (resource id, key) order. Pure.
 */
import { filterPredicate, isTagKeyFilterName, tagKeyOf, type TagKeyFilterName } from './instanceFilters.js';
import { instanceTags, type Tag } from './instanceTags.js';
import { byCodeUnits, type InstanceView } from './instanceView.js';

export const INSTANCE_RESOURCE_TYPE = 'instance';
export const VOLUME_RESOURCE_TYPE = 'volume';

export interface ResourceTag extends Tag {
  readonly resourceId: string;
  readonly resourceType: typeof INSTANCE_RESOURCE_TYPE | typeof VOLUME_RESOURCE_TYPE;
}

/** What DescribeTags needs of a volume. */
export interface TaggedVolume {
  readonly volumeId: string;
  readonly userTags?: readonly Tag[] | undefined;
}

/** A tag with all the tags of its resource, which `tag:<key>` looks at. */
interface TagInContext {
  readonly tag: ResourceTag;
  readonly siblings: readonly Tag[];
}

export const TAG_FILTERS = Object.freeze({
  'key': (t: TagInContext) => [t.tag.key],
  'value': (t: TagInContext) => [t.tag.value],
  'resource-id': (t: TagInContext) => [t.tag.resourceId],
  'resource-type': (t: TagInContext) => [t.tag.resourceType],
} satisfies Record<string, (t: TagInContext) => readonly string[]>);

export type TagFilterName = keyof typeof TAG_FILTERS | TagKeyFilterName;
/** The fixed names; `tag:<key>` is open-ended. */
export const TAG_FILTER_NAMES = Object.freeze(Object.keys(TAG_FILTERS) as (keyof typeof TAG_FILTERS)[]);

export function isTagFilterName(name: string): name is TagFilterName {
  return Object.prototype.hasOwnProperty.call(TAG_FILTERS, name) || isTagKeyFilterName(name);
}

export interface TagFilter {
  readonly name: TagFilterName;
  readonly values: readonly string[];
}

function offeredBy(name: TagFilterName): (t: TagInContext) => readonly string[] {
  if (!isTagKeyFilterName(name)) return TAG_FILTERS[name];
  // EC2: the tags of resources that have this tag with a matching value.
  const key = tagKeyOf(name);
  return (t) => t.siblings.filter((s) => s.key === key).map((s) => s.value);
}

export function compareResourceTags(a: Pick<ResourceTag, 'resourceId' | 'key'>, b: Pick<ResourceTag, 'resourceId' | 'key'>): number {
  return byCodeUnits(a.resourceId, b.resourceId) || byCodeUnits(a.key, b.key);
}

/** The instances' and volumes' tags that every filter accepts, in (resource id, key) order. */
export function selectResourceTags(views: readonly InstanceView[], filters: readonly TagFilter[], volumes: readonly TaggedVolume[] = []): ResourceTag[] {
  const accepts = filterPredicate(filters.map((f) => ({ offered: offeredBy(f.name), values: f.values })));
  const out: ResourceTag[] = [];
  const add = (resourceId: string, resourceType: ResourceTag['resourceType'], siblings: readonly Tag[]): void => {
    for (const t of siblings) {
      const tag: ResourceTag = { resourceId, resourceType, key: t.key, value: t.value };
      if (accepts({ tag, siblings })) out.push(tag);
    }
  };
  for (const v of views) add(v.instanceId, INSTANCE_RESOURCE_TYPE, instanceTags(v));
  for (const v of volumes) add(v.volumeId, VOLUME_RESOURCE_TYPE, v.userTags ?? []);
  return out.sort(compareResourceTags);
}
