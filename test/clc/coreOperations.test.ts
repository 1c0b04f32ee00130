/**
 * The core operations without the admin API (issue 17): what host HA runs is the operation the API
 * runs, in the same change gate. inGatedOperation gives a change its own tickets, as a request has,
 * and leaves them when it ends, so what waited behind it goes on and nothing it holds outlives it.
 */
import { describe, expect, it } from 'vitest';
import { changeNodeState } from '../../clc/core/nodeState.js';
import { inGatedOperation, type OperationContext } from '../../clc/core/operationContext.js';
import { planMigration } from '../../clc/core/planMigration.js';
import { silentLogger } from '../../shared/log.js';
import { errorCode, harness, launchRunning, query, type Harness } from './harness.js';

const [H11, H12] = ['127.0.12.11', '127.0.12.12'] as const;

const base = (h: Harness) => ({ clusters: h.clusters, gate: h.gate, store: h.store, clock: h.clock, logger: silentLogger() });

describe('core operations, called as host HA calls them', () => {
  it('changeNodeState disables a node found in any partition, and leaves the gate as it found it', async () => {
    const h = await harness();
    let seen: OperationContext | undefined;
    const r = await inGatedOperation(base(h), (ctx) => {
      seen = ctx;
      return changeNodeState(ctx, { host: H11, partition: undefined }, 'disabled', `DisableService of node ${H11}`);
    });
    expect([r.partition, r.changed.previousState, h.clusters.node(H11)?.nodeState]).toEqual(['cluster01', 'enabled', 'disabled']);
    expect(h.gate.waiting()).toBe(0);
    // Its tickets are gone: a change through its context now is our bug, refused before it reaches a CC.
    await expect(seen?.clusters.call('cluster01', 'ccModifyNode', { host: H11, stateName: 'enabled', vmTypes: h.store.read().vmTypes }))
      .rejects.toMatchObject({ code: 'InternalError' });
    expect(h.clusters.node(H11)?.nodeState).toBe('disabled');
    // The admin's EnableService is the same operation the other way, granted at once.
    expect((await query(h.app, { Action: 'EnableService', Type: 'NODE', Host: H11 })).status).toBe(200);
    expect(h.clusters.node(H11)?.nodeState).toBe('enabled');
  });

  it('a refusal of the operation is the admin registry\'s code, whoever called it', async () => {
    const h = await harness();
    const viaCore = inGatedOperation(base(h), (ctx) => changeNodeState(ctx, { host: '127.0.12.99', partition: undefined }, 'disabled', 'test'));
    await expect(viaCore).rejects.toMatchObject({ code: 'InvalidHost.NotFound' });
    expect(errorCode(await query(h.app, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.99' }))).toBe('InvalidHost.NotFound');
    expect(h.clusters.mutatingCalls()).toEqual([]);
  });

  it('planMigration drains a node as MigrateInstances SourceHost does', async () => {
    const h = await harness();
    const [id] = await launchRunning(h, 'cluster01');
    const host = h.clusters.instance(id as string)?.host;
    const { partition, planned } = await inGatedOperation(base(h), (ctx) => planMigration(ctx, {
      sourceHost: host, instanceId: undefined, destinations: [], allowHosts: true, reserveDestinations: false, partial: true,
    }));
    expect(partition).toBe('cluster01');
    expect(planned.plan.items.map((i) => [i.instanceId, i.destination])).toEqual([[id, host === H11 ? H12 : H11]]);
    expect(h.gate.waiting()).toBe(0);
  });
});
