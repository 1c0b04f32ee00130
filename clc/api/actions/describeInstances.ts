/**
 * DescribeInstances: the CCs' live instances joined with the CLC's records, grouped by reservation,
 * paged as EC2 pages (MaxResults / NextToken, in the order of compareViews).
 */
import { z } from 'zod';
import { instanceFilterPredicate, INSTANCE_FILTER_NAMES, isInstanceFilterName, TAG_FILTER_PREFIX } from '../../core/instanceFilters.js';
import { dedupe, requireInstances, visibleInstances } from '../../core/instanceLookup.js';
import type { InstanceView } from '../../core/instanceView.js';
import { INSTANCE_PAGE_ORDER } from '../../core/pageOrders.js';
import { canonicalFilters, selectionDigest, type PageScope } from '../../core/paging.js';
import { defineAction, type ActionContext } from '../action.js';
import { filterListParam, instanceIdOrVerboseParam, paramList, parseActionParams, VERBOSE } from '../actionParams.js';
import { cursorOf, idsOrPages, NOT_IDS_AND_PAGES, pagingInputOf, pagingParams, servePage } from '../paging.js';
import type { ParamMap } from '../queryParams.js';
import { reservationItems } from '../render/instanceItems.js';
import { renderCacheOf } from '../render/reservationCache.js';
import { unavailableItems } from '../render/serviceItems.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { xmlContent } from '../xmlWriter.js';

const ACTION = 'DescribeInstances';

const schema = z.strictObject({
  InstanceId: paramList(instanceIdOrVerboseParam).optional(),
  Filter: filterListParam(isInstanceFilterName, [...INSTANCE_FILTER_NAMES, `${TAG_FILTER_PREFIX}<key>`].join(', ')).optional(),
  ...pagingParams,
}).transform((p) => ({
  // `verbose` asks for every account's instances, which DescribeInstances shows anyway: it names no instance.
  instanceIds: dedupe((p.InstanceId ?? []).filter((id) => id !== VERBOSE)),
  filters: p.Filter ?? [],
  paging: pagingInputOf(p),
})).refine(idsOrPages, NOT_IDS_AND_PAGES);

export type DescribeInstancesInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeInstances(params: ParamMap): DescribeInstancesInput {
  return parseActionParams(schema, params);
}

/** A token is good only for a request selecting the same instances. */
function scopeOf(input: DescribeInstancesInput): PageScope {
  return { action: ACTION, selection: selectionDigest({ ids: [...input.instanceIds].sort(), filters: canonicalFilters(input.filters) }) };
}

async function run(input: DescribeInstancesInput, ctx: ActionContext): Promise<XmlObject> {
  const now = ctx.clock.now();
  const scope = scopeOf(input);
  const cursor = cursorOf(ctx.store.read(), scope, INSTANCE_PAGE_ORDER, input.paging, now);
  const { merged, unavailable, sources } = await visibleInstances(ctx);
  let views: readonly InstanceView[] = merged.views;
  if (input.instanceIds.length > 0) {
    const wanted = new Set(requireInstances(input.instanceIds, merged, unavailable).map((v) => v.instanceId));
    views = views.filter((v) => wanted.has(v.instanceId));
  }
  views = views.filter(instanceFilterPredicate(input.filters));
  const page = await servePage(ctx.store, scope, INSTANCE_PAGE_ORDER, views, cursor, input.paging, now);
  // A whole answer (no page asked for) made of the same sources as the last one renders the same.
  const whole = input.paging.maxResults === undefined && input.paging.nextToken === undefined;
  const reservationSet = whole
    ? renderCacheOf(ctx.store).get(scope.selection, sources, () => xmlContent(reservationItems(page.items)))
    : reservationItems(page.items);
  return { reservationSet, nextToken: page.nextToken, unavailablePartitionSet: unavailableItems(unavailable) };
}

export const describeInstances = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseDescribeInstances, run });
