/**
 * DescribeRegions (EC2): the one region of a Eucalyptus-style cloud, `eucalyptus`, whose endpoint is
 * this CLC's EC2 path, as Eucalyptus 4 answered with its compute service's URL. The SDKs, the aws CLI
 * and euca2ools call it to find endpoints. Filters `endpoint` and `region-name` (EC2's); a named
 * region that does not exist is InvalidParameterValue, as EC2 answers.
 */
import { z } from 'zod';
import { filterPredicate } from '../../core/instanceFilters.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, coded, filterListParam, paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { REGION_NAME } from './describeAvailabilityZones.js';

/** The path euca2ools' `ec2-url` names; every admin-API path serves EC2 (clc/api/app.ts). */
export const REGION_ENDPOINT_PATH = '/services/compute';

interface Region {
  readonly regionName: string;
  readonly regionEndpoint: string;
}

const REGION_FILTERS = Object.freeze({
  'region-name': (r: Region) => [r.regionName],
  'endpoint': (r: Region) => [r.regionEndpoint],
  // Newer SDKs ask for it; a Eucalyptus region needs no opt-in.
  'opt-in-status': () => ['opt-in-not-required'],
} satisfies Record<string, (r: Region) => readonly string[]>);
type RegionFilterName = keyof typeof REGION_FILTERS;
const REGION_FILTER_NAMES = Object.keys(REGION_FILTERS) as RegionFilterName[];
const isRegionFilterName = (n: string): n is RegionFilterName => (REGION_FILTER_NAMES as string[]).includes(n);

const schema = z.strictObject({
  RegionName: paramList(z.string().min(1)).optional(),
  Filter: filterListParam(isRegionFilterName, REGION_FILTER_NAMES.join(', ')).optional(),
  // Newer SDKs send it to list regions not enabled for the account; there is only one, always enabled.
  AllRegions: boolParam.optional(),
}).transform((p) => ({ regionNames: [...new Set(p.RegionName ?? [])], filters: p.Filter ?? [] }))
  .refine((p) => p.regionNames.every((n) => n === REGION_NAME), {
    path: ['RegionName'],
    ...coded('InvalidParameterValue', `this cloud has one region, ${REGION_NAME}`),
  });

export type DescribeRegionsInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeRegions(params: ParamMap): DescribeRegionsInput {
  return parseActionParams(schema, params);
}

function run(input: DescribeRegionsInput, ctx: ActionContext): Promise<XmlObject> {
  const region: Region = { regionName: REGION_NAME, regionEndpoint: `${ctx.origin}${REGION_ENDPOINT_PATH}` };
  const shown = [region].filter(filterPredicate(input.filters.map((f) => ({ offered: REGION_FILTERS[f.name], values: f.values }))));
  return Promise.resolve({
    regionInfo: shown.map((r) => ({ regionName: r.regionName, regionEndpoint: r.regionEndpoint, optInStatus: 'opt-in-not-required' })),
  });
}

export const describeRegions = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseDescribeRegions, run });
