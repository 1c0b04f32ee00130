/**
 * The volumes of a fenced host's instances (issue 18 part 4). Before host HA restarts an instance
 * elsewhere, each of its volumes is fenced from the dead host at the storage level (the OpenStack
 * fencing blueprint's "fence from storage": `VolumeBackend.fenceHost`) and the attachment is
 * persisted `attaching` with `fencedFrom`; the new copy is defined with them before its guest boots
 * (ccRunInstances' `volumes`), and once it runs each is confirmed through the ordinary
 * ccAttachVolume path (the new host's NC answers it as attached already) and persisted `attached`.
 * A volume whose detach was under way when the host died is released instead: nobody gets it back.
 * A fenced host that rejoins never gets its volumes back: the CLC's record names the restarted
 * copy, the fenced host's obsolete copy is only destroyed (clearObsolete; destroying a domain never
 * touches a volume's data), and its NC re-attaches nothing to a domain that is not running.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../../shared/clock.js';
import type { Store } from '../../../shared/store/store.js';
import type { Clusters } from '../../clusters/clusters.js';
import type { VolumeBackend } from '../../core/volumeBackend.js';
import { stepAttachment, stepVolume } from '../../core/volumeMachine.js';
import { volumesOf } from '../../core/volumeRecords.js';
import type { ClcState } from '../../state/clcStore.js';
import type { VolumeAttachmentSpec } from '../../../shared/protocol/volumes.js';

export interface VolumeFencingDeps {
  readonly store: Store<ClcState>;
  readonly clusters: Clusters;
  /** Where volumes live; absent in a cloud without volumes (nothing is attached then). */
  readonly backend: VolumeBackend | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * Fences `deadHost` from every volume of `instanceId` and records it. Rejects (with the backend's
 * coded error) when a volume could not be fenced: the instance must not be restarted then.
 * Idempotent: a volume already fenced from that host is fenced again (the backend's step is).
 */
export async function fenceVolumesFrom(d: VolumeFencingDeps, instanceId: string, deadHost: string): Promise<readonly string[]> {
  const fenced: string[] = [];
  for (const v of volumesOf(d.store.read().volumes, instanceId)) {
    const detail = d.backend
      ? await d.backend.fenceHost(v.volumeId, v.path ?? '', deadHost)
      : 'no volume backend: nothing to revoke';
    const now = d.clock.now();
    await d.store.update((draft) => {
      const rec = draft.volumes[v.volumeId];
      const a = rec?.attachment;
      if (!rec || a?.instanceId !== instanceId) return;
      if (a.status === 'detaching') {
        // Its owner asked for the detach before the host died: the fence finished it.
        a.status = stepAttachment(v.volumeId, a.status, 'detachConfirmed');
        delete rec.attachment;
        rec.state = stepVolume(v.volumeId, rec.state, 'released');
        return;
      }
      a.status = stepAttachment(v.volumeId, a.status, 'fenced');
      a.fencedFrom = { host: deadHost, at: now, detail };
    });
    fenced.push(v.volumeId);
    d.logger.warn({ volumeId: v.volumeId, instanceId, host: deadHost, detail }, 'host HA: volume fenced from a dead host before its instance restarts elsewhere');
  }
  return fenced;
}

/** The volumes of `instanceId` fenced from `deadHost` and not yet attached to its new copy. */
export function awaitingReattach(state: ClcState, instanceId: string, deadHost: string): string[] {
  return volumesOf(state.volumes, instanceId)
    .filter((v) => v.attachment?.status === 'attaching' && v.attachment.fencedFrom?.host === deadHost)
    .map((v) => v.volumeId);
}

/**
 * The volumes fenced from `deadHost` that the restarted copy of `instanceId` is defined with, so that
 * its guest sees them at boot (ccRunInstances' `volumes`); reattachVolumes then confirms each.
 */
export function volumesToBringAlong(state: ClcState, instanceId: string, deadHost: string): VolumeAttachmentSpec[] {
  return awaitingReattach(state, instanceId, deadHost).flatMap((volumeId) => {
    const v = state.volumes[volumeId];
    return v?.attachment && v.path !== undefined ? [{ volumeId, device: v.attachment.device, path: v.path }] : [];
  });
}

/**
 * Attaches to the restarted copy of `instanceId` every volume fenced from `deadHost` (ccAttachVolume,
 * routed by the CC to the node that now runs it; never the fenced one). Answers the ones that could
 * not be attached (they stay `attaching`; the next restart attempt tries them again).
 */
export async function reattachVolumes(
  d: VolumeFencingDeps, partition: string, instanceId: string, deadHost: string,
): Promise<{ attached: string[]; failed: { volumeId: string; reason: string }[] }> {
  const attached: string[] = [];
  const failed: { volumeId: string; reason: string }[] = [];
  for (const volumeId of awaitingReattach(d.store.read(), instanceId, deadHost)) {
    const v = d.store.read().volumes[volumeId];
    if (!v?.attachment || v.path === undefined) continue;
    try {
      const r = await d.clusters.call(partition, 'ccAttachVolume', { instanceId, volumeId, device: v.attachment.device, path: v.path });
      await d.store.update((draft) => {
        const a = draft.volumes[volumeId]?.attachment;
        if (a?.instanceId === instanceId && a.status === 'attaching') a.status = stepAttachment(volumeId, a.status, 'attachConfirmed');
      });
      attached.push(volumeId);
      d.logger.warn({ volumeId, instanceId, host: r.host, fencedHost: deadHost }, 'host HA: volume re-attached to the instance restarted elsewhere');
    } catch (e) {
      failed.push({ volumeId, reason: (e as Error).message });
    }
  }
  return { attached, failed };
}
