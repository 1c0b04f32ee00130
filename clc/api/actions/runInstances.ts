/**
 * RunInstances: pick (or check) a zone, record the instances durably, then ask that zone's CC.
 * Records are written before the CC call so nothing the admin is told about is lost to a CLC crash.
 * A change (clc/core/gate.ts): it enters the gate of every candidate zone on receipt and reads their
 * capacity only once granted, so a pending DisableService or drain is never raced.
 *
 * With a ClientToken (the AWS SDKs always send one) it is idempotent, as EC2 is (clc/core/runTokens.ts):
 * the token is written with the instance records, a repeat answers with the original reservation
 * and launches nothing, and requests carrying one token run one at a time (ctx.keyLocks).
 *
 * TagSpecification's instance tags are stored on the records (clc/core/userTags.ts) and bound to the token.
 */
import { z } from 'zod';
import type { FerryError } from '../../../shared/errors/registry.js';
import { newInstanceId, newReservationId } from '../../../shared/model/ids.js';
import type { VmType } from '../../../shared/model/vmTypes.js';
import { translateCcFailure } from '../../clusters/ccFaults.js';
import { partitionNames } from '../../clusters/clusters.js';
import { askPartitions } from '../../clusters/fanOut.js';
import { liveInstances, mergeInstances, viewOfCcInstance, viewOfRecord, type InstanceView } from '../../core/instanceView.js';
import { chooseZone, type ZoneCapacity } from '../../core/placement.js';
import {
  CLIENT_TOKEN_PATTERN, forgetExpiredRunTokens, judgeRunToken, runTokenKey, type RunRequest, type RunTokenRecord,
} from '../../core/runTokens.js';
import type { InstanceRecord } from '../../state/clcStore.js';
import { defineAction, type ActionContext } from '../action.js';
import { coded, intParam, parseActionParams } from '../actionParams.js';
import { ClcErrors } from '../../core/errors.js';
import { showKey } from '../../core/showKey.js';
import type { ParamMap } from '../queryParams.js';
import { instanceItem } from '../render/instanceItems.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { tagSpecificationsParam } from '../tagParams.js';
import { requireZone } from '../../core/zones.js';

/**
 * EC2's historical default was 20 per request; Eucalyptus had no fixed cap. 100 keeps one
 * request's store write and CC message small while covering any admin's batch.
 */
export const MAX_INSTANCES_PER_REQUEST = 100;
export const DEFAULT_INSTANCE_TYPE = 'm1.small';

const count = intParam(1, MAX_INSTANCES_PER_REQUEST);

const schema = z.strictObject({
  ImageId: z.string().refine((s) => /^emi-[0-9a-fA-F]{8}$/.test(s), coded('InvalidAMIID.Malformed', 'malformed image id')),
  InstanceType: z.string().min(1).default(DEFAULT_INSTANCE_TYPE),
  MinCount: count.optional(),
  MaxCount: count.optional(),
  Placement: z.strictObject({ AvailabilityZone: z.string().min(1).optional() }).optional(),
  ClientToken: z.string().refine((s) => CLIENT_TOKEN_PATTERN.test(s), 'expected 1 to 64 printable ASCII characters').optional(),
  TagSpecification: tagSpecificationsParam.optional(),
})
  // MaxCount defaults to MinCount, so `MinCount=3` alone asks for exactly three.
  .transform((p) => ({
    imageId: p.ImageId,
    instanceType: p.InstanceType,
    minCount: p.MinCount ?? 1,
    maxCount: p.MaxCount ?? p.MinCount ?? 1,
    zone: p.Placement?.AvailabilityZone,
    clientToken: p.ClientToken,
    /** The instances' user tags, in key order. */
    tags: p.TagSpecification ?? [],
  }))
  .refine((p) => p.minCount <= p.maxCount, {
    path: ['MinCount'],
    ...coded('InvalidParameterCombination', 'MinCount must not be greater than MaxCount'),
  });

export type RunInstancesInput = Readonly<z.infer<typeof schema>>;

export function parseRunInstances(params: ParamMap): RunInstancesInput {
  return parseActionParams(schema, params);
}

function resolveVmType(ctx: ActionContext, name: string): VmType {
  const types = ctx.store.read().vmTypes;
  const t = types.find((x) => x.name === name);
  if (!t) {
    throw ClcErrors.make('InvalidParameterValue', {
      parameter: 'InstanceType', value: showKey(name), detail: `Known types: ${types.map((x) => x.name).join(', ')}`,
    });
  }
  return t;
}

