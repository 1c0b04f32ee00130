/**
 * TerminateInstances: every id is resolved first (unknown or unavailable ids fail the whole
 * request before anything is terminated), then each partition's CC terminates its share.
 * A change (clc/core/gate.ts) in the partitions of its instances; an instance that is migrating
 * refuses the whole request (OperationNotPermitted).
 */
import { z } from 'zod';
import type { InstanceState } from '../../../shared/protocol/common.js';
import type { ClcCcResponse } from '../../clusters/ccContract.js';
import { askPartitions } from '../../clusters/fanOut.js';
import { dedupe, requireInstances } from '../../core/instanceLookup.js';
import { liveInstances, mergeInstances } from '../../core/instanceView.js';
import { releaseVolumesOf } from '../../core/volumeOps.js';
import { defineAction, type ActionContext } from '../action.js';
import { instanceIdParam, paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { instanceStateXml } from '../render/instanceItems.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { changeLabel, claimedPartitions } from './instanceChanges.js';
import { refuseMigrating } from './migrationGuard.js';

const schema = z.strictObject({
  InstanceId: paramList(instanceIdParam).min(1),
}).transform((p) => ({ instanceIds: dedupe(p.InstanceId) }));

export type TerminateInstancesInput = Readonly<z.infer<typeof schema>>;

export function parseTerminateInstances(params: ParamMap): TerminateInstancesInput {
  return parseActionParams(schema, params);
}

interface Change { readonly previousState: InstanceState; readonly currentState: InstanceState }



/** Remembers the terminations (host HA must not bring these back); the reply does not depend on it. */
async function markTerminated(ctx: ActionContext, ids: readonly string[]): Promise<void> {
  const now = ctx.clock.now();
  try {
    await ctx.store.update((d) => {
      for (const id of ids) {
        const r = d.instances[id];
        if (r && r.terminatedAt === undefined) r.terminatedAt = now;
      }
      // EC2 detaches a terminated instance's volumes; they outlive it, available again.
      releaseVolumesOf(d, new Set(ids));
    });
  } catch (e) {
    ctx.logger.error({ err: e, instanceIds: ids }, 'could not record terminations; host HA may see these instances as live');
  }
}

async function run(input: TerminateInstancesInput, ctx: ActionContext): Promise<XmlObject> {
  const partitions = claimedPartitions(ctx, input.instanceIds);
  await ctx.gate.enter('change', changeLabel('TerminateInstances', input.instanceIds), partitions).ready();
  const fan = await askPartitions(ctx.clusters, partitions, 'ccDescribeInstances', {}, ctx.logger);
  const { live, incomplete } = liveInstances(fan.answers);
  const views = requireInstances(input.instanceIds, mergeInstances(ctx.store.read().instances, live, incomplete), fan.unavailable);
  await refuseMigrating(ctx, 'TerminateInstances', views);

  const changes = new Map<string, Change>();
  const byPartition = new Map<string, string[]>();
  for (const v of views) {
    // No node reports it any more: it is already gone, and saying so again is EC2's idempotent answer.
    if (!v.reported) changes.set(v.instanceId, { previousState: 'terminated', currentState: 'terminated' });
    else byPartition.set(v.partition, [...(byPartition.get(v.partition) ?? []), v.instanceId]);
  }
  const calls = [...byPartition].map(([p, instanceIds]) => ctx.clusters.call(p, 'ccTerminateInstances', { instanceIds }));
  const settled = await Promise.allSettled(calls);
  for (const s of settled) {
    if (s.status === 'rejected') throw s.reason;
    for (const c of (s.value as ClcCcResponse<'ccTerminateInstances'>).instances) changes.set(c.instanceId, c);
  }
  await markTerminated(ctx, [...changes.keys()]);
  const stateOf = new Map(views.map((v) => [v.instanceId, v.state]));
  return {
    instancesSet: input.instanceIds.map((id) => {
      // A CC that leaves an id out of its answer changed nothing we can vouch for: report it as seen.
      const seen = stateOf.get(id) as InstanceState;
      const c = changes.get(id) ?? { previousState: seen, currentState: seen };
      return { instanceId: id, currentState: instanceStateXml(c.currentState), previousState: instanceStateXml(c.previousState) };
    }),
  };
}

export const terminateInstances = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseTerminateInstances, run });
