/**
 * Host HA's compact read of the nodes (issue 19, ccDescribeNodeHealth): the version logic of
 * cc/nodeHealthListing.ts, table-driven, then the CC operation over fake NCs and a ManualClock:
 * the same freshness as ccDescribeNodes, only the health tuple, and `unchanged` while it stands.
 */
import { describe, expect, it } from 'vitest';
import { NodeHealthListing } from '../../cc/nodeHealthListing.js';
import { initialView, type ClusterView } from '../../cc/view.js';
import type { CcNode, CcResponse } from '../../shared/protocol/ccProtocol.js';
import { SMALL, slots } from './fakeNodes.js';
import { CTX, harness, id, runReq } from './harness.js';

const [A, B] = ['127.0.112.1', '127.0.112.2'] as const;

/** A view of A and B, both reachable and enabled, with `change` applied to B's node. */
function viewWith(change: (n: CcNode) => CcNode = (n) => n): ClusterView {
  const base = initialView('cluster01', [A, B]);
  return {
    ...base,
    entries: base.entries.map((e) => {
      const n: CcNode = { ...e.node, nodeState: 'enabled', reachable: true, healthy: true, lastSeen: 5 };
      return { ...e, node: e.node.host === B ? change(n) : n };
    }),
  };
}

describe('NodeHealthListing: versions', () => {
  const none = new Set<string>();
  it.each<[string, ClusterView, ReadonlySet<string>]>([
    ['B disabled', viewWith((n) => ({ ...n, nodeState: 'disabled' })), none],
    ['B unreachable', viewWith((n) => ({ ...n, reachable: false })), none],
    ['B without its hypervisor', viewWith((n) => ({ ...n, healthy: false })), none],
    ['B quarantined', viewWith((n) => ({ ...n, quarantine: { since: 1, reason: 'disk' } })), none],
    ['B stale in this read', viewWith(), new Set([B])],
    ['a host less', { ...viewWith(), entries: viewWith().entries.slice(0, 1) }, none],
    ['the hosts in another order', { ...viewWith(), entries: [...viewWith().entries].reverse() }, none],
  ])('moves when %s, and stays while the tuple stays', (_what, changed, stale) => {
    const l = new NodeHealthListing();
    const first = l.read('fresh', viewWith(), none);
    // Equal content in a new view object: the same version and the very array of the first read.
    const again = l.read('fresh', viewWith(), none);
    expect(again.version).toBe(first.version);
    expect(again.hosts).toBe(first.hosts);
    const next = l.read('fresh', changed, stale);
    expect(next.version).not.toBe(first.version);
    expect(next.hosts).not.toEqual(first.hosts);
  });

  it('does not move for what host HA does not read (when seen, resources in use)', () => {
    const l = new NodeHealthListing();
    const first = l.read('fresh', viewWith(), new Set());
    const busier = viewWith((n) => ({ ...n, lastSeen: 99, used: slots(1) }));
    expect(l.read('fresh', busier, new Set()).version).toBe(first.version);
  });

  it('names one kind\'s content only, and never repeats a version across two lives of the CC', () => {
    const l = new NodeHealthListing();
    const fresh = l.read('fresh', viewWith(), new Set());
    const cached = l.read('cached', viewWith(), new Set());
    expect(cached.version).not.toBe(fresh.version);
    expect(l.read('fresh', viewWith(), new Set()).version).toBe(fresh.version);
    expect(new NodeHealthListing().read('fresh', viewWith(), new Set()).version).not.toBe(fresh.version);
  });
});

describe('ccDescribeNodeHealth', () => {
  const setup = () => harness({ nodes: [[A, slots(2)], [B, slots(2)]], policy: 'greedy' });
  type Answer = CcResponse<'ccDescribeNodeHealth'>;

  it('answers ccDescribeNodes\' nodes as health tuples, fresh or cached, with the same freshness', async () => {
    const h = await setup();
    h.fake.nc(B).healthy = false;
    h.clock.advance(2_000);
    const nodes = await h.ops.ccDescribeNodes({}, CTX);
    const health = await h.ops.ccDescribeNodeHealth({}, CTX);
    expect(health.hosts).toEqual(nodes.nodes.map((n) => ({
      host: n.host, nodeState: n.nodeState, reachable: n.reachable, healthy: n.healthy, stale: n.stale, quarantined: false,
    })));
    expect(health.hosts?.find((x) => x.host === B)).toMatchObject({ healthy: false, reachable: true });
    // Cached: no NC asked; older than the freshness bound is stale.
    h.clock.advance(2_000);
    const asked = h.fake.callsOf('describe').length;
    const cached = await h.ops.ccDescribeNodeHealth({ cached: true }, CTX);
    expect(cached.hosts?.map((x) => [x.host, x.stale])).toEqual([[A, true], [B, true]]);
    expect(h.fake.callsOf('describe')).toHaveLength(asked);
    // maxAgeMs: data within it is not asked for again.
    await h.ops.ccDescribeNodeHealth({ maxAgeMs: 60_000 }, CTX);
    expect(h.fake.callsOf('describe')).toHaveLength(asked);
    await h.settle();
  });

  it('answers `unchanged` without the list while the health stands, whatever the instances do; in full once a node\'s health moves', async () => {
    const h = await setup();
    const first = await h.ops.ccDescribeNodeHealth({}, CTX);
    expect(first.hosts).toHaveLength(2);
    const same: Answer = await h.ops.ccDescribeNodeHealth({ knownVersion: first.version }, CTX);
    expect(same).toEqual({ partition: 'cluster01', version: first.version, unchanged: true });
    // Instances come and go: host HA's tuple does not move.
    await h.run(runReq([id(1), id(2)], 2, SMALL));
    h.clock.advance(2_000);
    expect((await h.ops.ccDescribeNodeHealth({ knownVersion: first.version }, CTX)).unchanged).toBe(true);
    // B's hypervisor goes: the next fresh read sees it and answers in full, with a new version.
    h.fake.nc(B).healthy = false;
    h.clock.advance(2_000);
    const moved = await h.ops.ccDescribeNodeHealth({ knownVersion: first.version }, CTX);
    expect(moved.unchanged).toBeUndefined();
    expect(moved.version).not.toBe(first.version);
    expect(moved.hosts?.find((x) => x.host === B)?.healthy).toBe(false);
    // A cached read does not answer `unchanged` to a fresh read's version.
    expect((await h.ops.ccDescribeNodeHealth({ cached: true, knownVersion: moved.version }, CTX)).hosts).toHaveLength(2);
    await h.settle();
  });

  it('a quarantine shows as quarantined', async () => {
    const h = await setup();
    h.fake.nc(A).quarantine = { since: 1, reason: 'bad disk' };
    h.clock.advance(2_000);
    const r = await h.ops.ccDescribeNodeHealth({}, CTX);
    expect(r.hosts?.map((x) => [x.host, x.quarantined])).toEqual([[A, true], [B, false]]);
    await h.settle();
  });
});
