/**
 * Which nodes changed reachability, maintenance state or health between two views: what the keeper
 * logs as "node changed". Linear in the cluster: a node object the update did not replace is skipped
 * by identity (a poll replaces one node), and entries are matched by position, falling back to a
 * lookup by host only when the order differs. The first version searched the old view for every
 * node of the new one on every update, O(n²) per poll and O(n³) per poll round (bench/run.ts).
 */
import type { CcNode } from '../shared/protocol/ccProtocol.js';
import type { ClusterView, NodeEntry } from './view.js';

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

export function nodeTransitions(prev: ClusterView, next: ClusterView): NodeTransition[] {
  const out: NodeTransition[] = [];
  let byHost: Map<string, NodeEntry> | undefined;
  next.entries.forEach((e, i) => {
    const same = prev.entries[i];
    if (same?.node === e.node) return;
    const before = same?.node.host === e.node.host
      ? same.node
      : (byHost ??= new Map(prev.entries.map((x) => [x.node.host, x]))).get(e.node.host)?.node;
    const t = before ? nodeTransition(before, e.node) : undefined;
    if (t) out.push(t);
  });
  return out;
}
