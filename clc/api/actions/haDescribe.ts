/**
 * The host-HA reads: ListHostHAConfigurations (global and per-partition settings, per-host BMC
 * views and switches, suspensions), DescribeHostHA (per host: state, counters, next checks, what
 * holds it, whether it needs an operator, its last events; with `DryRun=true` what HA would do now)
 * and DescribeHAEvents (the event log, filtered by Host, Level and Since). Never gated.
 */
import { z } from 'zod';
import { hostSchema, partitionSchema } from '../../../shared/protocol/common.js';
import { dedupe } from '../../core/instanceLookup.js';
import { requireZone } from '../../core/zones.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, intParam, paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { configurationsXml, haEventItem, hostHaItem } from '../render/haItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { requireHa, timeParam } from './haCommon.js';

const listSchema = z.strictObject({});

export const listHostHAConfigurations = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: (params: ParamMap) => parseActionParams(listSchema, params),
  run: (_p: unknown, ctx: ActionContext): Promise<XmlObject> => Promise.resolve(configurationsXml(requireHa(ctx).configurations())),
});

const describeSchema = z.strictObject({
  Host: paramList(hostSchema).optional(),
  Partition: partitionSchema.optional(),
  DryRun: boolParam.optional(),
  MaxEvents: intParam(0, 100).optional(),
}).transform((p) => ({ hosts: dedupe(p.Host ?? []), partition: p.Partition, dryRun: p.DryRun ?? false, events: p.MaxEvents }));

type DescribeInput = Readonly<z.infer<typeof describeSchema>>;

export function parseDescribeHostHA(params: ParamMap): DescribeInput {
  return parseActionParams(describeSchema, params);
}

export const describeHostHA = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: parseDescribeHostHA,
  run(p: DescribeInput, ctx: ActionContext): Promise<XmlObject> {
    const ha = requireHa(ctx);
    if (p.partition !== undefined) requireZone(ctx.clusters, p.partition);
    const views = ha.describeHosts({
      hosts: p.hosts, dryRun: p.dryRun,
      ...(p.partition !== undefined ? { partition: p.partition } : {}),
      ...(p.events !== undefined ? { events: p.events } : {}),
    });
    return Promise.resolve({ hostSet: views.map(hostHaItem) });
  },
});

const eventsSchema = z.strictObject({
  Host: z.string().min(1).max(80).regex(/^(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|global|(partition|cluster):[A-Za-z0-9][A-Za-z0-9_-]{0,63})$/,
    'expected a host address, global, or partition:NAME').optional(),
  Level: z.enum(['info', 'warn', 'critical']).optional(),
  Since: timeParam.optional(),
  MaxResults: intParam(1, 1000).optional(),
  /** A cursor: only events with a larger eventId (oldest first, MaxResults of them). */
  After: intParam(0, 999_999_999).optional(),
  /** Long poll: with nothing to return, wait up to this long for a matching event. */
  WaitSeconds: intParam(0, 20).optional(),
});

type EventsInput = Readonly<z.infer<typeof eventsSchema>>;

export function parseDescribeHAEvents(params: ParamMap): EventsInput {
  return parseActionParams(eventsSchema, params);
}

export const describeHAEvents = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: parseDescribeHAEvents,
  async run(p: EventsInput, ctx: ActionContext): Promise<XmlObject> {
    const events = await requireHa(ctx).waitEvents({
      ...(p.Host !== undefined ? { host: p.Host } : {}),
      ...(p.Level !== undefined ? { level: p.Level } : {}),
      ...(p.Since !== undefined ? { since: p.Since } : {}),
      ...(p.MaxResults !== undefined ? { limit: p.MaxResults } : {}),
      ...(p.After !== undefined ? { after: p.After } : {}),
    }, (p.WaitSeconds ?? 0) * 1000);
    return { eventSet: events.map(haEventItem) };
  },
});