/** Asks the candidate zones what fits now and picks one; nothing is written before this answers. */
async function pickZone(ctx: ActionContext, input: RunInstancesInput, vmType: VmType, candidates: readonly string[]): Promise<string> {
  const fan = await askPartitions(ctx.clusters, candidates, 'ccDescribeResources', { vmTypes: [vmType] }, ctx.logger);
  const zones: ZoneCapacity[] = [...fan.answers].map(([partition, r]) => ({
    partition, available: r.matrix.find((m) => m.vmType === vmType.name)?.available ?? 0,
  }));
  const zone = chooseZone(zones, input.minCount);
  if (zone !== undefined) return zone;
  if (zones.length === 0) {
    const first = fan.unavailable.values().next().value as FerryError | undefined;
    if (candidates.length === 1 && first) throw first;
    throw ClcErrors.make('ServiceUnavailable', {
      delivered: 'no', detail: `no partition answered: ${[...fan.unavailable.values()].map((e) => e.message).join('; ')}`,
    });
  }
  const most = Math.max(...zones.map((z) => z.available));
  const down = [...fan.unavailable.keys()];
  throw ClcErrors.make('InsufficientInstanceCapacity', {
    minCount: input.minCount, vmType: vmType.name,
    scope: input.zone !== undefined ? `partition ${input.zone}` : 'any available partition',
    detail: `at most ${most} can start now${down.length > 0 ? ` (unavailable: ${down.join(', ')})` : ''}`,
  });
}

/** Fresh ids, unique among the records (a collision of 32 random bits is rare, not impossible). */
function allocateIds(ctx: ActionContext, n: number): { reservationId: string; instanceIds: string[] } {
  const known = ctx.store.read().instances;
  const reservationId = newReservationId(ctx.ids);
  const instanceIds: string[] = [];
  while (instanceIds.length < n) {
    const id = newInstanceId(ctx.ids);
    if (!(id in known) && !instanceIds.includes(id)) instanceIds.push(id);
  }
  return { reservationId, instanceIds };
}

/** Drops the records of a launch that did not happen, and its token, so the token can be retried. */
async function forget(ctx: ActionContext, ids: readonly string[], tokenKey: string | undefined): Promise<void> {
  try {
    await ctx.store.update((d) => {
      for (const id of ids) delete d.instances[id];
      if (tokenKey !== undefined) delete d.runTokens[tokenKey];
    });
  } catch (e) {
    ctx.logger.error({ err: e, instanceIds: ids }, 'could not drop the records of a launch that did not happen; they stay as requested');
  }
}

/** What a token is bound to: the request as asked (the zone as given, not the one chosen). */
function runRequestOf(input: RunInstancesInput): RunRequest {
  return {
    imageId: input.imageId, instanceType: input.instanceType, minCount: input.minCount, maxCount: input.maxCount,
    ...(input.zone !== undefined ? { zone: input.zone } : {}),
    ...(input.tags.length > 0 ? { tags: [...input.tags] } : {}),
  };
}

async function run(input: RunInstancesInput, ctx: ActionContext): Promise<XmlObject> {
  const token = input.clientToken;
  if (token === undefined) return launch(input, ctx);
  const key = runTokenKey(ctx.principal.accountId, token);
  return ctx.keyLocks.run(key, async () => {
    const verdict = judgeRunToken(ctx.store.read().runTokens[key], runRequestOf(input), ctx.clock.now());
    if (verdict.kind === 'mismatch') throw ClcErrors.make('IdempotentParameterMismatch', { token: showKey(token), detail: verdict.differences.join('; ') });
    if (verdict.kind === 'repeat') return repeatAnswer(verdict.record, ctx);
    return launch(input, ctx, key);
  });
}

/**
 * The answer to a repeated token: the original reservation as it stands now (a read, so no gate).
 * Instances the CC does not report yet are shown pending; those it stopped reporting, terminated.
 */
