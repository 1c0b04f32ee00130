/**
 * DescribeServices (Eucalyptus): the CLC itself, one `cluster` service per partition and one `node`
 * service per node, each ENABLED, DISABLED or NOTREADY. Filters: ByServiceType, ByPartition,
 * ByHost, ByState.
 */
import { z } from 'zod';
import { partitionNames } from '../../clusters/clusters.js';
import { askPartitions, type FanOut } from '../../clusters/fanOut.js';
import type { CcResponse } from '../../../shared/protocol/ccProtocol.js';
import { SERVICE_STATES, SERVICE_TYPES, type ServiceState, type ServiceType } from '../../core/services.js';
import { defineAction, type ActionContext } from '../action.js';
import { coded, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { clusterServiceStatus, nodeServiceStatus, serviceStatusItem, type ServiceStatus } from '../render/serviceItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { requireZone } from './zones.js';

/** The service name the CLC reports for itself. */
export const CLC_SERVICE_NAME = 'clc';

export const serviceTypeParam = z.string()
  .transform((s) => s.toLowerCase())
  .refine((s): s is ServiceType => (SERVICE_TYPES as readonly string[]).includes(s),
    coded('InvalidServiceType', 'unknown service type', { expected: SERVICE_TYPES.join(', ') }));

const schema = z.strictObject({
  ByServiceType: serviceTypeParam.optional(),
  ByPartition: z.string().min(1).optional(),
  ByHost: z.string().min(1).optional(),
  ByState: z.string()
    .transform((s) => s.toUpperCase())
    .refine((s): s is ServiceState => (SERVICE_STATES as readonly string[]).includes(s), `expected one of ${SERVICE_STATES.join(', ')}`)
    .optional(),
}).transform((p) => ({
  type: p.ByServiceType as ServiceType | undefined, partition: p.ByPartition, host: p.ByHost, state: p.ByState as ServiceState | undefined,
}));

export type DescribeServicesInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeServices(params: ParamMap): DescribeServicesInput {
  return parseActionParams(schema, params);
}

async function run(input: DescribeServicesInput, ctx: ActionContext): Promise<XmlObject> {
  const partitions = input.partition !== undefined ? [requireZone(ctx.clusters, input.partition)] : partitionNames(ctx.clusters);
  // Cluster and node states both come from ccDescribeNodes; only a question about the CLC skips it.
  const fan: FanOut<CcResponse<'ccDescribeNodes'>> = input.type === 'eucalyptus'
    ? { answers: new Map(), unavailable: new Map() }
    : await askPartitions(ctx.clusters, partitions, 'ccDescribeNodes', {}, ctx.logger);

  const statuses: ServiceStatus[] = [];
  if (input.partition === undefined) {
    statuses.push({ type: 'eucalyptus', partition: 'eucalyptus', name: CLC_SERVICE_NAME, state: 'ENABLED', details: [] });
  }
  for (const p of ctx.clusters.partitions) {
    if (!partitions.includes(p.name)) continue;
    statuses.push(clusterServiceStatus(p.name, p.endpoint, fan.unavailable.get(p.name)));
    for (const node of fan.answers.get(p.name)?.nodes ?? []) statuses.push(nodeServiceStatus(node));
  }
  const shown = statuses.filter((s) => (input.type === undefined || s.type === input.type)
    && (input.host === undefined || s.name === input.host)
    && (input.state === undefined || s.state === input.state));
  return { serviceStatuses: shown.map(serviceStatusItem) };
}

export const describeServices = defineAction({ namespace: EUCA_NAMESPACE, parse: parseDescribeServices, run });
