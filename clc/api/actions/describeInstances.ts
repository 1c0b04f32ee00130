/** DescribeInstances: the CCs' live instances joined with the CLC's records, grouped by reservation. */
import { z } from 'zod';
import { askAllPartitions } from '../../clusters/fanOut.js';
import { instanceFilterPredicate, INSTANCE_FILTER_NAMES, isInstanceFilterName, type InstanceFilter } from '../../core/instanceFilters.js';
import { liveInstances, mergeInstances, type InstanceView } from '../../core/instanceView.js';
import { defineAction, type ActionContext } from '../action.js';
import { coded, instanceIdParam, paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { reservationItems } from '../render/instanceItems.js';
import { unavailableItems } from '../render/serviceItems.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { dedupe, requireInstances } from './instanceLookup.js';

const filterSchema = z.strictObject({
  Name: z.string().refine(isInstanceFilterName, coded('InvalidParameterValue', `The filter is invalid; known filters: ${INSTANCE_FILTER_NAMES.join(', ')}`)),
  Value: paramList(z.string()),
});

const schema = z.strictObject({
  InstanceId: paramList(instanceIdParam).optional(),
  Filter: paramList(filterSchema).optional(),
}).transform((p) => ({
  instanceIds: dedupe(p.InstanceId ?? []),
  filters: (p.Filter ?? []).map((f): InstanceFilter => ({ name: f.Name as InstanceFilter['name'], values: f.Value })),
}));

export type DescribeInstancesInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeInstances(params: ParamMap): DescribeInstancesInput {
  return parseActionParams(schema, params);
}

async function run(input: DescribeInstancesInput, ctx: ActionContext): Promise<XmlObject> {
  const fan = await askAllPartitions(ctx.clusters, 'ccDescribeInstances', {}, ctx.logger);
  const { live, incomplete } = liveInstances(fan.answers);
  const merged = mergeInstances(ctx.store.read().instances, live, incomplete);
  let views: readonly InstanceView[] = merged.views;
  if (input.instanceIds.length > 0) {
    const wanted = new Set(requireInstances(input.instanceIds, merged, fan.unavailable).map((v) => v.instanceId));
    views = views.filter((v) => wanted.has(v.instanceId));
  }
  views = views.filter(instanceFilterPredicate(input.filters));
  return { reservationSet: reservationItems(views), unavailablePartitionSet: unavailableItems(fan.unavailable) };
}

export const describeInstances = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseDescribeInstances, run });
