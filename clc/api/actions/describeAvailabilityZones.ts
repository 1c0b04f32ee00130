/**
 * DescribeAvailabilityZones: one item per partition; with `verbose` among the zone names, each
 * answering zone is followed by Eucalyptus's resource-matrix rows (`|- m1.small  0040 / 0040 ...`).
 */
import { z } from 'zod';
import { partitionNames } from '../../clusters/clusters.js';
import { askPartitions } from '../../clusters/fanOut.js';
import { defineAction, type ActionContext } from '../action.js';
import { paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { verboseZoneItems } from '../render/matrixItems.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { requireZone } from './zones.js';

export const VERBOSE = 'verbose';
export const REGION_NAME = 'eucalyptus';

const schema = z.strictObject({
  ZoneName: paramList(z.string()).optional(),
}).transform((p) => {
  const names = p.ZoneName ?? [];
  const isVerbose = (n: string) => n.toLowerCase() === VERBOSE;
  return { verbose: names.some(isVerbose), zones: [...new Set(names.filter((n) => !isVerbose(n)))] };
});

export type DescribeAvailabilityZonesInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeAvailabilityZones(params: ParamMap): DescribeAvailabilityZonesInput {
  return parseActionParams(schema, params);
}

async function run(input: DescribeAvailabilityZonesInput, ctx: ActionContext): Promise<XmlObject> {
  for (const z of input.zones) requireZone(ctx.clusters, z);
  const wanted = partitionNames(ctx.clusters).filter((p) => input.zones.length === 0 || input.zones.includes(p));
  const fan = await askPartitions(ctx.clusters, wanted, 'ccDescribeResources', { vmTypes: ctx.store.read().vmTypes }, ctx.logger);
  const items: XmlObject[] = [];
  for (const p of wanted) {
    const answer = fan.answers.get(p);
    const failure = fan.unavailable.get(p);
    items.push({
      zoneName: p,
      zoneState: answer ? 'available' : 'unavailable',
      regionName: REGION_NAME,
      messageSet: failure ? [{ message: failure.message }] : [],
    });
    if (input.verbose && answer) items.push(...verboseZoneItems(answer.matrix));
  }
  return { availabilityZoneInfo: items };
}

export const describeAvailabilityZones = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseDescribeAvailabilityZones, run });
