/**
 * What HA repairs in the running CLC (clc/ha/haRuntime.ts over the fake CCs): the auto-repair levels
 * from clc.json (ConfigureHAForInstance's per instance, ConfigureHAForCluster's per partition; the
 * least destructive wins) decide which instances are live-migrated off a DEGRADED host and which are
 * restarted elsewhere after a fence; and the drain a DEGRADED host owes waits for its NC, then
 * disables and empties it through DisableService and MigrateInstances.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AutoRepair } from '../../../clc/ha/repairPolicy.js';
import { A, loseNc, P, reportUnhealthy, stopWorld, world, type World } from './haWorld.js';

afterEach(stopWorld);

const [I1, I2] = ['i-00000001', 'i-00000002'] as const;

async function withLevels(w: World, instance: Record<string, AutoRepair>, cluster?: AutoRepair): Promise<void> {
  await w.store.update((d) => {
    d.ha.instanceAutoRepair = instance;
    const cfg = d.ha.partitions[P];
    if (cfg && cluster) cfg.autoRepair = cluster;
  });
}

/** A's NC stops answering health checks while its VMs keep writing: DEGRADED. */
async function degrade(w: World): Promise<void> {
  w.fake.activity.set(A, 'active');
  reportUnhealthy(w, A);
  await w.run(800);
  expect(w.state(A)).toBe('DEGRADED');
}

/** A dies (NC and VMs): fenced, then its instances are restarted as the policy allows. */
async function crash(w: World): Promise<void> {
  loseNc(w, A, 'inactive');
  await w.run(800);
  expect(w.state(A)).toBe('FENCED');
}

const migrated = (w: World) => w.ops('ccMigrateInstances').map((c) => (c.req as { instanceId?: string; sourceHost?: string }));
const restarted = (w: World) => w.ops('ccRunInstances').slice(1).flatMap((c) => (c.req as { instanceIds: string[] }).instanceIds);

describe('auto-repair levels in the runtime', () => {
  it('an instance set to off is neither live-migrated off a degraded host nor restarted after a fence', async () => {
    const w = await world();
    await withLevels(w, { [I1]: 'off' });
    await w.run(100);
    await degrade(w);
    // Retried attempts ask again (refused while the first migration runs): only ever I2.
    expect([...new Set(migrated(w).map((m) => m.instanceId))]).toEqual([I2]);
    expect(migrated(w).some((m) => m.sourceHost !== undefined)).toBe(false);
    expect(w.store.read().ha.events.some((e) => e.host === A && /left by auto-repair policy/.test(e.message))).toBe(true);
  });

  it('off is never restarted after a fence; the others are', async () => {
    const w = await world();
    await withLevels(w, { [I1]: 'off' });
    await w.run(100);
    await crash(w);
    expect(restarted(w)).toEqual([I2]);
  });

  it('migrate is drained off a degraded host but not restarted after a fence', async () => {
    const w = await world();
    await withLevels(w, { [I1]: 'migrate' });
    await w.run(100);
    await crash(w);
    expect(restarted(w)).toEqual([I2]);
    const w2 = await world();
    await withLevels(w2, { [I1]: 'migrate', [I2]: 'migrate' });
    await w2.run(100);
    await degrade(w2);
    expect(migrated(w2)[0]).toMatchObject({ sourceHost: A });
  });

  it('the cluster\'s level bounds every instance: a cluster set to migrate restarts nobody, even a failover instance', async () => {
    const w = await world();
    await withLevels(w, { [I1]: 'failover' }, 'migrate');
    await w.run(100);
    await crash(w);
    expect(restarted(w)).toEqual([]);
    expect(w.store.read().ha.hosts[A]?.owed).toBeNull();
  });
});

describe('the drain a DEGRADED host owes', () => {
  it('waits while its NC is down, then disables and empties it through DisableService and MigrateInstances, without a fence', async () => {
    const w = await world();
    await w.run(100);
    // The NC is gone (the CC cannot reach it), its VMs still write.
    const node = loseNc(w, A, 'active');
    await w.run(800);
    expect(w.state(A)).toBe('DEGRADED');
    expect(w.store.read().ha.hosts[A]?.owed).toMatchObject({ kind: 'drain', lastOutcome: expect.stringContaining('does not answer') });
    expect(w.ops('ccModifyNode')).toEqual([]);
    // Its NC is restarted: healthy again, yet it leaves service and is emptied.
    node.reachable = true;
    for (let i = 0; i < 40 && w.store.read().ha.hosts[A]?.owed !== null; i++) {
      await w.run(100);
      w.fake.advanceMigrations(); // as the CC's migrations proceed between two polls
    }
    expect(w.store.read().ha.hosts[A]?.owed).toBeNull();
    expect(node.nodeState).toBe('disabled');
    expect(node.instances.filter((i) => i.state !== 'terminated')).toEqual([]);
    expect(w.ops('ccModifyNode').map((c) => c.req)).toContainEqual(expect.objectContaining({ host: A, stateName: 'disabled' }));
    expect(migrated(w)).toContainEqual(expect.objectContaining({ sourceHost: A }));
    expect(w.log).toEqual([]);
    expect(w.state(A)).toBe('INELIGIBLE');
  });
});
