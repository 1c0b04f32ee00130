/**
 * StopInstances, StartInstances, RebootInstances (issue 18 part 5), as EC2 has them. Each is a
 * change in the partition gate (clc/core/gate.ts): it waits behind a pending DisableService or
 * MigrateInstances. Every id is checked before anything is done, and one refusal refuses the whole
 * request: unknown (InvalidInstanceID.NotFound), migrating (OperationNotPermitted, as
 * TerminateInstances), in the wrong state, paused by an administrator or on a host host HA fences
 * (IncorrectInstanceState); Hibernate=true (UnsupportedOperation). Then the instances are changed one
 * at a time: a refusal half-way leaves the earlier ones done and says which failed.
 *
 * Stop: answered once the instance's NC persisted the stop and its domain is off (currentState
 * `stopped`; EC2 answers `stopping` and gets there later). Force skips the guest's ACPI shutdown.
 * Start: on its own node when that node takes instances, otherwise re-homed on an enabled node with
 * room (cc/userStart.ts); the answer's `nodeHost` says where it runs. Reboot: `return=true`.
 * Idempotent: stopping a stopped, or starting a running, instance answers it as is.
 */
import { z } from 'zod';
import type { InstanceState } from '../../../shared/protocol/common.js';
import { askPartitions } from '../../clusters/fanOut.js';
import { ClcErrors } from '../../core/errors.js';
import { dedupe, requireInstances } from '../../core/instanceLookup.js';
import { liveInstances, mergeInstances, type InstanceView } from '../../core/instanceView.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, instanceIdParam, paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { instanceStateXml } from '../render/instanceItems.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { changeLabel, claimedPartitions } from './instanceChanges.js';
import { refuseMigrating } from './migrationGuard.js';

const stopSchema = z.strictObject({
  InstanceId: paramList(instanceIdParam).min(1),
  Force: boolParam.optional(),
  Hibernate: boolParam.optional(),
}).transform((p) => ({ instanceIds: dedupe(p.InstanceId), force: p.Force === true, hibernate: p.Hibernate === true }));

const startSchema = z.strictObject({
  InstanceId: paramList(instanceIdParam).min(1),
  // EC2 takes it and says it is reserved: accepted, unused.
  AdditionalInfo: z.string().optional(),
}).transform((p) => ({ instanceIds: dedupe(p.InstanceId) }));

const rebootSchema = z.strictObject({
  InstanceId: paramList(instanceIdParam).min(1),
}).transform((p) => ({ instanceIds: dedupe(p.InstanceId) }));

export type StopInstancesInput = Readonly<z.infer<typeof stopSchema>>;
export type StartInstancesInput = Readonly<z.infer<typeof startSchema>>;
export type RebootInstancesInput = Readonly<z.infer<typeof rebootSchema>>;

export function parseStopInstances(params: ParamMap): StopInstancesInput {
  const input = parseActionParams(stopSchema, params);
  if (input.hibernate) throw ClcErrors.make('UnsupportedOperation', { detail: 'Hibernation is not supported by this cloud: stop without Hibernate' });
  return input;
}

export function parseStartInstances(params: ParamMap): StartInstancesInput {
  return parseActionParams(startSchema, params);
}

export function parseRebootInstances(params: ParamMap): RebootInstancesInput {
  return parseActionParams(rebootSchema, params);
}

type PowerAction = 'StopInstances' | 'StartInstances' | 'RebootInstances';

/** The states each action accepts (the others are IncorrectInstanceState); a repeat is answered as is. */
const ACCEPTS: Readonly<Record<PowerAction, readonly InstanceState[]>> = {
  StopInstances: ['running', 'stopped'],
  StartInstances: ['stopped', 'running'],
  RebootInstances: ['running'],
};



/** Why `action` must refuse `v` (beyond migrating, checked for all first); undefined: go ahead. */
export function powerRefusal(action: PowerAction, v: InstanceView, fenced: ReadonlySet<string>): ReturnType<typeof ClcErrors.make> | undefined {
  if (!ACCEPTS[action].includes(v.state)) {
    return ClcErrors.make('IncorrectInstanceState', { instanceId: v.instanceId, state: v.state, detail: `${action} accepts only an instance that is ${ACCEPTS[action].join(' or ')}` });
  }
  if (v.paused === true) {
    return ClcErrors.make('IncorrectInstanceState', { instanceId: v.instanceId, state: 'paused by an administrator', detail: `${action} is refused until it is unpaused (UnpauseInstances)` });
  }
  // Host HA owns a fenced host's copies until it has settled them: no stop, start or reboot of one before.
  if (v.host !== undefined && fenced.has(v.host)) {
    return ClcErrors.make('IncorrectInstanceState', {
      instanceId: v.instanceId, state: `on host ${v.host}, which host HA is fencing or has fenced`, detail: `${action} is refused until host HA has settled it`,
    });
  }
  return undefined;
}

