/**
 * DescribeServices (Eucalyptus 4's request and response): the CLC itself, one `cluster` service per
 * partition and one `node` service per node, each ENABLED, DISABLED or NOTREADY; replicated CLCs and
 * CCs (issue 21) show their leader under the service's name and each standby beside it
 * (render/replicaServices.ts). Narrowed by
 * ByServiceType, ByPartition, ByHost, ByState, ServiceName.N and Filter.N (clc/core/serviceFilters.ts).
 * Every service is listed by default, so ListAll, ListInternal and ListUserServices change nothing.
 */
import { z } from 'zod';
import { partitionNames } from '../../clusters/clusters.js';
import { askPartitions, type FanOut } from '../../clusters/fanOut.js';
import type { CcResponse } from '../../../shared/protocol/ccProtocol.js';
import {
  invalidFilterValue, isServiceFilterName, SERVICE_FILTER_NAMES, serviceFilterPredicate,
} from '../../core/serviceFilters.js';
import {
  EUCA_STATES, isEucaState, SERVICE_TYPES, serviceFullName,
  type EucaState, type ServiceType,
} from '../../core/services.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, coded, filterListParam, paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { clcReplicaStatuses, clusterReplicaStatuses } from '../render/replicaServices.js';
import { clusterServiceStatus, nodeServiceStatus, serviceStatusItem, type ServiceStatus } from '../render/serviceItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { requireZone } from '../../core/zones.js';

/** Where the CLC serves its API under its origin: app.ts's CLC_PATH (test/clc/services.test.ts keeps them equal). */
export const CLC_SERVICE_PATH = '/services/Eucalyptus';

export const serviceTypeParam = z.string()
  .transform((s) => s.toLowerCase())
  .refine((s): s is ServiceType => (SERVICE_TYPES as readonly string[]).includes(s),
    coded('InvalidServiceType', 'unknown service type', { expected: SERVICE_TYPES.join(', ') }));

const stateParam = z.string()
  .transform((s) => s.toUpperCase())
  .refine((s): s is EucaState => isEucaState(s), `expected a service state: ${EUCA_STATES.join(', ')}`);

const schema = z.strictObject({
  ByServiceType: serviceTypeParam.optional(),
  ByPartition: z.string().min(1).optional(),
  ByHost: z.string().min(1).optional(),
  ByState: stateParam.optional(),
  ServiceName: paramList(z.string()).optional(),
  Filter: filterListParam(isServiceFilterName, SERVICE_FILTER_NAMES.join(', '), invalidFilterValue).optional(),
  // Eucalyptus lists only some services without these; Ferry always lists them all.
  ListAll: boolParam.optional(),
  ListInternal: boolParam.optional(),
  ListUserServices: boolParam.optional(),
  ShowEvents: boolParam.optional(),
  // Eucalyptus adds Java stack traces to the events; Ferry has none to add, so it only implies ShowEvents.
  ShowEventStacks: boolParam.optional(),
}).transform((p) => ({
  type: p.ByServiceType as ServiceType | undefined,
  partition: p.ByPartition,
  host: p.ByHost,
  state: p.ByState as EucaState | undefined,
  names: p.ServiceName ?? [],
  filters: p.Filter ?? [],
  showEvents: p.ShowEvents === true || p.ShowEventStacks === true,
}));

export type DescribeServicesInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeServices(params: ParamMap): DescribeServicesInput {
  return parseActionParams(schema, params);
}

/** True for the services the request's By* parameters and ServiceName.N let through. */
function selected(input: DescribeServicesInput): (s: ServiceStatus) => boolean {
  const filters = serviceFilterPredicate(input.filters);
  return (s) => (input.type === undefined || s.type === input.type)
    && (input.host === undefined || s.host === input.host)
    && (input.state === undefined || s.state === input.state)
    && (input.names.length === 0 || input.names.some((n) => n === s.name || n === serviceFullName(s.partition, s.type, s.name)))
    && filters(s);
}

/** Whether each other CLC replica this one lists answers now; undefined without replicas or a probe. */
async function probeReplicas(ctx: ActionContext): Promise<ReadonlyMap<string, boolean> | undefined> {
  const probe = ctx.replicaProbe;
  const l = ctx.leadership;
  const replicas = l?.replicas?.();
  if (probe === undefined || l === undefined || replicas === undefined) return undefined;
  const leader = l.leaderUrl();
  const others = [...new Set([...replicas, ...(leader !== undefined ? [leader] : [])])].filter((u) => u !== l.self);
  return new Map(await Promise.all(others.map(async (u) => [u, await probe.answers(u)] as const)));
}

async function run(input: DescribeServicesInput, ctx: ActionContext): Promise<XmlObject> {
  const partitions = input.partition !== undefined ? [requireZone(ctx.clusters, input.partition)] : partitionNames(ctx.clusters);
  // A partition with CC replicas (issue 21): each is asked which it is and whether it leads (failures are answers, so this never rejects).
  const replicated = ctx.clusters.partitions.filter((p) => partitions.includes(p.name) && (p.endpoints?.length ?? 1) > 1 && input.type !== 'eucalyptus' && input.type !== 'node');
  // The other CLC replicas (issue 21) are asked whether they answer, alongside: a dead leader is not ENABLED.
  const answering = input.partition === undefined && input.type !== 'cluster' && input.type !== 'node' ? probeReplicas(ctx) : Promise.resolve(undefined);
  const asking = Promise.all(replicated.map(async (p) => [p.name, await ctx.clusters.describeReplicas?.(p.name)] as const));
  // Cluster and node states both come from ccDescribeNodes; only a question about the CLC skips it.
  const fan: FanOut<CcResponse<'ccDescribeNodes'>> = input.type === 'eucalyptus'
    ? { answers: new Map(), unavailable: new Map() }
    : await askPartitions(ctx.clusters, partitions, 'ccDescribeNodes', {}, ctx.logger);
  const replicaAnswers = new Map(await asking);

  // The CLC: ENABLED whenever it can answer; replicas on etcd name their leader, if it answers.
  const statuses: ServiceStatus[] = input.partition === undefined ? clcReplicaStatuses(ctx.origin, CLC_SERVICE_PATH, ctx.leadership, await answering) : [];
  for (const p of ctx.clusters.partitions) {
    if (!partitions.includes(p.name)) continue;
    const answers = replicaAnswers.get(p.name);
    if (answers !== undefined) statuses.push(...clusterReplicaStatuses(p.name, answers, fan.unavailable.get(p.name)));
    else statuses.push(clusterServiceStatus(p.name, p.endpoint, fan.unavailable.get(p.name)));
    for (const node of fan.answers.get(p.name)?.nodes ?? []) statuses.push(nodeServiceStatus(node));
  }
  const options = input.showEvents ? { events: { at: ctx.clock.now() } } : {};
  return { serviceStatuses: statuses.filter(selected(input)).map((s) => serviceStatusItem(s, options)) };
}

export const describeServices = defineAction({ namespace: EUCA_NAMESPACE, parse: parseDescribeServices, run });