async function repeatAnswer(record: RunTokenRecord, ctx: ActionContext): Promise<XmlObject> {
  const fan = await askPartitions(ctx.clusters, [record.partition], 'ccDescribeInstances', {}, ctx.logger);
  const failure = fan.unavailable.get(record.partition);
  if (failure) throw failure;
  const { live, incomplete } = liveInstances(fan.answers);
  const merged = mergeInstances(ctx.store.read().instances, live, incomplete);
  const byId = new Map(merged.views.map((v) => [v.instanceId, v]));
  const records = ctx.store.read().instances;
  const views = record.instanceIds.flatMap((id): InstanceView[] => {
    const v = byId.get(id);
    if (v) return [v];
    const r = records[id];
    return r ? [{ ...viewOfRecord(r), state: r.phase === 'requested' || merged.unknown.has(id) ? 'pending' : 'terminated' }] : [];
  });
  ctx.logger.info({ reservationId: record.reservationId, clientToken: record.token }, 'RunInstances repeated with its client token: answered with the original reservation');
  return { reservationId: record.reservationId, ownerId: record.ownerId, groupSet: [], instancesSet: views.map(instanceItem) };
}

async function launch(input: RunInstancesInput, ctx: ActionContext, tokenKey?: string): Promise<XmlObject> {
  const vmType = resolveVmType(ctx, input.instanceType);
  const candidates = input.zone !== undefined ? [requireZone(ctx.clusters, input.zone)] : partitionNames(ctx.clusters);
  const ticket = ctx.gate.enter('change', `RunInstances of ${input.maxCount} ${vmType.name}`, candidates);
  await ticket.ready();
  const zone = await pickZone(ctx, input, vmType, candidates);
  ticket.narrow([zone]);
  const launchTime = ctx.clock.now();
  const ownerId = ctx.principal.accountId;
  const { reservationId, instanceIds } = allocateIds(ctx, input.maxCount);
  // The tags go in with the records, before the CC is asked: an instance is never visible untagged.
  const records: InstanceRecord[] = instanceIds.map((instanceId, launchIndex) => ({
    instanceId, reservationId, ownerId, imageId: input.imageId, vmType: vmType.name, partition: zone,
    launchTime, launchIndex, phase: 'requested', ...(input.clientToken !== undefined ? { clientToken: input.clientToken } : {}),
    ...(input.tags.length > 0 ? { userTags: [...input.tags] } : {}),
  }));
  await ctx.store.update((d) => {
    for (const r of records) d.instances[r.instanceId] = r;
    if (tokenKey !== undefined && input.clientToken !== undefined) {
      // The token is durable with the records it launched: a repeat after a CLC crash still finds it.
      forgetExpiredRunTokens(d.runTokens, launchTime);
      d.runTokens[tokenKey] = {
        token: input.clientToken, ownerId, request: runRequestOf(input), reservationId, partition: zone, instanceIds: [...instanceIds], createdAt: launchTime,
      };
    }
  });

  // Host HA's fenced hosts are avoided even if their NC came back enabled before HA disabled it again.
  const avoidHosts = [...(ctx.haHooks?.fencedHosts() ?? [])].sort();
  let started;
  try {
    started = await ctx.clusters.call(zone, 'ccRunInstances', {
      reservationId, imageId: input.imageId, ownerId, vmType: { ...vmType }, instanceIds, minCount: input.minCount, launchTime,
      ...(avoidHosts.length > 0 ? { avoidHosts } : {}),
    });
  } catch (e) {
    const err = translateCcFailure(e, zone, 'ccRunInstances');
    // The CC refused (all-or-nothing) or never got the request: nothing started. After a timeout
    // it may have: the records stay `requested` and appear once the CC reports the instances.
    if (err.fields.delivered === 'yes' || err.fields.delivered === 'no') await forget(ctx, instanceIds, tokenKey);
    throw err;
  }

  const startedIds = new Set(started.instances.map((i) => i.instanceId));
  try {
    await ctx.store.update((d) => {
      for (const id of instanceIds) {
        const r = d.instances[id];
        if (r && startedIds.has(id)) r.phase = 'launched';
        else delete d.instances[id];
      }
      const t = tokenKey !== undefined ? d.runTokens[tokenKey] : undefined;
      if (t) t.instanceIds = t.instanceIds.filter((id) => startedIds.has(id));
    });
  } catch (e) {
    // Safe to acknowledge anyway: the `requested` records are durable and the CC reports the instances.
    ctx.logger.error({ err: e, reservationId }, 'could not mark launched instances; their records stay as requested');
  }
  const recordOf = new Map(records.map((r) => [r.instanceId, r]));
  return {
    reservationId,
    ownerId,
    groupSet: [],
    instancesSet: started.instances.map((i) => instanceItem(viewOfCcInstance(i, recordOf.get(i.instanceId)))),
  };
}

export const runInstances = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseRunInstances, run });
