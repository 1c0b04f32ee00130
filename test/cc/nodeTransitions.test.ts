/** nodeTransitions: what the keeper logs as "node changed", found without a search per node. */
import { describe, expect, it } from 'vitest';
import { nodeTransitions } from '../../cc/nodeTransitions.js';
import { applyReport, bumpEpoch, initialView, markUnhealthy, markUnreachable, type ClusterView } from '../../cc/view.js';
import type { NcNode } from '../../shared/protocol/ncProtocol.js';
import { slots } from './fakeNodes.js';

const [A, B, C] = ['127.0.11.1', '127.0.11.2', '127.0.11.3'];

function report(host: string, over: Partial<NcNode> = {}): NcNode {
  return { host, nodeState: 'enabled', healthy: true, hypervisor: 'sim', capacity: slots(4), used: slots(0), instances: [], ...over };
}

const up = (v: ClusterView, host: string): ClusterView => applyReport(v, host, report(host), 1000);
const base = up(up(up(initialView('p', [A, B, C]), A), B), C);
const reversed: ClusterView = { ...base, entries: [...base.entries].reverse() };

describe('nodeTransitions', () => {
  it.each([
    ['a node came up', initialView('p', [A, B, C]), up(initialView('p', [A, B, C]), B), [[B, { reachable: false, nodeState: 'unknown', healthy: false }, { reachable: true, nodeState: 'enabled', healthy: true }]]],
    ['a node became unreachable', base, markUnreachable(base, C, 2000), [[C, { reachable: true, nodeState: 'enabled', healthy: true }, { reachable: false, nodeState: 'enabled', healthy: true }]]],
    ['a node was disabled', base, applyReport(base, A, report(A, { nodeState: 'disabled' }), 2000), [[A, { reachable: true, nodeState: 'enabled', healthy: true }, { reachable: true, nodeState: 'disabled', healthy: true }]]],
    ['a node became unhealthy', base, markUnhealthy(base, B), [[B, { reachable: true, nodeState: 'enabled', healthy: true }, { reachable: true, nodeState: 'enabled', healthy: false }]]],
    ['a poll that changed only resources', base, applyReport(base, A, report(A, { used: slots(2) }), 2000), []],
    ['an epoch bump', base, bumpEpoch(base, B), []],
    ['the same nodes in another order', reversed, markUnreachable(base, A, 2000), [[A, { reachable: true, nodeState: 'enabled', healthy: true }, { reachable: false, nodeState: 'enabled', healthy: true }]]],
  ] as const)('%s', (_name, prev, next, expected) => {
    expect(nodeTransitions(prev, next).map((t) => [t.host, t.was, { reachable: t.reachable, nodeState: t.nodeState, healthy: t.healthy }])).toEqual(expected);
  });

  it('a node new to the view is not a transition', () => {
    expect(nodeTransitions(initialView('p', [A]), up(initialView('p', [A, B]), B))).toEqual([]);
  });
});
