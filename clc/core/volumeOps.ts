/**
 * The volume operations (issue 18), over the CLC store, the volume backend and the CCs. Every step
 * of a volume or attachment goes through volumeMachine.ts inside the store update that persists it.
 * Attach and detach are changes of the partition (the change gate, like RunInstances): they wait
 * behind a pending DisableService or MigrateInstances there. The order, as the NC's: persist the
 * intent (in-use/attaching, detaching), ask the CC, persist the outcome, answer. A coded refusal
 * from the cluster undoes the intent; no answer keeps it (DetachVolume Force=true clears it).
 */
import type { FerryError } from '../../shared/errors/registry.js';
import { ClcErrors } from './errors.js';
import { requireInstances, visibleInstances } from './instanceLookup.js';
import type { InstanceView } from './instanceView.js';
import type { OperationContext } from './operationContext.js';
import { stepAttachment, stepVolume, type AttachmentEvent } from './volumeMachine.js';
import type { VolumeRecord } from './volumeRecords.js';
import { attachRefusal, detachRefusal, instanceRefusal, type AttachAsk, type DetachAsk } from './volumeRules.js';
import type { ClcState } from '../state/clcStore.js';

/** InvalidVolume.NotFound naming every id, in EC2's words. */
export function volumeNotFound(ids: readonly string[]): FerryError {
  const idsDo = ids.length === 1 ? `'${ids[0] ?? ''}' does` : `IDs '${ids.join(', ')}' do`;
  return ClcErrors.make('InvalidVolume.NotFound', { ids: ids.join(', '), idsDo });
}

export function requireVolume(state: ClcState, volumeId: string): VolumeRecord {
  const v = state.volumes[volumeId];
  if (!v) throw volumeNotFound([volumeId]);
  return v;
}

/** A draft's volume, which must still be there (the checks ran in the same update). */
function draftVolume(d: ClcState, volumeId: string): VolumeRecord {
  return requireVolume(d, volumeId);
}

function fencedHosts(ctx: OperationContext): ReadonlySet<string> {
  return ctx.haHooks?.fencedHosts() ?? new Set();
}

/** Whether a failure proves the cluster changed nothing: a coded refusal, or a call that never reached the CC. */
function refusedOutright(e: unknown): boolean {
  const err = e as FerryError;
  return err?.clientFault === true || (err?.code === 'ServiceUnavailable' && err.fields.delivered === 'no');
}

/** The instance as the CCs report it now (InvalidInstanceID.NotFound, ServiceUnavailable otherwise). */
async function instanceNow(ctx: OperationContext, instanceId: string): Promise<InstanceView> {
  const { merged, unavailable } = await visibleInstances(ctx);
  return requireInstances([instanceId], merged, unavailable)[0] as InstanceView;
}

export async function attachVolume(ctx: OperationContext, ask: AttachAsk): Promise<VolumeRecord> {
  const first = requireVolume(ctx.store.read(), ask.volumeId);
  await ctx.gate.enter('change', `AttachVolume of ${ask.volumeId} to ${ask.instanceId}`, [first.partition]).ready();
  const instance = await instanceNow(ctx, ask.instanceId);
  const fenced = fencedHosts(ctx);
  const now = ctx.clock.now();
  // Checked again inside the write, so two requests for one volume cannot both pass.
  await ctx.store.update((d) => {
    const v = draftVolume(d, ask.volumeId);
    const why = attachRefusal(v, instance, d.volumes, ask, fenced);
    if (why) throw why;
    v.state = stepVolume(v.volumeId, v.state, 'attach');
    v.attachment = { instanceId: ask.instanceId, device: ask.device, status: 'attaching', attachTime: now, deleteOnTermination: false };
  });
  const path = requireVolume(ctx.store.read(), ask.volumeId).path ?? '';
  try {
    await ctx.clusters.call(first.partition, 'ccAttachVolume', { instanceId: ask.instanceId, volumeId: ask.volumeId, device: ask.device, path });
  } catch (e) {
    if (refusedOutright(e)) await settleAttachment(ctx, ask.volumeId, 'attachRefused');
    else ctx.logger.warn({ err: e, volumeId: ask.volumeId, instanceId: ask.instanceId }, 'AttachVolume got no clear answer: the volume stays attaching (DetachVolume Force=true clears it)');
    throw e;
  }
  const done = await settleAttachment(ctx, ask.volumeId, 'attachConfirmed');
  ctx.logger.info({ volumeId: ask.volumeId, instanceId: ask.instanceId, device: ask.device }, 'volume attached');
  return done;
}

