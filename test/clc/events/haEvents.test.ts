/**
 * Host HA's own changes land in the event stream as the admin's do, through the same core
 * operations, with actor 'ha': its DisableService of a failing host (with HA's reason) and its drain
 * of a degraded host (migration.planned), recorded before HA's call returns.
 */
import { describe, expect, it } from 'vitest';
import { PartitionGate } from '../../../clc/core/partitionGate.js';
import { openMemoryEventsStore } from '../../../clc/events/eventStore.js';
import { EventStream } from '../../../clc/events/eventStream.js';
import { cloudHaActions } from '../../../clc/ha/cloud/serviceActions.js';
import { openMemoryClcStore } from '../../../clc/state/clcStore.js';
import { ManualClock } from '../../../shared/clock.js';
import { silentLogger } from '../../../shared/log.js';
import { twoZoneCloud } from '../fakeClusters.js';
import { harness, launchRunning } from '../harness.js';

describe('host HA in the event stream', () => {
  it('HA\'s DisableService and drain are node.disabled (with its reason) and migration.planned, by ha', async () => {
    // Instances placed through the API on A, then HA acts on A with its own actions over the same fake CCs.
    const h = await harness({ clusters: twoZoneCloud() });
    await launchRunning(h, 'cluster01', 'm1.small', 2);
    const clock = new ManualClock(h.clock.now());
    const events = new EventStream({ store: await openMemoryEventsStore(), clock });
    const actions = cloudHaActions({
      clusters: h.clusters, gate: new PartitionGate({ clock }), store: await openMemoryClcStore(), clock, logger: silentLogger(), events,
    });
    const host = ['127.0.12.11', '127.0.12.12'].find((x) => (h.clusters.node(x)?.instances.length ?? 0) > 0)!;
    const ref = { host, partition: 'cluster01' };
    await actions.disableHost(ref, 'entered DEGRADED: the hypervisor stopped answering');
    expect(events.select({}).map((e) => [e.kind, e.actor, e.host])).toEqual([['node.disabled', 'ha', host]]);
    expect(events.select({})[0]?.details.reason).toBe('host HA: entered DEGRADED: the hypervisor stopped answering');
    await actions.drainPlanned(ref);
    const planned = events.select({ kinds: ['migration.planned'] });
    expect(planned.map((e) => [e.actor, e.host])).toEqual([['ha', host]]);
    expect(events.state().migrations[planned[0]!.migrationId!]?.final).toBe(false);
  });
});
