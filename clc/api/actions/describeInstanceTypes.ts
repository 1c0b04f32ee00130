/**
 * DescribeInstanceTypes: the CLC's VM type table, as two kinds of client ask for it.
 * - euca2ools 3's `euca-describe-instance-types` (Eucalyptus's extension): `InstanceType.N` and
 *   `Availability`, read from `instanceTypeDetails` (with each type's free / max per zone when
 *   Availability is true, from the CCs' resource matrices).
 * - EC2's DescribeInstanceTypes (boto3, its paginator, `aws ec2 describe-instance-types`):
 *   `InstanceType.N`, `Filter.N`, `MaxResults` (5 to 100, EC2's range here), `NextToken`, `DryRun`,
 *   read from `instanceTypeSet`.
 * Every answer carries both element sets, for the same types (the same page), because neither
 * client can be told by its parameters alone: euca2ools without --show-capacity sends only
 * InstanceType.N, as boto3 may, and Ferry answers every Version alike. Each reader takes its own
 * set and ignores the other's (euca2ools reads only instanceTypeDetails of what requestbuilder
 * parses; botocore parses only its output shape's members), so any parameter combines with any other.
 */
import { z } from 'zod';
import { partitionNames } from '../../clusters/clusters.js';
import { askPartitions } from '../../clusters/fanOut.js';
import {
  capacityByType, INSTANCE_TYPE_FILTER_NAMES, invalidInstanceTypeFilterValue, isInstanceTypeFilterName, selectInstanceTypes,
  type ZoneCapacity,
} from '../../core/instanceTypes.js';
import { INSTANCE_TYPE_PAGE_ORDER } from '../../core/pageOrders.js';
import { canonicalFilters, selectionDigest, type PageScope } from '../../core/paging.js';
import type { FerryError } from '../../../shared/errors/registry.js';
import type { VmType } from '../../../shared/model/vmTypes.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, filterListParam, paramList, parseActionParams } from '../actionParams.js';
import { ClcErrors } from '../../core/errors.js';
import { cursorOf, pagingInputOf, pagingParamsUpTo, servePage } from '../paging.js';
import { showKey } from '../../core/showKey.js';
import type { ParamMap } from '../queryParams.js';
import { instanceTypeInfoItem, vmTypeDetailsItem } from '../render/instanceTypeItems.js';
import { unavailableItems } from '../render/serviceItems.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';

const ACTION = 'DescribeInstanceTypes';
/** botocore's limits for this action: DITMaxResults 5..100, RequestInstanceTypeList at most 100. */
export const INSTANCE_TYPE_MAX_PAGE_SIZE = 100;
export const MAX_INSTANCE_TYPE_NAMES = 100;

const schema = z.strictObject({
  InstanceType: paramList(z.string().min(1)).max(MAX_INSTANCE_TYPE_NAMES, `at most ${MAX_INSTANCE_TYPE_NAMES} instance types`).optional(),
  Filter: filterListParam(isInstanceTypeFilterName, INSTANCE_TYPE_FILTER_NAMES.join(', '), invalidInstanceTypeFilterValue).optional(),
  Availability: boolParam.optional(),
  ...pagingParamsUpTo(INSTANCE_TYPE_MAX_PAGE_SIZE),
}).transform((p) => ({
  names: [...new Set(p.InstanceType ?? [])],
  filters: p.Filter ?? [],
  availability: p.Availability ?? false,
  paging: pagingInputOf(p),
}));

export type DescribeInstanceTypesInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeInstanceTypes(params: ParamMap): DescribeInstanceTypesInput {
  return parseActionParams(schema, params);
}

/** A token is good for the same names and filters; Availability changes what an item holds, not which items. */
function scopeOf(input: DescribeInstanceTypesInput): PageScope {
  return { action: ACTION, selection: selectionDigest({ names: [...input.names].sort(), filters: canonicalFilters(input.filters) }) };
}

interface Capacity {
  readonly byType: ReadonlyMap<string, readonly ZoneCapacity[]>;
  readonly unavailable: ReadonlyMap<string, FerryError>;
}

/** Every zone's free / max for `types`, as DescribeAvailabilityZones verbose asks for it; zones that do not answer are set aside. */
async function capacityOf(types: readonly VmType[], ctx: ActionContext): Promise<Capacity> {
  if (types.length === 0) return { byType: new Map(), unavailable: new Map() };
  const fan = await askPartitions(ctx.clusters, partitionNames(ctx.clusters), 'ccDescribeResources', { vmTypes: [...types] }, ctx.logger);
  const matrices = new Map([...fan.answers].map(([zone, answer]) => [zone, answer.matrix]));
  return { byType: capacityByType(types, matrices), unavailable: fan.unavailable };
}

async function run(input: DescribeInstanceTypesInput, ctx: ActionContext): Promise<XmlObject> {
  const now = ctx.clock.now();
  const state = ctx.store.read();
  const selected = selectInstanceTypes(state.vmTypes, input);
  if (!selected.ok) {
    throw ClcErrors.make('InvalidInstanceType', { types: selected.unknown.map(showKey).join(', '), known: state.vmTypes.map((t) => t.name).join(', ') });
  }
  const scope = scopeOf(input);
  const cursor = cursorOf(state, scope, INSTANCE_TYPE_PAGE_ORDER, input.paging, now);
  const page = await servePage(ctx.store, scope, INSTANCE_TYPE_PAGE_ORDER, selected.types, cursor, input.paging, now);
  const capacity = input.availability ? await capacityOf(page.items, ctx) : undefined;
  return {
    instanceTypeDetails: page.items.map((t) => vmTypeDetailsItem(t, capacity?.byType.get(t.name))),
    instanceTypeSet: page.items.map(instanceTypeInfoItem),
    nextToken: page.nextToken,
    unavailablePartitionSet: unavailableItems(capacity?.unavailable ?? new Map()),
  };
}

export const describeInstanceTypes = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseDescribeInstanceTypes, run });
