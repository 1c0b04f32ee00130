/** The orders DescribeInstances and DescribeTags page in, with their cursors' JSON form (clc/core/paging.ts). */
import { z } from 'zod';
import { compareViews, type InstanceOrderKey, type InstanceView } from './instanceView.js';
import type { PageOrder } from './paging.js';
import { compareResourceTags, type ResourceTag } from './resourceTags.js';

const instanceKeyJson = z.tuple([z.number(), z.string(), z.number(), z.string()]);

/** Launch time, reservation, launch index, instance id: the order DescribeInstances lists in. */
export const INSTANCE_PAGE_ORDER: PageOrder<InstanceView, InstanceOrderKey> = Object.freeze({
  keyOf: (v: InstanceView): InstanceOrderKey => ({ launchTime: v.launchTime, reservationId: v.reservationId, launchIndex: v.launchIndex, instanceId: v.instanceId }),
  compare: compareViews,
  writeKey: (k: InstanceOrderKey): unknown => [k.launchTime, k.reservationId, k.launchIndex, k.instanceId],
  readKey: (json: unknown): InstanceOrderKey | undefined => {
    const r = instanceKeyJson.safeParse(json);
    return r.success ? { launchTime: r.data[0], reservationId: r.data[1], launchIndex: r.data[2], instanceId: r.data[3] } : undefined;
  },
});

type TagKey = Pick<ResourceTag, 'resourceId' | 'key'>;
const tagKeyJson = z.tuple([z.string(), z.string()]);

/** Resource id, then tag key. */
export const TAG_PAGE_ORDER: PageOrder<ResourceTag, TagKey> = Object.freeze({
  keyOf: (t: ResourceTag): TagKey => ({ resourceId: t.resourceId, key: t.key }),
  compare: compareResourceTags,
  writeKey: (k: TagKey): unknown => [k.resourceId, k.key],
  readKey: (json: unknown): TagKey | undefined => {
    const r = tagKeyJson.safeParse(json);
    return r.success ? { resourceId: r.data[0], key: r.data[1] } : undefined;
  },
});
