/**
 * ccAttachVolume / ccDetachVolume (issue 18): find the node that runs the instance (by a view fresh
 * for that node), refuse a node host HA is fencing or has fenced and one whose NC does not answer,
 * then ask that NC, whose answer comes after it persisted the attachment. The answer goes into the
 * view at once (a MigrateInstances right after it must prepare the destination with the volume: CI
 * once found a drain that left a just-attached volume behind, planned from a poll older than the
 * attach); the refresh after it confirms.
 */
import type { CcRequest, CcResponse } from '../shared/protocol/ccProtocol.js';
import { hostOf, type InstanceRouteDeps } from './instanceRoute.js';
import { applyAttachment } from './view.js';

export type VolumeOpsDeps = InstanceRouteDeps;

export async function attachVolume(d: VolumeOpsDeps, req: CcRequest<'ccAttachVolume'>): Promise<CcResponse<'ccAttachVolume'>> {
  const host = await hostOf(d, req.instanceId);
  const r = await settled(d, host, () => d.keeper.change(host, async () => {
    const answer = await d.nodes.attachVolume(host, req);
    d.keeper.update(host, (v) => applyAttachment(v, host, answer.instanceId, answer.attachment));
    return answer;
  }));
  void d.keeper.refreshHosts([host], d.quickTimeoutMs);
  return { instanceId: r.instanceId, host, attachment: r.attachment };
}

export async function detachVolume(d: VolumeOpsDeps, req: CcRequest<'ccDetachVolume'>): Promise<CcResponse<'ccDetachVolume'>> {
  const host = await hostOf(d, req.instanceId);
  const r = await settled(d, host, () => d.keeper.change(host, async () => {
    const answer = await d.nodes.detachVolume(host, req);
    d.keeper.update(host, (v) => applyAttachment(v, host, answer.instanceId, answer.attachment));
    return answer;
  }));
  void d.keeper.refreshHosts([host], d.quickTimeoutMs);
  return { instanceId: r.instanceId, host, attachment: r.attachment };
}

/**
 * A failed call may still have changed the node (an answer lost on the way back): the node is asked
 * again before the caller hears of the failure, so a request the CLC sends next (its gate lets one
 * through once this one is answered) is planned from what the node holds.
 */
async function settled<T>(d: VolumeOpsDeps, host: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    await d.keeper.refresh(host, d.quickTimeoutMs);
    throw e;
  }
}
