/**
 * CreateVolume and DeleteVolume (issue 18): a record first (creating / deleting), then the backend,
 * then the outcome, each step through volumeMachine.ts. Neither touches a cluster, so neither waits
 * in the change gate. A backend failure leaves the volume in `error` (as EC2's), to be deleted.
 * ClientToken makes CreateVolume idempotent per account, as RunInstances' (clc/core/runTokens.ts).
 */
import { partitionNames } from '../clusters/clusters.js';
import { ClcErrors } from './errors.js';
import type { OperationContext } from './operationContext.js';
import type { Tag } from './userTags.js';
import type { VolumeBackend } from './volumeBackend.js';
import { stepVolume } from './volumeMachine.js';
import { requireVolume } from './volumeOps.js';
import type { VolumeRecord } from './volumeRecords.js';

export interface CreateVolumeAsk {
  readonly volumeId: string;
  readonly ownerId: string;
  readonly size: number;
  readonly partition: string;
  readonly volumeType: string;
  readonly clientToken?: string | undefined;
  readonly tags: readonly Tag[];
}

/** The volume a token already made for this account, or IdempotentParameterMismatch; undefined: a new token. */
function byToken(ctx: OperationContext, ask: CreateVolumeAsk): VolumeRecord | undefined {
  if (ask.clientToken === undefined) return undefined;
  const v = Object.values(ctx.store.read().volumes).find((r) => r.clientToken === ask.clientToken && r.ownerId === ask.ownerId);
  if (!v) return undefined;
  const differs = [
    v.size !== ask.size ? `Size ${v.size} before, ${ask.size} now` : '',
    v.partition !== ask.partition ? `AvailabilityZone ${v.partition} before, ${ask.partition} now` : '',
    v.volumeType !== ask.volumeType ? `VolumeType ${v.volumeType} before, ${ask.volumeType} now` : '',
  ].filter((s) => s !== '');
  if (differs.length > 0) throw ClcErrors.make('IdempotentParameterMismatch', { token: ask.clientToken, detail: differs.join('; ') });
  return v;
}

export async function createVolume(ctx: OperationContext, backend: VolumeBackend, ask: CreateVolumeAsk): Promise<VolumeRecord> {
  const known = partitionNames(ctx.clusters);
  if (!known.includes(ask.partition)) throw ClcErrors.make('InvalidAvailabilityZone', { zone: ask.partition, known: known.join(', ') });
  const repeat = byToken(ctx, ask);
  if (repeat) return repeat;
  const { volumeId } = ask;
  if (ctx.store.read().volumes[volumeId]) throw ClcErrors.make('InternalError', { detail: `volume id ${volumeId} was drawn twice; retry` });
  await ctx.store.update((d) => {
    d.volumes[volumeId] = {
      volumeId, ownerId: ask.ownerId, size: ask.size, partition: ask.partition, volumeType: ask.volumeType,
      createTime: ctx.clock.now(), state: 'creating',
      ...(ask.clientToken !== undefined ? { clientToken: ask.clientToken } : {}),
      ...(ask.tags.length > 0 ? { userTags: [...ask.tags] } : {}),
    };
  });
  let path: string | undefined;
  let failure: string | undefined;
  try {
    path = await backend.create(volumeId, ask.size);
  } catch (e) {
    failure = (e as Error).message;
    ctx.logger.error({ err: e, volumeId, backend: backend.kind }, 'the volume backend could not make a volume; it is left in error');
  }
  return ctx.store.update((d) => {
    const v = requireVolume(d, volumeId);
    v.state = stepVolume(volumeId, v.state, path !== undefined ? 'created' : 'createFailed');
    if (path !== undefined) v.path = path;
    if (failure !== undefined) v.error = failure;
    return structuredClone(v);
  });
}

export async function deleteVolume(ctx: OperationContext, backend: VolumeBackend, volumeId: string): Promise<void> {
  await ctx.store.update((d) => {
    const v = requireVolume(d, volumeId);
    if (v.state === 'in-use') {
      throw ClcErrors.make('VolumeInUse', { volumeId, instanceId: v.attachment?.instanceId ?? '?', detail: 'detach it first' });
    }
    v.state = stepVolume(volumeId, v.state, 'delete');
  });
  try {
    await backend.remove(volumeId);
  } catch (e) {
    await ctx.store.update((d) => {
      const v = requireVolume(d, volumeId);
      v.state = stepVolume(volumeId, v.state, 'deleteFailed');
      v.error = (e as Error).message;
    });
    throw e;
  }
  await ctx.store.update((d) => {
    const v = requireVolume(d, volumeId);
    stepVolume(volumeId, v.state, 'deleted');
    delete d.volumes[volumeId];
  });
  ctx.logger.info({ volumeId }, 'volume deleted');
}