/** Resolves and checks every id (nothing changed yet); the views in the request's order. */
async function checked(action: PowerAction, ids: readonly string[], ctx: ActionContext): Promise<InstanceView[]> {
  const partitions = claimedPartitions(ctx, ids);
  await ctx.gate.enter('change', changeLabel(action, ids), partitions).ready();
  const fan = await askPartitions(ctx.clusters, partitions, 'ccDescribeInstances', {}, ctx.logger);
  const { live, incomplete } = liveInstances(fan.answers);
  const views = requireInstances(ids, mergeInstances(ctx.store.read().instances, live, incomplete), fan.unavailable);
  await refuseMigrating(ctx, action, views);
  const fenced = ctx.haHooks?.fencedHosts() ?? new Set<string>();
  for (const v of views) {
    const why = powerRefusal(action, v, fenced);
    if (why) throw why;
  }
  return views;
}

/** Marks (or unmarks) the user's stop in the CLC's records: host HA reads it (clc/ha/cloud/serviceActions.ts). */
async function markStopped(ctx: ActionContext, id: string, stopped: boolean): Promise<void> {
  const now = ctx.clock.now();
  await ctx.store.update((d) => {
    const r = d.instances[id];
    if (!r) return;
    if (stopped) r.stoppedAt ??= now;
    else delete r.stoppedAt;
  });
}

async function stop(input: StopInstancesInput, ctx: ActionContext): Promise<XmlObject> {
  const views = await checked('StopInstances', input.instanceIds, ctx);
  const items: XmlObject[] = [];
  for (const v of views) {
    const r = await ctx.clusters.call(v.partition, 'ccStopInstance', { instanceId: v.instanceId, force: input.force });
    // After the answer, as terminatedAt: the NC's own mark (userStopped) covers a CLC that dies in between.
    await markStopped(ctx, v.instanceId, true);
    items.push({ instanceId: r.instanceId, currentState: instanceStateXml(r.currentState), previousState: instanceStateXml(r.previousState) });
  }
  ctx.logger.info({ instanceIds: input.instanceIds, force: input.force }, 'instances stopped');
  return { instancesSet: items };
}

async function start(input: StartInstancesInput, ctx: ActionContext): Promise<XmlObject> {
  const views = await checked('StartInstances', input.instanceIds, ctx);
  // Never re-homed onto a host host HA fences (the CC avoids those it was told of; this names them again).
  const avoidHosts = [...(ctx.haHooks?.fencedHosts() ?? new Set<string>())];
  const items: XmlObject[] = [];
  for (const v of views) {
    // Before the start: a started instance is never one host HA leaves down for its user.
    await markStopped(ctx, v.instanceId, false);
    const r = await ctx.clusters.call(v.partition, 'ccStartInstance', { instanceId: v.instanceId, ...(avoidHosts.length > 0 ? { avoidHosts } : {}) });
    if (r.movedFrom !== undefined) ctx.logger.warn({ instanceId: r.instanceId, from: r.movedFrom, to: r.host }, 'stopped instance started on another node (its own takes no instances)');
    items.push({ instanceId: r.instanceId, currentState: instanceStateXml(r.currentState), previousState: instanceStateXml(r.previousState), nodeHost: r.host });
  }
  return { instancesSet: items };
}

async function reboot(input: RebootInstancesInput, ctx: ActionContext): Promise<XmlObject> {
  const views = await checked('RebootInstances', input.instanceIds, ctx);
  for (const v of views) await ctx.clusters.call(v.partition, 'ccRebootInstance', { instanceId: v.instanceId });
  ctx.logger.info({ instanceIds: input.instanceIds }, 'instances rebooted');
  return { return: true };
}

export const stopInstances = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseStopInstances, run: stop });
export const startInstances = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseStartInstances, run: start });
export const rebootInstances = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseRebootInstances, run: reboot });
