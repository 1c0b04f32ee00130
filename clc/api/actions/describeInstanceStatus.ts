/**
 * DescribeInstanceStatus (EC2): the status checks of instances (clc/core/instanceStatus.ts) from the
 * CCs' instance and node listings and host HA's fenced hosts. Running instances only, unless
 * IncludeAllInstances=true, as EC2; paged like DescribeInstances. boto3's `instance_status_ok` and
 * `system_status_ok` waiters poll it. A read.
 */
import { z } from 'zod';
import type { CcNode } from '../../../shared/protocol/ccProtocol.js';
import { askAllPartitions } from '../../clusters/fanOut.js';
import { filterPredicate } from '../../core/instanceFilters.js';
import {
  INSTANCE_STATUS_FILTER_NAMES, INSTANCE_STATUS_FILTERS, instanceStatusOf, isInstanceStatusFilterName, type InstanceStatus,
} from '../../core/instanceStatus.js';
import { INSTANCE_PAGE_ORDER } from '../../core/pageOrders.js';
import { canonicalFilters, selectionDigest, type PageScope } from '../../core/paging.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, filterListParam, instanceIdOrVerboseParam, paramList, parseActionParams, VERBOSE } from '../actionParams.js';
import { cursorOf, idsOrPages, NOT_IDS_AND_PAGES, pagingInputOf, pagingParams, servePage } from '../paging.js';
import type { ParamMap } from '../queryParams.js';
import { instanceStatusItem } from '../render/instanceStatusItems.js';
import { unavailableItems } from '../render/serviceItems.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { dedupe, requireInstances, visibleInstances } from '../../core/instanceLookup.js';

const ACTION = 'DescribeInstanceStatus';

const schema = z.strictObject({
  InstanceId: paramList(instanceIdOrVerboseParam).optional(),
  Filter: filterListParam(isInstanceStatusFilterName, INSTANCE_STATUS_FILTER_NAMES.join(', ')).optional(),
  IncludeAllInstances: boolParam.optional(),
  ...pagingParams,
}).transform((p) => ({
  instanceIds: dedupe((p.InstanceId ?? []).filter((id) => id !== VERBOSE)),
  filters: p.Filter ?? [],
  includeAll: p.IncludeAllInstances ?? false,
  paging: pagingInputOf(p),
})).refine(idsOrPages, NOT_IDS_AND_PAGES);

export type DescribeInstanceStatusInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeInstanceStatus(params: ParamMap): DescribeInstanceStatusInput {
  return parseActionParams(schema, params);
}

async function run(input: DescribeInstanceStatusInput, ctx: ActionContext): Promise<XmlObject> {
  const now = ctx.clock.now();
  const scope: PageScope = {
    action: ACTION, selection: selectionDigest({ ids: [...input.instanceIds].sort(), filters: canonicalFilters(input.filters), all: input.includeAll }),
  };
  const cursor = cursorOf(ctx.store.read(), scope, INSTANCE_PAGE_ORDER, input.paging, now);
  const [{ merged, unavailable }, nodeFan] = await Promise.all([visibleInstances(ctx), askAllPartitions(ctx.clusters, 'ccDescribeNodes', {}, ctx.logger)]);
  let views = merged.views;
  if (input.instanceIds.length > 0) {
    const wanted = new Set(requireInstances(input.instanceIds, merged, unavailable).map((v) => v.instanceId));
    views = views.filter((v) => wanted.has(v.instanceId));
  }
  if (!input.includeAll) views = views.filter((v) => v.state === 'running');
  const nodes = new Map<string, CcNode>([...nodeFan.answers.values()].flatMap((a) => a.nodes.map((n): [string, CcNode] => [n.host, n])));
  const fenced = ctx.haHooks?.fencedHosts() ?? new Set<string>();
  const statuses = views.map((v) => instanceStatusOf(v, { node: v.host === undefined ? undefined : nodes.get(v.host), fenced: v.host !== undefined && fenced.has(v.host) }));
  const shown = statuses.filter(filterPredicate(input.filters.map((f) => ({ offered: INSTANCE_STATUS_FILTERS[f.name], values: f.values }))));
  const page = await servePage<InstanceStatus, ReturnType<typeof INSTANCE_PAGE_ORDER.keyOf>>(ctx.store, scope, {
    ...INSTANCE_PAGE_ORDER, keyOf: (s) => INSTANCE_PAGE_ORDER.keyOf(s.view),
  }, shown, cursor, input.paging, now);
  return { instanceStatusSet: page.items.map(instanceStatusItem), nextToken: page.nextToken, unavailablePartitionSet: unavailableItems(unavailable) };
}

export const describeInstanceStatus = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseDescribeInstanceStatus, run });