export async function detachVolume(ctx: OperationContext, ask: DetachAsk): Promise<VolumeRecord> {
  const first = requireVolume(ctx.store.read(), ask.volumeId);
  const refused = detachRefusal(first, ask);
  if (refused) throw refused;
  await ctx.gate.enter('change', `DetachVolume of ${ask.volumeId}`, [first.partition]).ready();
  const before = requireVolume(ctx.store.read(), ask.volumeId);
  const again = detachRefusal(before, ask);
  if (again) throw again;
  const instanceId = before.attachment?.instanceId ?? '';
  const { merged, unavailable } = await visibleInstances(ctx);
  const gone = !merged.views.some((v) => v.instanceId === instanceId && v.state !== 'terminated') && !merged.unknown.has(instanceId);
  if (!gone) {
    const instance = requireInstances([instanceId], merged, unavailable)[0] as InstanceView;
    const why = instanceRefusal(instance, fencedHosts(ctx), 'DetachVolume', ask.force);
    if (why) throw why;
  }
  await ctx.store.update((d) => {
    const v = draftVolume(d, ask.volumeId);
    const why = detachRefusal(v, ask);
    if (why) throw why;
    const a = v.attachment;
    if (a) a.status = stepAttachment(v.volumeId, a.status, ask.force ? 'forceDetach' : 'detach');
  });
  // No node holds an instance that is gone: there is nothing to ask.
  if (!gone) {
    try {
      await ctx.clusters.call(first.partition, 'ccDetachVolume', { instanceId, volumeId: ask.volumeId, ...(ask.force ? { force: true } : {}) });
    } catch (e) {
      const notThere = (e as FerryError)?.code === 'InvalidAttachment.NotFound' || (e as FerryError)?.code === 'InvalidInstanceID.NotFound';
      if (!notThere) {
        if (refusedOutright(e)) await settleAttachment(ctx, ask.volumeId, 'detachRefused');
        else ctx.logger.warn({ err: e, volumeId: ask.volumeId, instanceId }, 'DetachVolume got no clear answer: the volume stays detaching (DetachVolume Force=true again)');
        throw e;
      }
    }
  }
  const done = await settleAttachment(ctx, ask.volumeId, 'detachConfirmed');
  ctx.logger.info({ volumeId: ask.volumeId, instanceId, force: ask.force }, 'volume detached');
  return done;
}

/**
 * One attachment step persisted; a `detached` attachment leaves the record and the volume is
 * `available` again. Answers the record as it was just before the attachment left (for the reply).
 */
async function settleAttachment(ctx: OperationContext, volumeId: string, event: AttachmentEvent): Promise<VolumeRecord> {
  return ctx.store.update((d) => {
    const v = draftVolume(d, volumeId);
    const a = v.attachment;
    if (!a) return structuredClone(v);
    a.status = stepAttachment(volumeId, a.status, event);
    const answer = structuredClone(v);
    if (a.status === 'detached') {
      delete v.attachment;
      v.state = stepVolume(volumeId, v.state, 'released');
    }
    return answer;
  });
}

/** TerminateInstances: EC2 detaches the volumes of a terminated instance (they outlive it). */
export function releaseVolumesOf(d: ClcState, instanceIds: ReadonlySet<string>): string[] {
  const released: string[] = [];
  for (const v of Object.values(d.volumes)) {
    if (v.attachment && instanceIds.has(v.attachment.instanceId)) {
      delete v.attachment;
      v.state = stepVolume(v.volumeId, v.state, 'released');
      released.push(v.volumeId);
    }
  }
  return released;
}
