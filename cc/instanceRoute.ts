/**
 * Routing one request about one instance to the node that runs it (volumes, pause; issue 18): by a
 * view fresh for that node, refusing a node host HA is fencing or has fenced and one whose NC does
 * not answer, before anything is asked.
 */
import { CcErrors } from './errors.js';
import type { NodeClient } from './nodeClient.js';
import { findEntry, locateInstance } from './view.js';
import type { ViewKeeper } from './viewKeeper.js';

export interface InstanceRouteDeps {
  readonly keeper: ViewKeeper;
  readonly nodes: NodeClient;
  /** Refresh nodes whose data is older than this before routing. */
  readonly freshMs: number;
  readonly quickTimeoutMs: number;
}

/** The node running `instanceId`, refreshed first; a coded refusal when there is none to ask. */
export async function hostOf(d: InstanceRouteDeps, instanceId: string): Promise<string> {
  const { keeper } = d;
  const fenced = keeper.fencedHosts();
  await keeper.refreshStale(d.freshMs, d.quickTimeoutMs);
  const view = keeper.get();
  // Fenced hosts are looked at too: a copy there must be refused by name, not reported missing.
  const at = locateInstance(view, instanceId, fenced) ?? locateInstance(view, instanceId);
  if (!at || at.instance.state === 'terminated') throw CcErrors.make('InstanceNotFound', { instanceId, partition: view.partition });
  if (fenced.has(at.host)) throw CcErrors.make('NodeFenced', { host: at.host });
  if (!findEntry(view, at.host)?.node.reachable) {
    // Its last poll failed, perhaps a moment ago (an NC restarting): a change is refused only if the
    // NC does not answer now either.
    await keeper.refreshHosts([at.host], d.quickTimeoutMs);
    if (!findEntry(keeper.get(), at.host)?.node.reachable) throw CcErrors.make('NodeUnreachable', { host: at.host, detail: 'its NC did not answer when asked again' });
  }
  return at.host;
}
