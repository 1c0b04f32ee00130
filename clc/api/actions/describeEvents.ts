/**
 * DescribeEvents (issue 20): the CLC's event stream, oldest first: migrations (planned, item changes,
 * outcomes, cancels), maintenance changes, the change gate's waits and host HA's transitions and
 * fences. Filters: StartTime/EndTime (ISO 8601 UTC, inclusive), Host (the event's host or a
 * migration item's destination), InstanceId, MigrationId, Kind.N; MaxResults/NextToken paging;
 * AfterSeq, a follower's cursor, with WaitSeconds for a long poll. A read: never gated.
 */
import { z } from 'zod';
import { hostSchema } from '../../../shared/protocol/common.js';
import { ClcErrors } from '../../core/errors.js';
import { isFerryError } from '../../../shared/errors/registry.js';
import { selectionDigest, type PageOrder, type PageScope } from '../../core/paging.js';
import { lastSeqOf, type EventFilter } from '../../events/eventLog.js';
import { eventKindSchema, type EventRecord } from '../../events/eventRecord.js';
import type { EventStream } from '../../events/eventStream.js';
import { defineAction, type ActionContext } from '../action.js';
import { coded, instanceIdParam, intParam, migrationIdParam, paramList, parseActionParams } from '../actionParams.js';
import { cursorOf, pagingInputOf, pagingParams, servePage } from '../paging.js';
import type { ParamMap } from '../queryParams.js';
import { iso } from '../render/haItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { timeParam } from './haCommon.js';

const ACTION = 'DescribeEvents';

const schema = z.strictObject({
  StartTime: timeParam.optional(),
  EndTime: timeParam.optional(),
  Host: hostSchema.optional(),
  InstanceId: instanceIdParam.optional(),
  MigrationId: migrationIdParam.optional(),
  Kind: paramList(eventKindSchema).optional(),
  AfterSeq: intParam(0, 999_999_999).optional(),
  /** Long poll: with nothing to return, wait up to this long for a matching event. */
  WaitSeconds: intParam(0, 20).optional(),
  ...pagingParams,
})
  .refine((p) => p.StartTime === undefined || p.EndTime === undefined || p.StartTime <= p.EndTime, {
    path: ['EndTime'], ...coded('InvalidParameterCombination', 'EndTime is before StartTime'),
  })
  .transform((p) => ({
    filter: {
      ...(p.StartTime !== undefined ? { startTime: p.StartTime } : {}),
      ...(p.EndTime !== undefined ? { endTime: p.EndTime } : {}),
      ...(p.Host !== undefined ? { host: p.Host } : {}),
      ...(p.InstanceId !== undefined ? { instanceId: p.InstanceId } : {}),
      ...(p.MigrationId !== undefined ? { migrationId: p.MigrationId } : {}),
      ...(p.Kind !== undefined ? { kinds: [...new Set(p.Kind)].sort() } : {}),
      ...(p.AfterSeq !== undefined ? { afterSeq: p.AfterSeq } : {}),
    } satisfies EventFilter as EventFilter,
    waitMs: (p.WaitSeconds ?? 0) * 1000,
    paging: pagingInputOf(p),
  }));

export type DescribeEventsInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeEvents(params: ParamMap): DescribeEventsInput {
  return parseActionParams(schema, params);
}

/** Seq order; a cursor is one seq. */
export const EVENT_PAGE_ORDER: PageOrder<EventRecord, number> = Object.freeze({
  keyOf: (e: EventRecord) => e.seq,
  compare: (a: number, b: number) => a - b,
  writeKey: (k: number) => [k],
  readKey: (json: unknown) => {
    const r = z.tuple([z.number().int().min(0)]).safeParse(json);
    return r.success ? r.data[0] : undefined;
  },
});

export function eventItem(e: EventRecord): XmlObject {
  return {
    eventSeq: e.seq, timestamp: iso(e.time), kind: e.kind, host: e.host, instanceId: e.instanceId, migrationId: e.migrationId,
    partition: e.partition, actor: e.actor, message: e.message,
    detailSet: Object.entries(e.details).map(([key, value]) => ({ key, value })),
  };
}

function requireEvents(ctx: ActionContext): EventStream {
  if (!ctx.events) throw ClcErrors.make('ServiceUnavailable', { detail: 'the event stream is not set up in this CLC' });
  return ctx.events;
}

async function run(input: DescribeEventsInput, ctx: ActionContext): Promise<XmlObject> {
  const stream = requireEvents(ctx);
  const now = ctx.clock.now();
  const scope: PageScope = { action: ACTION, selection: selectionDigest(input.filter) };
  const cursor = cursorOf(ctx.store.read(), scope, EVENT_PAGE_ORDER, input.paging, now);
  const last = lastSeqOf(stream.state());
  const after = input.filter.afterSeq;
  if (after !== undefined && after > last) throw ClcErrors.make('InvalidEventCursor', { after: String(after), last: String(last) });
  // HA's newest log entries first, so a read right after an HA change shows it.
  // A follower replica may not write (issue 21): the leader's event watcher copies them instead.
  await stream.copyHaEvents(() => ctx.store.read().ha.events).catch((e: unknown) => {
    if (!(isFerryError(e) && e.code === 'StoreNotLeader')) throw e;
  });
  const selected = input.waitMs > 0 && cursor === undefined ? await stream.waitFor(input.filter, input.waitMs) : stream.select(input.filter);
  const page = await servePage(ctx.store, scope, EVENT_PAGE_ORDER, selected, cursor, input.paging, now);
  return { eventSet: page.items.map(eventItem), lastSeq: lastSeqOf(stream.state()), nextToken: page.nextToken };
}

export const describeEvents = defineAction({ namespace: EUCA_NAMESPACE, parse: parseDescribeEvents, run });
