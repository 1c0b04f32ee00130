/**
 * ccAttachVolume / ccDetachVolume (issue 18): find the node that runs the instance (by a view fresh
 * for that node), refuse a node host HA is fencing or has fenced and one whose NC does not answer,
 * then ask that NC, whose answer comes after it persisted the attachment. The view learns the new
 * attachment from the NC's next report.
 */
import type { CcRequest, CcResponse } from '../shared/protocol/ccProtocol.js';
import { CcErrors } from './errors.js';
import type { NodeClient } from './nodeClient.js';
import { findEntry, locateInstance } from './view.js';
import type { ViewKeeper } from './viewKeeper.js';

export interface VolumeOpsDeps {
  readonly keeper: ViewKeeper;
  readonly nodes: NodeClient;
  /** Refresh nodes whose data is older than this before routing. */
  readonly freshMs: number;
  readonly quickTimeoutMs: number;
}

/** The node running `instanceId`, refreshed first; a coded refusal when there is none to ask. */
async function hostOf(d: VolumeOpsDeps, instanceId: string): Promise<string> {
  const { keeper } = d;
  const fenced = keeper.fencedHosts();
  await keeper.refreshStale(d.freshMs, d.quickTimeoutMs);
  const view = keeper.get();
  // Fenced hosts are looked at too: a copy there must be refused by name, not reported missing.
  const at = locateInstance(view, instanceId, fenced) ?? locateInstance(view, instanceId);
  if (!at || at.instance.state === 'terminated') throw CcErrors.make('InstanceNotFound', { instanceId, partition: view.partition });
  if (fenced.has(at.host)) throw CcErrors.make('NodeFenced', { host: at.host });
  if (!findEntry(view, at.host)?.node.reachable) throw CcErrors.make('NodeUnreachable', { host: at.host, detail: 'its NC did not answer the last poll' });
  return at.host;
}

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
