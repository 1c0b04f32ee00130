/**
 * DescribeAvailabilityZones: one item per partition; with `verbose` among the zone names, each
 * answering zone is followed by Eucalyptus's resource-matrix rows (`|- m1.small  0040 / 0040 ...`).
 * EC2's other parameters work as the SDKs send them: `ZoneId.N` (a Eucalyptus zone's id is its
 * name), `AllAvailabilityZones` (every zone is always listed: none needs opting in) and `Filter.N`.
 */
import { z } from 'zod';
import type { FerryError } from '../../../shared/errors/registry.js';
import { partitionNames } from '../../clusters/clusters.js';
import { askPartitions } from '../../clusters/fanOut.js';
import { filterPredicate } from '../../core/instanceFilters.js';
import { requireZone } from '../../core/zones.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, filterListParam, paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { verboseZoneItems } from '../render/matrixItems.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';

export const VERBOSE = 'verbose';
export const REGION_NAME = 'eucalyptus';

/** What a zone offers the filters, as EC2 names them. */
interface ZoneFacts {
  readonly name: string;
  readonly state: 'available' | 'unavailable';
  readonly messages: readonly string[];
}

const ZONE_FILTERS = Object.freeze({
  'zone-name': (z: ZoneFacts) => [z.name],
  'zone-id': (z: ZoneFacts) => [z.name],
  'state': (z: ZoneFacts) => [z.state],
  'message': (z: ZoneFacts) => z.messages,
  'region-name': () => [REGION_NAME],
  'zone-type': () => ['availability-zone'],
  'opt-in-status': () => ['opt-in-not-required'],
  'group-name': () => [REGION_NAME],
} satisfies Record<string, (z: ZoneFacts) => readonly string[]>);
type ZoneFilterName = keyof typeof ZONE_FILTERS;
const ZONE_FILTER_NAMES = Object.keys(ZONE_FILTERS) as ZoneFilterName[];
const isZoneFilterName = (n: string): n is ZoneFilterName => (ZONE_FILTER_NAMES as string[]).includes(n);

const schema = z.strictObject({
  ZoneName: paramList(z.string()).optional(),
  ZoneId: paramList(z.string()).optional(),
  AllAvailabilityZones: boolParam.optional(),
  Filter: filterListParam(isZoneFilterName, ZONE_FILTER_NAMES.join(', ')).optional(),
}).transform((p) => {
  const names = [...(p.ZoneName ?? []), ...(p.ZoneId ?? [])];
  const isVerbose = (n: string) => n.toLowerCase() === VERBOSE;
  return { verbose: names.some(isVerbose), zones: [...new Set(names.filter((n) => !isVerbose(n)))], filters: p.Filter ?? [] };
});

export type DescribeAvailabilityZonesInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeAvailabilityZones(params: ParamMap): DescribeAvailabilityZonesInput {
  return parseActionParams(schema, params);
}

function zoneItem(z: ZoneFacts): XmlObject {
  return {
    zoneName: z.name,
    zoneState: z.state,
    regionName: REGION_NAME,
    messageSet: z.messages.map((message) => ({ message })),
    // Newer SDKs read these; a Eucalyptus zone is a plain availability zone, always opted in.
    zoneId: z.name,
    zoneType: 'availability-zone',
    optInStatus: 'opt-in-not-required',
    groupName: REGION_NAME,
    networkBorderGroup: REGION_NAME,
  };
}

function factsOf(name: string, failure: FerryError | undefined): ZoneFacts {
  return { name, state: failure ? 'unavailable' : 'available', messages: failure ? [failure.message] : [] };
}

async function run(input: DescribeAvailabilityZonesInput, ctx: ActionContext): Promise<XmlObject> {
  for (const z of input.zones) requireZone(ctx.clusters, z);
  const wanted = partitionNames(ctx.clusters).filter((p) => input.zones.length === 0 || input.zones.includes(p));
  const fan = await askPartitions(ctx.clusters, wanted, 'ccDescribeResources', { vmTypes: ctx.store.read().vmTypes }, ctx.logger);
  const shown = filterPredicate<ZoneFacts>(input.filters.map((f) => ({ offered: ZONE_FILTERS[f.name], values: f.values })));
  const items: XmlObject[] = [];
  for (const p of wanted) {
    const facts = factsOf(p, fan.unavailable.get(p));
    if (!shown(facts)) continue;
    items.push(zoneItem(facts));
    const answer = fan.answers.get(p);
    if (input.verbose && answer) items.push(...verboseZoneItems(answer.matrix));
  }
  return { availabilityZoneInfo: items };
}

export const describeAvailabilityZones = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseDescribeAvailabilityZones, run });
