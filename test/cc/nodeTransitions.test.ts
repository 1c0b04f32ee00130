/** nodeTransition: what the keeper logs as "node changed" for the node a report names. */
import { describe, expect, it } from 'vitest';
import { nodeTransition } from '../../cc/nodeTransitions.js';
import type { CcNode } from '../../shared/protocol/ccProtocol.js';
import { applyReport, initialView, markUnhealthy, markUnreachable, type ClusterView } from '../../cc/view.js';
import type { NcNode } from '../../shared/protocol/ncProtocol.js';
import { slots } from './fakeNodes.js';

const [A, B, C] = ['127.0.11.1', '127.0.11.2', '127.0.11.3'];

function report(host: string, over: Partial<NcNode> = {}): NcNode {
  return { host, nodeState: 'enabled', healthy: true, hypervisor: 'sim', capacity: slots(4), used: slots(0), instances: [], ...over };
}

const up = (v: ClusterView, host: string): ClusterView => applyReport(v, host, report(host), 1000);
const base = up(up(up(initialView('p', [A, B, C]), A), B), C);
const nodeOf = (v: ClusterView, host: string): CcNode => {
  const e = v.entries.find((x) => x.node.host === host);
  if (!e) throw new Error(`no ${host} in the view`);
  return e.node;
};

describe('nodeTransition', () => {
  it.each([
    ['a node came up', B, initialView('p', [A, B, C]), up(initialView('p', [A, B, C]), B), [{ reachable: false, nodeState: 'unknown', healthy: false }, { reachable: true, nodeState: 'enabled', healthy: true }]],
    ['a node became unreachable', C, base, markUnreachable(base, C, 2000), [{ reachable: true, nodeState: 'enabled', healthy: true }, { reachable: false, nodeState: 'enabled', healthy: true }]],
    ['a node was disabled', A, base, applyReport(base, A, report(A, { nodeState: 'disabled' }), 2000), [{ reachable: true, nodeState: 'enabled', healthy: true }, { reachable: true, nodeState: 'disabled', healthy: true }]],
    ['a node became unhealthy', B, base, markUnhealthy(base, B), [{ reachable: true, nodeState: 'enabled', healthy: true }, { reachable: true, nodeState: 'enabled', healthy: false }]],
    ['a poll that changed only resources', A, base, applyReport(base, A, report(A, { used: slots(2) }), 2000), undefined],
  ] as const)('%s', (_name, host, prev, next, expected) => {
    const t = nodeTransition(nodeOf(prev, host), nodeOf(next, host));
    expect(t && [t.was, { reachable: t.reachable, nodeState: t.nodeState, healthy: t.healthy }]).toEqual(expected);
    if (t) expect(t.host).toBe(host);
  });
});
