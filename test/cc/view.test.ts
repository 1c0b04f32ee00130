import { describe, expect, it } from 'vitest';
import {
  adoptStored, applyInstanceState, applyReport, applyStarted, committed, initialView, isSchedulable, isStale, listInstances,
  locateInstance, markUnreachable,
} from '../../cc/view.js';
import type { NcNode } from '../../shared/protocol/ncProtocol.js';
import { instance, LARGE, SMALL, slots } from './fakeNodes.js';

const A = '127.0.11.1';
const B = '127.0.11.2';

function report(over: Partial<NcNode> = {}): NcNode {
  return { host: A, nodeState: 'enabled', healthy: true, hypervisor: 'sim', capacity: slots(4), used: slots(0), instances: [], ...over };
}

describe('view (pure updates)', () => {
  it('starts with every registered node unknown, unreachable and never checked', () => {
    const v = initialView('cluster01', [A, B]);
    expect(v.entries.map((e) => [e.node.host, e.node.nodeState, e.node.reachable, e.checkedAt])).toEqual([
      [A, 'unknown', false, null], [B, 'unknown', false, null],
    ]);
    expect(isStale(v.entries[0]!, 0, 1000)).toBe(true);
  });

  it('a report replaces what the view held for the node, and keeps registration order', () => {
    const v = applyReport(initialView('cluster01', [A, B]), A, report({ instances: [instance('i-00000001')], used: slots(1) }), 5000);
    expect(v.entries[0]?.node).toMatchObject({ host: A, reachable: true, healthy: true, nodeState: 'enabled', lastSeen: 5000, used: slots(1) });
    expect(v.entries.map((e) => e.node.host)).toEqual([A, B]);
    const again = applyReport(v, A, report(), 6000);
    expect(again.entries[0]?.node.instances).toEqual([]);
  });

  it('a failed contact keeps the last data but marks it unreachable (and unschedulable)', () => {
    const v = markUnreachable(applyReport(initialView('p', [A]), A, report({ instances: [instance('i-00000001')] }), 1), A, 2);
    const n = v.entries[0]!.node;
    expect(n).toMatchObject({ reachable: false, lastSeen: 1, nodeState: 'enabled' });
    expect(n.instances).toHaveLength(1);
    expect(isSchedulable(n)).toBe(false);
  });

  it('a quarantine the NC reports is carried (and survives the cache), is never schedulable, and goes with the next report', () => {
    const q = { since: 7, reason: 'forensics' };
    // Even a report that says enabled: the quarantine decides (issue 18).
    let v = applyReport(initialView('p', [A]), A, report({ quarantine: q }), 1);
    expect(v.entries[0]?.node.quarantine).toEqual(q);
    expect(isSchedulable(v.entries[0]!.node)).toBe(false);
    expect(initialView('p', [A], [v.entries[0]!.node]).entries[0]?.node.quarantine).toEqual(q);
    v = applyReport(v, A, report(), 2);
    expect(v.entries[0]?.node.quarantine).toBeUndefined();
    expect(isSchedulable(v.entries[0]!.node)).toBe(true);
  });

  it('applyStarted is idempotent and counts resources once; termination releases them', () => {
    let v = applyReport(initialView('p', [A]), A, report(), 1);
    v = applyStarted(v, A, instance('i-00000001', LARGE));
    v = applyStarted(v, A, instance('i-00000001', LARGE));
    expect(v.entries[0]?.node.used).toEqual({ cores: 2, memoryMiB: 512, diskGiB: 10 });
    v = applyInstanceState(v, A, 'i-00000001', 'terminated');
    expect(v.entries[0]?.node.used).toEqual(slots(0));
    expect(applyInstanceState(v, A, 'i-00000009', 'terminated')).toBe(v);
  });

  it('committed counts live instances even when a report lags behind them', () => {
    const n = applyReport(initialView('p', [A]), A, report({ used: slots(0), instances: [instance('i-00000001', SMALL), { ...instance('i-00000002'), state: 'terminated' }] }), 1).entries[0]!.node;
    expect(committed(n)).toEqual(slots(1));
  });

  it('locates instances, preferring a live copy, and lists them with host and partition', () => {
    let v = initialView('cluster01', [A, B]);
    v = applyReport(v, A, report({ instances: [{ ...instance('i-00000001'), state: 'terminated' }] }), 1);
    v = applyReport(v, B, report({ host: B, instances: [instance('i-00000001')] }), 1);
    expect(locateInstance(v, 'i-00000001')?.host).toBe(B);
    expect(locateInstance(v, 'i-00000002')).toBeUndefined();
    // The dead copy is not listed beside the live one (the CLC would otherwise show whichever came last).
    expect(listInstances(v).map((i) => [i.host, i.partition, i.state])).toEqual([[B, 'cluster01', 'running']]);
  });

  it('ignores updates for hosts that are not registered', () => {
    const v = initialView('p', [A]);
    expect(applyReport(v, B, report({ host: B }), 1)).toBe(v);
  });
});

describe('adoptStored (a replica taking up leadership, issue 21)', () => {
  const seenAt = (t: number) => applyReport(initialView('p1', [A, B]), A, report({ instances: [instance('i-00000001')] }), t);

  it('adopts the previous leader\'s later look at a node, untrusted (unreachable, unknown) until its NC answers', () => {
    const mine = initialView('p1', [A, B]);
    const stored = seenAt(2000).entries[0]!.node;
    const v = adoptStored(mine, stored);
    expect(v.entries[0]!.node).toEqual({ ...stored, nodeState: 'unknown', reachable: false });
    expect(listInstances(v).map((i) => i.instanceId)).toEqual(['i-00000001']);
    expect(v.entries[1]).toBe(mine.entries[1]);
  });

  it.each<[string, number]>([['an older look', 1000], ['as old a look', 3000]])('keeps its own look when the stored one is %s', (_n, storedAt) => {
    const mine = applyReport(initialView('p1', [A, B]), A, report({ instances: [] }), 3000);
    expect(adoptStored(mine, seenAt(storedAt).entries[0]!.node)).toBe(mine);
  });

  it('ignores a node of another partition', () => {
    const mine = initialView('p2', [A, B]);
    expect(adoptStored(mine, seenAt(2000).entries[0]!.node)).toEqual(mine);
  });
});
