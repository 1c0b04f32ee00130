/**
 * ccStopInstance and ccRebootInstance (issue 18 part 5): stop or reboot one instance on the node
 * that runs it (routed as pause is: instanceRoute.ts, so a fenced host's instance is refused with
 * NodeFenced), answered after that NC persisted the stop and its domain is off, or rebooted it.
 */
import type { CcRequest, CcResponse } from '../shared/protocol/ccProtocol.js';
import { hostOf, type InstanceRouteDeps } from './instanceRoute.js';
import { applyStarted } from './view.js';

export async function stopInstance(d: InstanceRouteDeps, req: CcRequest<'ccStopInstance'>): Promise<CcResponse<'ccStopInstance'>> {
  const host = await hostOf(d, req.instanceId);
  const r = await d.keeper.change(host, async () => {
    const answer = await d.nodes.stopInstance(host, req);
    // Counted free at once: the scheduler may place on the room the stopped instance left.
    d.keeper.update(host, (v) => applyStarted(v, host, answer.instance));
    return answer;
  });
  void d.keeper.refreshHosts([host], d.quickTimeoutMs);
  return { instanceId: r.instance.instanceId, host, previousState: r.previousState, currentState: r.instance.state };
}

export async function rebootInstance(d: InstanceRouteDeps, req: CcRequest<'ccRebootInstance'>): Promise<CcResponse<'ccRebootInstance'>> {
  const host = await hostOf(d, req.instanceId);
  const r = await d.keeper.change(host, () => d.nodes.rebootInstance(host, req.instanceId));
  return { instanceId: r.instance.instanceId, host, state: r.instance.state };
}
