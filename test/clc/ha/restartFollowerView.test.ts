/**
 * Host HA's restart elsewhere after a CC leader died (issue 21): when the CC leader is unreachable the
 * CLC's read reaches a standby CC replica, whose view of the fenced host is its own older look and may
 * miss an instance started since (found by test/integration/fenceFailover.test.ts: the restart was
 * concluded "0 restarted" and the instance was lost). Nothing is concluded from such an answer: the
 * restart stays owed. And a copy listed on another FENCED host (its last report) is not a running copy.
 * Over the fake CCs, with the answer marked as a follower's (`leading: false`).
 */
import { describe, expect, it } from 'vitest';
import type { Clusters } from '../../../clc/clusters/clusters.js';
import { PartitionGate } from '../../../clc/core/partitionGate.js';
import { cloudHaActions } from '../../../clc/ha/cloud/serviceActions.js';
import { silentLogger } from '../../../shared/log.js';
import { FakeClusters, twoZoneCloud } from '../fakeClusters.js';
import { harness, launchRunning } from '../harness.js';
import { inState } from './haFixtures.js';

/** The fake CCs, with every ccDescribeNodes answered as a replica that does (or does not) lead says. */
function answeredBy(clusters: Clusters, leading: () => boolean): Clusters {
  return {
    ...clusters,
    partitions: clusters.partitions,
    call: (async (partition: string, op: string, req: never) => {
      const r = await clusters.call(partition, op as never, req);
      return op === 'ccDescribeNodes' ? { ...(r as object), leading: leading() } : r;
    }) as Clusters['call'],
  };
}

describe('restart elsewhere from a follower CC\'s view', () => {
  it('a standby\'s answer restarts nothing and leaves the restart owed; the leader\'s answer restarts', async () => {
    const fake = twoZoneCloud();
    const h = await harness({ clusters: fake });
    await launchRunning(h, 'cluster01', 'm1.small', 2);
    const host = ['127.0.12.11', '127.0.12.12'].find((x) => (fake.node(x)?.instances.length ?? 0) > 0)!;
    const onHost = fake.node(host)!.instances.map((i) => i.instanceId);
    await h.store.update((d) => { d.ha.hosts[host] = inState('FENCED', { host, partition: 'cluster01' }); });
    fake.node(host)!.reachable = false;
    let leading = false;
    const actions = cloudHaActions({
      clusters: answeredBy(fake, () => leading), gate: new PartitionGate({ clock: h.clock }), store: h.store, clock: h.clock, logger: silentLogger(),
    });
    const before = fake.mutatingCalls().length;
    const ref = { host, partition: 'cluster01' };

    const held = await actions.evacuate(ref, 'agent');
    expect(held).toEqual({ done: false, detail: expect.stringContaining('the CC leader did not answer') });
    expect(fake.mutatingCalls().slice(before)).toEqual([]);

    leading = true;
    const done = await actions.evacuate(ref, 'agent');
    expect(done.detail).toContain(`${onHost.length} restarted elsewhere`);
    expect(fake.mutatingCalls().slice(before).map((c) => c.op)).toContain('ccRunInstances');
  });

  it('a copy the CC last heard of on another FENCED host is obsolete, not a running copy: the instance is restarted', async () => {
    const fake = new FakeClusters({ cluster01: [{ host: '127.0.12.11' }, { host: '127.0.12.12' }, { host: '127.0.12.13' }] });
    const h = await harness({ clusters: fake });
    await launchRunning(h, 'cluster01', 'm1.small', 1);
    const [host, other] = ['127.0.12.11', '127.0.12.12', '127.0.12.13'].sort((a, b) => (fake.node(b)?.instances.length ?? 0) - (fake.node(a)?.instances.length ?? 0)) as [string, string];
    const id = fake.node(host)!.instances[0]!.instanceId;
    // The other host ran it before it was fenced (it was restarted from there onto `host`): its last report still lists it.
    fake.node(other)!.instances.push({ ...fake.node(host)!.instances[0]! });
    fake.node(other)!.reachable = false;
    fake.node(host)!.reachable = false;
    await h.store.update((d) => {
      d.ha.hosts[host] = inState('FENCED', { host, partition: 'cluster01' });
      d.ha.hosts[other] = inState('FENCED', { host: other, partition: 'cluster01' });
    });
    const actions = cloudHaActions({ clusters: fake, gate: new PartitionGate({ clock: h.clock }), store: h.store, clock: h.clock, logger: silentLogger() });
    const before = fake.mutatingCalls().length;
    const r = await actions.restartElsewhere({ host, partition: 'cluster01' }, 'agent');
    expect(r.repaired).toEqual([id]);
    expect(fake.mutatingCalls().slice(before).map((c) => c.op)).toContain('ccRunInstances');
  });
});
