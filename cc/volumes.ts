/**
 * ccAttachVolume / ccDetachVolume (issue 18): find the node that runs the instance (by a view fresh
 * for that node), refuse a node host HA is fencing or has fenced and one whose NC does not answer,
 * then ask that NC, whose answer comes after it persisted the attachment. The view learns the new
 * attachment from the NC's next report.
 */
import type { CcRequest, CcResponse } from '../shared/protocol/ccProtocol.js';
import { hostOf, type InstanceRouteDeps } from './instanceRoute.js';

export type VolumeOpsDeps = InstanceRouteDeps;

export async function attachVolume(d: VolumeOpsDeps, req: CcRequest<'ccAttachVolume'>): Promise<CcResponse<'ccAttachVolume'>> {
  const host = await hostOf(d, req.instanceId);
  const r = await d.keeper.change(host, () => d.nodes.attachVolume(host, req));
  void d.keeper.refreshHosts([host], d.quickTimeoutMs);
  return { instanceId: r.instanceId, host, attachment: r.attachment };
}

export async function detachVolume(d: VolumeOpsDeps, req: CcRequest<'ccDetachVolume'>): Promise<CcResponse<'ccDetachVolume'>> {
  const host = await hostOf(d, req.instanceId);
  const r = await d.keeper.change(host, () => d.nodes.detachVolume(host, req));
  void d.keeper.refreshHosts([host], d.quickTimeoutMs);
  return { instanceId: r.instanceId, host, attachment: r.attachment };
}
