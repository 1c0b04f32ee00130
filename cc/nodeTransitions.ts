/**
 * Whether a node changed reachability, maintenance state or health between two reports: what the
 * keeper logs as "node changed". The keeper looks only at the node an update names (issue 19); the
 * whole-view diff that came before it (and its O(n²) ancestor) is gone, as is its bench case.
 */
import type { CcNode } from '../shared/protocol/ccProtocol.js';

type Watched = Pick<CcNode, 'reachable' | 'nodeState' | 'healthy'>;

export interface NodeTransition extends Watched {
  readonly host: string;
  readonly was: Watched;
}

/** The change of one node between two reports, if its reachability, maintenance state or health moved. */
export function nodeTransition(before: CcNode, now: CcNode): NodeTransition | undefined {
  if (before.reachable === now.reachable && before.nodeState === now.nodeState && before.healthy === now.healthy) return undefined;
  return {
    host: now.host, reachable: now.reachable, nodeState: now.nodeState, healthy: now.healthy,
    was: { reachable: before.reachable, nodeState: before.nodeState, healthy: before.healthy },
  };
}
