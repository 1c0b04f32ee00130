/** Tags in EC2's XML shapes: an instance item's `tagSet`, and DescribeTags' resource-tag items. */
import type { Tag } from '../../core/instanceTags.js';
import type { ResourceTag } from '../../core/resourceTags.js';
import type { XmlObject } from '../xmlResponse.js';

export function tagSetItems(tags: readonly Tag[]): XmlObject[] {
  return tags.map((t) => ({ key: t.key, value: t.value }));
}

export function resourceTagItem(t: ResourceTag): XmlObject {
  return { resourceId: t.resourceId, resourceType: t.resourceType, key: t.key, value: t.value };
}
