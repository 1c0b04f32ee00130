/**
 * Host HA returning a fenced host (issue 15, OpenStack's fencing blueprint): once EnableService has
 * cleaned and unfenced it, the instances that still belong to it (not restarted elsewhere, not
 * terminated) and that its power cycle left shut off are powered on there (an owed `powerOn`, retried
 * until done), over the fake CCs, the real runner, machine and service actions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { A, B, C, P, loseNc, stopWorld, world, type World } from './haWorld.js';

afterEach(stopWorld);

const KEPT = 'i-00000001';
const MOVED = 'i-00000002';

/** KEPT's auto-repair is 'off' (it stays on A); A crashes, is fenced; MOVED restarts elsewhere. */
async function fencedWithKept() {
  const w = await world();
  await w.store.update((d) => { d.ha.instanceAutoRepair[KEPT] = 'off'; });
  await w.run(100);
  const node = loseNc(w, A, 'inactive');
  await w.run(800);
  expect(w.state(A)).toBe('FENCED');
  expect(w.ops('ccRunInstances').slice(1).map((c) => (c.req as { instanceIds: string[] }).instanceIds)).toEqual([[MOVED]]);
  return { w, node };
}

/** A is powered on again: its NC answers, its old domains are defined but shut off, its node state as it was. */
function comesBack(node: NonNullable<ReturnType<World['fake']['node']>>): void {
  node.reachable = true;
  for (const i of node.instances) {
    i.state = 'stopped';
    i.hypervisorState = 'shutoff';
  }
}

/** EnableService as the core runs it: HA's check first, the node enabled (the NC persists it), then HA told. */
async function enableService(w: World): Promise<void> {
  await w.runtime.hooks.beforeEnable(A, P);
  const node = w.fake.node(A);
  if (node) node.nodeState = 'enabled';
  await w.runtime.hooks.afterEnable(A, P);
}

const startCalls = (w: World) => w.ops('ccStartInstances').map((c) => c.req as { instanceIds: string[]; onHost: string });
const liveCopies = (w: World, id: string) => [A, B, C].filter((h) => w.fake.node(h)?.instances.some((i) => i.instanceId === id && i.state !== 'terminated'));

describe('host HA: a fenced host returned to service powers on its own instances', () => {
  it('destroys the obsolete copy, never starts it, and powers on the one that stayed, on that host, once', async () => {
    const { w, node } = await fencedWithKept();
    comesBack(node);
    await w.run(50);
    // Back in maintenance and cleaned; nothing started while fenced.
    expect(node.nodeState).toBe('disabled');
    expect(node.instances.find((i) => i.instanceId === MOVED)?.state).toBe('terminated');
    expect(startCalls(w)).toEqual([]);
    await enableService(w);
    expect(w.store.read().ha.hosts[A]?.owed).toMatchObject({ kind: 'powerOn', attempts: 0 });
    await w.run(100);
    expect(startCalls(w)).toEqual([{ instanceIds: [KEPT], onHost: A }]);
    expect(node.instances.find((i) => i.instanceId === KEPT)?.state).toBe('running');
    expect(liveCopies(w, KEPT)).toEqual([A]);
    expect(liveCopies(w, MOVED)).toHaveLength(1);
    expect(liveCopies(w, MOVED)).not.toContain(A);
    expect(w.store.read().ha.hosts[A]?.owed ?? null).toBeNull();
    expect(w.store.read().ha.events.map((e) => e.message)).toContainEqual(expect.stringMatching(/power-on of its own instances of 127\.0\.12\.1, attempt 1: done \(1 powered on \(i-00000001\)\)/));
    // Done is done: later passes start nothing more.
    await w.run(500);
    expect(startCalls(w)).toHaveLength(1);
  });

  it('waits while the node is in maintenance again, and powers on once it is enabled', async () => {
    const { w, node } = await fencedWithKept();
    comesBack(node);
    await w.run(50);
    await enableService(w);
    node.nodeState = 'disabled'; // an operator's DisableService right after
    await w.run(100);
    expect(startCalls(w)).toEqual([]);
    expect(w.store.read().ha.hosts[A]?.owed).toMatchObject({ kind: 'powerOn', lastOutcome: expect.stringMatching(/in maintenance \(disabled\)/) });
    node.nodeState = 'enabled';
    await w.run(400);
    expect(startCalls(w)).toEqual([{ instanceIds: [KEPT], onHost: A }]);
    expect(node.instances.find((i) => i.instanceId === KEPT)?.state).toBe('running');
    expect(w.store.read().ha.hosts[A]?.owed ?? null).toBeNull();
  });

  it('keeps the debt while the NC or the CC does not answer, and across a CLC restart', async () => {
    const { w, node } = await fencedWithKept();
    comesBack(node);
    await w.run(50);
    await enableService(w);
    node.reachable = false;
    w.fake.down.add(P);
    await w.run(300);
    expect(startCalls(w)).toEqual([]);
    expect(w.store.read().ha.hosts[A]?.owed).toMatchObject({ kind: 'powerOn' });
    expect(w.store.read().ha.hosts[A]?.owed?.attempts).toBeGreaterThanOrEqual(1);
    await w.runtime.stop();
    w.fake.down.delete(P);
    const second = await w.start();
    await w.run(100, second);
    expect(startCalls(w)).toEqual([]); // the NC is still silent
    node.reachable = true;
    await w.run(400, second);
    expect(startCalls(w)).toEqual([{ instanceIds: [KEPT], onHost: A }]);
    expect(w.store.read().ha.hosts[A]?.owed ?? null).toBeNull();
  });

  it('powers on nothing that was terminated, restarted elsewhere, or runs already; an empty host is done at once', async () => {
    const { w, node } = await fencedWithKept();
    comesBack(node);
    await w.run(50);
    await w.store.update((d) => { const r = d.instances[KEPT]; if (r) r.terminatedAt = w.clock.now(); });
    await w.run(50); // the terminated one's copy is obsolete too
    await enableService(w);
    await w.run(200);
    expect(startCalls(w)).toEqual([]);
    expect(w.store.read().ha.hosts[A]?.owed ?? null).toBeNull();
    expect(w.store.read().ha.events.map((e) => e.message)).toContainEqual(expect.stringMatching(/done \(none of its own instances is shut off\)/));
  });

  it('the action itself starts nothing on a host HA holds FENCED', async () => {
    const { w, node } = await fencedWithKept();
    comesBack(node);
    node.nodeState = 'enabled';
    const r = await w.runtime.actions.powerOn({ host: A, partition: P });
    expect(r).toEqual({ done: false, detail: `${A} is being fenced again: nothing is started there` });
    expect(startCalls(w)).toEqual([]);
  });
});

describe('host HA leaves an instance its user stopped down (issue 18)', () => {
  it('restarts it nowhere else when its host is fenced, and does not power it on when the host returns', async () => {
    const w = await world();
    await w.store.update((d) => {
      d.ha.instanceAutoRepair[KEPT] = 'off';
      const r = d.instances[MOVED];
      if (r) r.stoppedAt = 1;
    });
    const copy = w.fake.node(A)?.instances.find((i) => i.instanceId === MOVED);
    if (!copy) throw new Error(`${MOVED} is not on ${A}`);
    Object.assign(copy, { state: 'stopped', hypervisorState: 'shutoff', userStopped: true });
    await w.run(100);
    const node = loseNc(w, A, 'inactive');
    await w.run(800);
    expect(w.state(A)).toBe('FENCED');
    // Neither is restarted elsewhere: KEPT by its policy, MOVED because its user stopped it.
    expect(w.ops('ccRunInstances').slice(1)).toEqual([]);
    comesBack(node);
    await w.run(50);
    await enableService(w);
    await w.run(100);
    expect(startCalls(w)).toEqual([{ instanceIds: [KEPT], onHost: A }]);
    expect(node.instances.find((i) => i.instanceId === MOVED)).toMatchObject({ state: 'stopped', userStopped: true });
    expect(liveCopies(w, MOVED)).toEqual([A]);
  });
});
