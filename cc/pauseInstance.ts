/**
 * ccPauseInstance (issue 18 part 6): pause or resume one instance on the node that runs it (routed
 * as volumes are: instanceRoute.ts, so a fenced host's instance is refused with NodeFenced), answered
 * after that NC persisted the pause and its hypervisor suspended (resumed) the domain.
 */
import type { CcRequest, CcResponse } from '../shared/protocol/ccProtocol.js';
import { hostOf, type InstanceRouteDeps } from './instanceRoute.js';
import { applyStarted } from './view.js';

export async function pauseInstance(d: InstanceRouteDeps, req: CcRequest<'ccPauseInstance'>): Promise<CcResponse<'ccPauseInstance'>> {
  const host = await hostOf(d, req.instanceId);
  const r = await d.keeper.change(host, async () => {
    const answer = await d.nodes.pauseInstance(host, req);
    // Into the view at once, as a stop is: a DescribeInstances right after the answer shows it.
    d.keeper.update(host, (v) => applyStarted(v, host, answer.instance));
    return answer;
  });
  void d.keeper.refreshHosts([host], d.quickTimeoutMs);
  return { instanceId: r.instance.instanceId, host, state: r.instance.state, paused: r.instance.paused === true, previouslyPaused: r.previouslyPaused };
}
