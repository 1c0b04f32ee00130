/**
 * PauseInstances / UnpauseInstances (issue 18 part 6; Ferry extensions, admin-only: EC2 has no
 * pause): freeze or thaw running instances in place (the hypervisor suspends the domain; libvirt's
 * virDomainSuspend). Like TerminateInstances it changes a node's guest, so it is a change in the
 * partition gate (clc/core/gate.ts): it waits behind a pending DisableService or MigrateInstances.
 * Every id is checked before anything is done, and one refusal refuses the whole request: unknown
 * (InvalidInstanceID.NotFound), migrating (OperationNotPermitted), not running or on a host host HA
 * fences (IncorrectInstanceState). A disabled or quarantined node's instance can be paused (freezing a
 * suspect guest is the point). Idempotent: pausing a paused instance answers it as is. The instance
 * stays `running` in instanceState; the answer and DescribeInstances carry `paused`.
 */
import { z } from 'zod';
import type { ClcCcResponse } from '../../clusters/ccContract.js';
import { askPartitions } from '../../clusters/fanOut.js';
import { dedupe, requireInstances } from '../../core/instanceLookup.js';
import { liveInstances, mergeInstances } from '../../core/instanceView.js';
import { instanceRefusal } from '../../core/volumeRules.js';
import { defineAction, type ActionContext } from '../action.js';
import { instanceIdParam, paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { instanceStateXml } from '../render/instanceItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { changeLabel, claimedPartitions } from './instanceChanges.js';
import { refuseMigrating } from './migrationGuard.js';

const schema = z.strictObject({
  InstanceId: paramList(instanceIdParam).min(1),
}).transform((p) => ({ instanceIds: dedupe(p.InstanceId) }));

export type PauseInstancesInput = Readonly<z.infer<typeof schema>>;

export function parsePauseInstances(params: ParamMap): PauseInstancesInput {
  return parseActionParams(schema, params);
}

function actionName(paused: boolean): string {
  return paused ? 'PauseInstances' : 'UnpauseInstances';
}

function fencedHosts(ctx: ActionContext): ReadonlySet<string> {
  return ctx.haHooks?.fencedHosts() ?? new Set();
}

async function pauseOrResume(paused: boolean, input: PauseInstancesInput, ctx: ActionContext): Promise<XmlObject> {
  const action = actionName(paused);
  const partitions = claimedPartitions(ctx, input.instanceIds);
  await ctx.gate.enter('change', changeLabel(actionName(paused), input.instanceIds), partitions).ready();
  const fan = await askPartitions(ctx.clusters, partitions, 'ccDescribeInstances', {}, ctx.logger);
  const { live, incomplete } = liveInstances(fan.answers);
  const views = requireInstances(input.instanceIds, mergeInstances(ctx.store.read().instances, live, incomplete), fan.unavailable);
  await refuseMigrating(ctx, action, views);
  const fenced = fencedHosts(ctx);
  for (const v of views) {
    const why = instanceRefusal(v, fenced, action);
    if (why) throw why;
  }
  // One at a time: a refusal half-way leaves the earlier ones done and says which failed.
  const answers: ClcCcResponse<'ccPauseInstance'>[] = [];
  for (const v of views) answers.push(await ctx.clusters.call(v.partition, 'ccPauseInstance', { instanceId: v.instanceId, paused }));
  ctx.logger.warn({ instanceIds: input.instanceIds, paused }, paused ? 'instances paused by an administrator' : 'instances unpaused by an administrator');
  return {
    instancesSet: answers.map((a) => ({
      instanceId: a.instanceId,
      currentState: instanceStateXml(a.state),
      previousState: instanceStateXml(a.state),
      paused: a.paused,
      previouslyPaused: a.previouslyPaused,
      nodeHost: a.host,
    })),
  };
}

export const pauseInstances = defineAction({ namespace: EUCA_NAMESPACE, parse: parsePauseInstances, run: (input, ctx) => pauseOrResume(true, input, ctx) });
export const unpauseInstances = defineAction({ namespace: EUCA_NAMESPACE, parse: parsePauseInstances, run: (input, ctx) => pauseOrResume(false, input, ctx) });
