/**
 * DescribeTags (EC2): the tags of the instances DescribeInstances shows (Eucalyptus's system tags,
 * clc/core/instanceTags.ts, and user tags) and of the volumes DescribeVolumes shows, filtered, in
 * (resource id, key) order, paged as EC2 pages. A read.
 */
import { z } from 'zod';
import { TAG_FILTER_PREFIX } from '../../core/instanceFilters.js';
import { visibleInstances } from '../../core/instanceLookup.js';
import { TAG_PAGE_ORDER } from '../../core/pageOrders.js';
import { canonicalFilters, selectionDigest, type PageScope } from '../../core/paging.js';
import { isTagFilterName, selectResourceTags, TAG_FILTER_NAMES } from '../../core/resourceTags.js';
import { defineAction, type ActionContext } from '../action.js';
import { filterListParam, parseActionParams } from '../actionParams.js';
import { cursorOf, pagingInputOf, pagingParams, servePage } from '../paging.js';
import type { ParamMap } from '../queryParams.js';
import { unavailableItems } from '../render/serviceItems.js';
import { resourceTagItem } from '../render/tagItems.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';

const ACTION = 'DescribeTags';

const schema = z.strictObject({
  Filter: filterListParam(isTagFilterName, [...TAG_FILTER_NAMES, `${TAG_FILTER_PREFIX}<key>`].join(', ')).optional(),
  ...pagingParams,
}).transform((p) => ({ filters: p.Filter ?? [], paging: pagingInputOf(p) }));

export type DescribeTagsInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeTags(params: ParamMap): DescribeTagsInput {
  return parseActionParams(schema, params);
}

async function run(input: DescribeTagsInput, ctx: ActionContext): Promise<XmlObject> {
  const now = ctx.clock.now();
  const scope: PageScope = { action: ACTION, selection: selectionDigest({ filters: canonicalFilters(input.filters) }) };
  const cursor = cursorOf(ctx.store.read(), scope, TAG_PAGE_ORDER, input.paging, now);
  const { merged, unavailable } = await visibleInstances(ctx);
  const tags = selectResourceTags(merged.views, input.filters, Object.values(ctx.store.read().volumes));
  const page = await servePage(ctx.store, scope, TAG_PAGE_ORDER, tags, cursor, input.paging, now);
  return { tagSet: page.items.map(resourceTagItem), nextToken: page.nextToken, unavailablePartitionSet: unavailableItems(unavailable) };
}

export const describeTags = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseDescribeTags, run });
