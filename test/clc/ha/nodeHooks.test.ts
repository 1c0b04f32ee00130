/**
 * Host HA's say in the admin actions that change nodes (clc/core/nodeHooks.ts): EnableService asks it
 * first (and a refusal changes nothing), tells it afterwards; MigrateInstances never sends an
 * instance to a fenced host, named or not; RunInstances asks the CC to avoid fenced hosts.
 */
import { describe, expect, it } from 'vitest';
import { ClcErrors } from '../../../clc/core/errors.js';
import type { HaNodeHooks } from '../../../clc/core/nodeHooks.js';
import { errorCode, harness, launchRunning, query } from '../harness.js';

const [H11, H12] = ['127.0.12.11', '127.0.12.12'] as const;

function hooks(fenced: readonly string[], refuse = false) {
  const calls: string[] = [];
  const ha: HaNodeHooks = {
    async beforeEnable(host) {
      calls.push(`before ${host}`);
      if (refuse) throw ClcErrors.make('OperationNotPermitted', { action: 'EnableService', detail: `host ${host}: fenced` });
    },
    async afterEnable(host) { calls.push(`after ${host}`); },
    fencedHosts: () => new Set(fenced),
  };
  return { ha, calls };
}

describe('EnableService with host HA', () => {
  it('asks HA before changing the node and tells it after', async () => {
    const { ha, calls } = hooks([]);
    const h = await harness({ haHooks: ha });
    const r = await query(h.app, { Action: 'EnableService', Type: 'NODE', Host: H11 });
    expect(r.status).toBe(200);
    expect(calls).toEqual([`before ${H11}`, `after ${H11}`]);
  });

  it('an HA refusal is a coded error and changes nothing', async () => {
    const { ha, calls } = hooks([H11], true);
    const h = await harness({ haHooks: ha });
    const before = h.clusters.snapshot();
    const r = await query(h.app, { Action: 'EnableService', Type: 'NODE', Host: H11 });
    expect(errorCode(r)).toBe('OperationNotPermitted');
    expect(h.clusters.mutatingCalls()).toEqual([]);
    expect(h.clusters.snapshot()).toBe(before);
    expect(calls).toEqual([`before ${H11}`]);
  });

  it('DisableService does not ask HA', async () => {
    const { ha, calls } = hooks([]);
    const h = await harness({ haHooks: ha });
    expect((await query(h.app, { Action: 'DisableService', Type: 'NODE', Host: H11 })).status).toBe(200);
    expect(calls).toEqual([]);
  });
});

describe('MigrateInstances never targets a fenced host', () => {
  it('a named fenced destination is refused with InvalidParameterValue and nothing is planned', async () => {
    const { ha } = hooks([H12]);
    const h = await harness({ haHooks: ha });
    await launchRunning(h, 'cluster01');
    const r = await query(h.app, { Action: 'MigrateInstances', SourceHost: H11, 'DestinationHost.1': H12 });
    expect(errorCode(r)).toBe('InvalidParameterValue');
    expect(h.clusters.calls.filter((c) => c.op === 'ccMigrateInstances')).toEqual([]);
  });

  it('without a list, the fenced hosts are sent as forbidden destinations', async () => {
    const { ha } = hooks([H12]);
    const h = await harness({ haHooks: ha });
    await launchRunning(h, 'cluster01');
    await query(h.app, { Action: 'MigrateInstances', SourceHost: H11 });
    const sent = h.clusters.calls.find((c) => c.op === 'ccMigrateInstances')?.req as { destinations: string[]; allowHosts: boolean };
    expect(sent).toMatchObject({ destinations: [H12], allowHosts: false });
  });

  it('a forbidden list gains the fenced hosts; with nothing fenced the request is unchanged', async () => {
    const fenced = await harness({ haHooks: hooks([H12]).ha });
    await launchRunning(fenced, 'cluster01');
    await query(fenced.app, { Action: 'MigrateInstances', SourceHost: H11, 'DestinationHost.1': '127.0.12.13', AllowHosts: 'false' });
    expect(fenced.clusters.calls.find((c) => c.op === 'ccMigrateInstances')?.req).toMatchObject({ destinations: ['127.0.12.13', H12], allowHosts: false });
    const none = await harness({ haHooks: hooks([]).ha });
    await launchRunning(none, 'cluster01');
    await query(none.app, { Action: 'MigrateInstances', SourceHost: H11 });
    expect(none.clusters.calls.find((c) => c.op === 'ccMigrateInstances')?.req).toMatchObject({ destinations: [], allowHosts: true });
  });
});

describe('RunInstances with host HA', () => {
  const launch = { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '1', MaxCount: '1' };

  it('asks the CC to avoid the hosts HA is fencing or has fenced', async () => {
    const h = await harness({ haHooks: hooks([H12, H11]).ha });
    await query(h.app, launch);
    expect(h.clusters.calls.find((c) => c.op === 'ccRunInstances')?.req).toMatchObject({ avoidHosts: [H11, H12] });
  });

  it('with nothing fenced the request names no hosts to avoid', async () => {
    const h = await harness({ haHooks: hooks([]).ha });
    await query(h.app, launch);
    const req = h.clusters.calls.find((c) => c.op === 'ccRunInstances')?.req as Record<string, unknown> | undefined;
    expect(req).toBeDefined();
    expect(req).not.toHaveProperty('avoidHosts');
  });
});
