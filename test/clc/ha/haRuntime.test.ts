/**
 * Host HA wired into the CLC (clc/ha/haRuntime.ts) over the fake CCs, a ManualClock and fake power
 * drivers: the real runner, machine, CC-backed sources and service actions (DisableService,
 * MigrateInstances, the restart through ccRunInstances restartFrom), the EnableService hooks.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { A, B, C, FakePower, loseNc, P, reportUnhealthy, stopWorld, world } from './haWorld.js';

afterEach(stopWorld);

/** A world in which A crashed (its NC and VMs gone) and HA fenced it. */
async function fencedA() {
  const w = await world();
  await w.run(100);
  const node = loseNc(w, A, 'inactive');
  await w.run(800);
  expect(w.state(A)).toBe('FENCED');
  return { w, node };
}

describe('host HA runtime', () => {
  it('on a replica (issue 21): acts on nothing while it does not lead; started again, it resumes from the store and fences once', async () => {
    let leads = true;
    const w = await world({ leading: () => leads });
    await w.run(100);
    expect([w.state(A), w.state(B), w.state(C)]).toEqual(['AVAILABLE', 'AVAILABLE', 'AVAILABLE']);
    leads = false;
    await w.runtime.stop();
    loseNc(w, A, 'inactive');
    // A pass asked for while it does not lead (the loop is stopped; a stray call too) changes nothing.
    await w.run(800);
    expect(w.state(A)).toBe('AVAILABLE');
    expect(w.log).toEqual([]);
    leads = true;
    await w.runtime.start();
    const states: string[] = [];
    for (let i = 0; i < 40 && w.state(A) !== 'FENCED'; i++) {
      await w.run(100);
      states.push(String(w.state(A)));
    }
    expect(w.state(A), states.join(' ')).toBe('FENCED');
    expect(w.log.filter((l) => l === `off@${A}`)).toHaveLength(1);
  });

  it('health checks ask the CC for data from within the health-check interval, not a re-poll of every node (issue 19)', async () => {
    const w = await world();
    await w.run(300);
    const live = w.ops('ccDescribeNodeHealth').map((c) => c.req as { cached?: boolean; maxAgeMs?: number }).filter((r) => r.cached !== true);
    expect(live.length).toBeGreaterThan(0);
    // haWorld's settings: healthCheckIntervalMs 100.
    expect(new Set(live.map((r) => r.maxAgeMs))).toEqual(new Set([100]));
  });

  it('syncs the hosts the CCs report and makes eligible ones AVAILABLE', async () => {
    const w = await world({ withBmc: [A, B] });
    await w.run(100);
    expect([w.state(A), w.state(B), w.state(C)]).toEqual(['AVAILABLE', 'AVAILABLE', 'INELIGIBLE']);
  });

  it('a crashed host is disabled, fenced and only then its instances are restarted elsewhere (same ids, same type)', async () => {
    const w = await world();
    await w.run(100);
    loseNc(w, A, 'inactive'); // the NC and its VMs died: the neighbours see no writes
    let offBeforeRestart: boolean | undefined;
    const orig = w.fake.call.bind(w.fake);
    w.fake.call = (async (p: string, op: never, req: never) => {
      if (op === 'ccRunInstances') offBeforeRestart ??= w.log.includes(`off@${A}`);
      return orig(p, op, req);
    }) as typeof w.fake.call;
    await w.run(800);
    expect(w.state(A)).toBe('FENCED');
    expect(offBeforeRestart).toBe(true);
    const runs = w.ops('ccRunInstances').slice(1);
    expect(runs.map((c) => (c.req as { instanceIds: string[] }).instanceIds)).toEqual([['i-00000001'], ['i-00000002']]);
    expect(runs.every((c) => JSON.stringify((c.req as { restartFrom: string[] }).restartFrom) === JSON.stringify([A]))).toBe(true);
    for (const id of ['i-00000001', 'i-00000002']) {
      const hosts = [B, C].filter((h) => w.fake.node(h)?.instances.some((i) => i.instanceId === id && i.state !== 'terminated'));
      expect(hosts).toHaveLength(1);
    }
    // The DisableService of the dead host was tried (the NC did not answer: the fence went on).
    expect(w.ops('ccModifyNode').map((c) => (c.req as { host: string; stateName: string }))).toContainEqual(expect.objectContaining({ host: A, stateName: 'disabled' }));
    expect(w.runtime.hooks.fencedHosts()).toEqual(new Set([A]));
  });

  it('a host without control but with activity becomes DEGRADED and is drained by live migration, never fenced', async () => {
    const w = await world();
    await w.run(100);
    w.fake.activity.set(A, 'active');
    // The NC answers the CC no more, yet the CC may still drain through its cached plan: keep it reachable for the drain.
    reportUnhealthy(w, A);
    await w.run(800);
    expect(w.state(A)).toBe('DEGRADED');
    expect(w.log).toEqual([]);
    // The owed drain is retried until A is empty: every attempt is a drain of A.
    expect([...new Set(w.ops('ccMigrateInstances').map((c) => (c.req as { sourceHost: string }).sourceHost))]).toEqual([A]);
    expect(w.ops('ccRunInstances')).toHaveLength(1); // the launch only
  });

  it('a dead BMC leaves the host FENCING for an operator; nothing restarts until ConfirmHostFenced', async () => {
    const w = await world();
    await w.run(100);
    w.power.set(A, Object.assign(new FakePower(A, w.log), { mode: 'hang' as const }));
    loseNc(w, A, 'inactive');
    await w.run(1000);
    expect(w.state(A)).toBe('FENCING');
    expect(w.store.read().ha.hosts[A]?.needsOperator).toBe(true);
    expect(w.ops('ccRunInstances')).toHaveLength(1);
    await w.runtime.runner.deliver(A, { type: 'operatorConfirmedFenced', operator: 'admin' });
    await w.run(50);
    expect(w.state(A)).toBe('FENCED');
    expect(w.ops('ccRunInstances')).toHaveLength(3);
  });

  it('a storm beyond maxUnhealthy fences nobody', async () => {
    const w = await world({ maxUnhealthy: '1' });
    await w.run(100);
    for (const h of [A, B]) {
      const n = w.fake.node(h);
      if (n) n.reachable = false;
      w.fake.activity.set(h, 'inactive');
    }
    await w.run(1000);
    expect(w.log).toEqual([]);
    expect([w.state(A), w.state(B)].every((s) => s !== 'FENCING' && s !== 'FENCED')).toBe(true);
    expect(w.store.read().ha.hosts[A]?.blocked?.reason).toMatch(/storm protection/);
  });

  it('evacuate refuses a host that is not FENCED, and restarts nothing', async () => {
    const w = await world();
    await w.run(100);
    await expect(w.runtime.actions.restartElsewhere({ host: A, partition: P }, 'agent')).rejects.toMatchObject({ code: 'HostNotFenced' });
    expect(w.ops('ccRunInstances')).toHaveLength(1);
  });

  it('a fenced host that comes back goes into maintenance, loses its obsolete copies, and EnableService unfences it', async () => {
    const { w, node } = await fencedA();
    // EnableService while its NC is still gone is refused.
    await expect(w.runtime.hooks.beforeEnable(A, P)).rejects.toMatchObject({ code: 'FencedHostSilent' });
    node.reachable = true; // powered on again: its NC reports the old copies, and the state it had
    node.nodeState = 'enabled';
    await w.run(50);
    expect(node.nodeState).toBe('disabled');
    expect(node.instances.filter((i) => i.state !== 'terminated')).toEqual([]);
    await w.runtime.hooks.beforeEnable(A, P);
    await w.runtime.hooks.afterEnable(A, P);
    expect(w.state(A)).toBe('INELIGIBLE');
  });

  it('an instance terminated while its host is fenced is not restarted again, and its copy there is obsolete (sim seed 236)', async () => {
    const { w, node } = await fencedA();
    // The admin terminates i-00000001 (its restarted copy); TerminateInstances records it so.
    await w.store.update((d) => { const r = d.instances['i-00000001']; if (r) r.terminatedAt = w.clock.now(); });
    for (const h of [B, C]) {
      const n = w.fake.node(h);
      if (n) n.instances = n.instances.filter((i) => i.instanceId !== 'i-00000001');
    }
    node.reachable = true; // back: its NC reports the old copies of both
    const before = w.ops('ccRunInstances').length;
    await w.runtime.actions.restartElsewhere({ host: A, partition: P }, 'agent');
    expect(w.ops('ccRunInstances')).toHaveLength(before);
    await w.run(50);
    expect(node.instances.filter((i) => i.state !== 'terminated')).toEqual([]);
  });

  it('an instance in a live migration from the fenced host is not restarted: it may run at its destination (sim seed 973)', async () => {
    const w = await world();
    await w.run(100);
    const node = w.fake.node(A);
    if (!node) throw new Error('no A');
    const moving = node.instances.find((i) => i.instanceId === 'i-00000001');
    if (!moving) throw new Error('no i-00000001 on A');
    moving.migrationState = 'migrating';
    node.reachable = false;
    w.fake.activity.set(A, 'inactive');
    await w.run(800);
    expect(w.state(A)).toBe('FENCED');
    expect(w.ops('ccRunInstances').slice(1).map((c) => (c.req as { instanceIds: string[] }).instanceIds)).toEqual([['i-00000002']]);
    // The restart stays owed while the migration is unresolved; once it rolls back, the next pass restarts it.
    expect(w.store.read().ha.hosts[A]?.owed?.kind).toBe('evacuate');
    moving.migrationState = 'none';
    await w.run(400);
    expect(w.ops('ccRunInstances').slice(1).map((c) => (c.req as { instanceIds: string[] }).instanceIds)).toEqual([['i-00000002'], ['i-00000001']]);
    expect(w.store.read().ha.hosts[A]?.owed ?? null).toBeNull();
  });

  it('a restart stops as soon as HA lets go of the host (DisableHAForHost mid-evacuation; sim seed 883)', async () => {
    const { w } = await fencedA();
    // Both instances look lost again (their restarted copies vanished): a second evacuation, cut short.
    for (const h of [B, C]) {
      const n = w.fake.node(h);
      if (n) n.instances = [];
    }
    const before = w.ops('ccRunInstances').length;
    const orig = w.fake.call.bind(w.fake);
    let disabled = false;
    w.fake.call = (async (p: string, op: never, req: never) => {
      const r = await orig(p, op, req);
      if (op === 'ccRunInstances' && !disabled) {
        disabled = true;
        await w.store.update((d) => { const rec = d.ha.hosts[A]; if (rec) d.ha.hosts[A] = { ...rec, state: 'DISABLED' }; });
      }
      return r;
    }) as typeof w.fake.call;
    await expect(w.runtime.actions.restartElsewhere({ host: A, partition: P }, 'agent')).rejects.toThrow(/not FENCED/);
    expect(w.ops('ccRunInstances')).toHaveLength(before + 1);
  });

  it('EnableService of a host being fenced is refused', async () => {
    const w = await world();
    await w.run(100);
    w.power.set(A, Object.assign(new FakePower(A, w.log), { mode: 'hang' as const }));
    loseNc(w, A, 'inactive');
    await w.run(500);
    expect(w.state(A)).toBe('FENCING');
    await expect(w.runtime.hooks.beforeEnable(A, P)).rejects.toMatchObject({ code: 'EnableWhileFencing' });
  });

  it('a restart of the CLC mid-fence re-issues the fence and then restarts the instances', async () => {
    const w = await world();
    await w.run(100);
    w.power.set(A, Object.assign(new FakePower(A, w.log), { mode: 'hang' as const }));
    loseNc(w, A, 'inactive');
    for (let i = 0; i < 20 && w.state(A) !== 'FENCING'; i++) await w.run(50);
    expect(w.state(A)).toBe('FENCING');
    await w.runtime.stop();
    (w.power.get(A) as FakePower).mode = 'ok';
    const second = await w.start();
    // The re-issued fence waits out the stored deadline of the one in flight (its agent may outlive
    // a killed CLC, issue 21): fenceTimeoutMs 200 in haWorld, on the manual clock.
    for (let i = 0; i < 20 && w.state(A) !== 'FENCED'; i++) await w.run(50, second);
    expect(w.state(A)).toBe('FENCED');
    expect(w.ops('ccRunInstances')).toHaveLength(3);
  });
});
