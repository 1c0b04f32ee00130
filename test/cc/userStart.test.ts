/** ccStopInstance / ccStartInstance / ccRebootInstance over fake NCs (issue 18 part 5): start on its own node, or re-homed. */
import { describe, expect, it } from 'vitest';
import { slots } from './fakeNodes.js';
import { CTX, harness, id, runReq } from './harness.js';

const A = '127.0.80.21';
const B = '127.0.80.22';
const C = '127.0.80.23';

async function oneOnA() {
  const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)], [C, slots(2)]] });
  // Only A takes it: B and C are disabled for the launch.
  h.fake.nc(B).nodeState = 'disabled';
  h.fake.nc(C).nodeState = 'disabled';
  await h.keeper.refreshHosts([B, C], 500);
  await h.run(runReq([id(1)]));
  expect(h.fake.live(A).map((i) => i.instanceId)).toEqual([id(1)]);
  h.fake.nc(B).nodeState = 'enabled';
  await h.keeper.refreshHosts([B], 500);
  return h;
}

describe('ccStopInstance, ccRebootInstance', () => {
  it('stops on its node and counts its room free at once; reboot goes to its node', async () => {
    const h = await oneOnA();
    await h.ops.ccRebootInstance({ instanceId: id(1) }, CTX);
    expect(h.fake.callsOf('reboot').map((c) => c.host)).toEqual([A]);
    const r = await h.ops.ccStopInstance({ instanceId: id(1), force: false }, CTX);
    expect(r).toEqual({ instanceId: id(1), host: A, previousState: 'running', currentState: 'stopped' });
    await h.settle();
    expect(h.node(A).used).toEqual({ cores: 0, memoryMiB: 0, diskGiB: 0 });
  });

  it('an unknown instance is InstanceNotFound; a fenced host\'s is NodeFenced; nothing is asked', async () => {
    const h = await oneOnA();
    await expect(h.ops.ccStopInstance({ instanceId: id(0x77), force: false }, CTX)).rejects.toMatchObject({ code: 'InstanceNotFound' });
    await h.ops.ccSetFencedHosts({ hosts: [A] }, CTX);
    await expect(h.ops.ccStopInstance({ instanceId: id(1), force: false }, CTX)).rejects.toMatchObject({ code: 'NodeFenced' });
    await expect(h.ops.ccRebootInstance({ instanceId: id(1) }, CTX)).rejects.toMatchObject({ code: 'NodeFenced' });
    expect(h.fake.callsOf('stop')).toEqual([]);
    expect(h.fake.callsOf('reboot')).toEqual([]);
  });
});

describe('ccStartInstance', () => {
  it('starts a stopped instance on its own enabled node', async () => {
    const h = await oneOnA();
    await h.ops.ccStopInstance({ instanceId: id(1), force: false }, CTX);
    const r = await h.ops.ccStartInstance({ instanceId: id(1) }, CTX);
    expect(r).toEqual({ instanceId: id(1), host: A, previousState: 'stopped', currentState: 'running' });
    expect(h.fake.callsOf('run')).toHaveLength(1);
  });

  it('a stopped instance whose node is disabled starts on an enabled node, and its old node forgets it', async () => {
    const h = await oneOnA();
    await h.ops.ccStopInstance({ instanceId: id(1), force: false }, CTX);
    h.fake.nc(A).nodeState = 'disabled';
    await h.keeper.refreshHosts([A], 500);
    h.fake.calls.length = 0;
    const r = await h.ops.ccStartInstance({ instanceId: id(1) }, CTX);
    expect(r).toMatchObject({ instanceId: id(1), host: B, previousState: 'stopped', currentState: 'running', movedFrom: A });
    // Started on B first, forgotten on A after: never no copy.
    expect(h.fake.calls.filter((c) => c.op === 'run' || c.op === 'terminate').map((c) => `${c.op}@${c.host}`)).toEqual([`run@${B}`, `terminate@${A}`]);
    expect(h.fake.live(B).map((i) => i.instanceId)).toEqual([id(1)]);
    expect(h.fake.live(A)).toEqual([]);
  });

  it('two starts at once of a stopped instance on a disabled node re-home it once: one copy, both told where it runs', async () => {
    const h = await oneOnA();
    await h.ops.ccStopInstance({ instanceId: id(1), force: false }, CTX);
    h.fake.nc(C).nodeState = 'enabled';
    h.fake.nc(A).nodeState = 'disabled';
    await h.keeper.refreshHosts([A, C], 500);
    h.fake.calls.length = 0;
    const [first, second] = await Promise.all([
      h.ops.ccStartInstance({ instanceId: id(1) }, CTX),
      h.ops.ccStartInstance({ instanceId: id(1) }, CTX),
    ]);
    expect(h.fake.calls.filter((c) => c.op === 'run')).toHaveLength(1);
    const copies = [A, B, C].flatMap((host) => h.fake.live(host).filter((i) => i.instanceId === id(1)).map(() => host));
    expect(copies).toHaveLength(1);
    expect(first.host).toBe(copies[0]);
    expect(second).toMatchObject({ host: copies[0], currentState: 'running' });
  });

  it('a node that refuses for room re-homes it too; no room anywhere is InsufficientInstanceCapacity and the stopped copy stays', async () => {
    const h = await oneOnA();
    await h.ops.ccStopInstance({ instanceId: id(1), force: false }, CTX);
    h.fake.nc(A).nodeState = 'disabled';
    h.fake.nc(B).nodeState = 'disabled';
    await h.keeper.refreshHosts([A, B], 500);
    await expect(h.ops.ccStartInstance({ instanceId: id(1) }, CTX)).rejects.toMatchObject({ code: 'InsufficientInstanceCapacity' });
    expect(h.fake.nc(A).instances.find((i) => i.instanceId === id(1))).toMatchObject({ state: 'stopped', userStopped: true });
    expect(h.fake.callsOf('terminate')).toEqual([]);
  });

  it('is never re-homed onto a host it is told to avoid', async () => {
    const h = await oneOnA();
    await h.ops.ccStopInstance({ instanceId: id(1), force: false }, CTX);
    h.fake.nc(A).nodeState = 'disabled';
    h.fake.nc(C).nodeState = 'enabled';
    await h.keeper.refreshHosts([A, C], 500);
    const r = await h.ops.ccStartInstance({ instanceId: id(1), avoidHosts: [B] }, CTX);
    expect(r).toMatchObject({ host: C, movedFrom: A });
  });

  it('re-homes one with a volume attached, the volume in its new copy from the start (issue 18)', async () => {
    const h = await oneOnA();
    await h.ops.ccStopInstance({ instanceId: id(1), force: false }, CTX);
    const copy = h.fake.nc(A).instances.find((i) => i.instanceId === id(1));
    if (!copy) throw new Error('no copy on A');
    const volume = { volumeId: 'vol-00000001', device: '/dev/vdb', path: '/srv/volumes/vol-00000001.img' };
    copy.volumes = [{ ...volume, status: 'attached' }];
    h.fake.nc(A).nodeState = 'disabled';
    await h.keeper.refreshHosts([A], 500);
    h.fake.calls.length = 0;
    const r = await h.ops.ccStartInstance({ instanceId: id(1) }, CTX);
    expect(r).toMatchObject({ host: B, movedFrom: A });
    expect(h.fake.live(B).find((i) => i.instanceId === id(1))?.volumes).toEqual([{ ...volume, status: 'attached' }]);
    expect(h.fake.calls.filter((c) => c.op === 'run' || c.op === 'terminate').map((c) => `${c.op}@${c.host}`)).toEqual([`run@${B}`, `terminate@${A}`]);
  });

  it('refuses, changing nothing: unknown, re-homing from an unreachable node, re-homing with a volume between steps', async () => {
    const h = await oneOnA();
    await expect(h.ops.ccStartInstance({ instanceId: id(0x77) }, CTX)).rejects.toMatchObject({ code: 'InstanceNotFound' });
    await h.ops.ccStopInstance({ instanceId: id(1), force: false }, CTX);
    const copy = h.fake.nc(A).instances.find((i) => i.instanceId === id(1));
    if (!copy) throw new Error('no copy on A');
    copy.volumes = [{ volumeId: 'vol-00000001', device: '/dev/vdb', status: 'detaching', path: '/tmp/v' }];
    h.fake.nc(A).nodeState = 'disabled';
    await h.keeper.refreshHosts([A], 500);
    h.fake.calls.length = 0;
    await expect(h.ops.ccStartInstance({ instanceId: id(1) }, CTX)).rejects.toMatchObject({ code: 'InstanceStateConflict' });
    delete copy.volumes;
    h.fake.nc(A).link = 'down';
    await h.keeper.refreshHosts([A], 500);
    await expect(h.ops.ccStartInstance({ instanceId: id(1) }, CTX)).rejects.toMatchObject({ code: 'NodeUnreachable' });
    expect(h.fake.calls.filter((c) => c.op === 'run' || c.op === 'terminate' || c.op === 'start')).toEqual([]);
  });
});

describe('ccStartInstance of an instance the view shows running (sim seed 203)', () => {
  it('asks its NC, which clears the mark of a stop whose answer was lost; an NC that does not answer refuses', async () => {
    const h = await oneOnA();
    // The stop reached the NC (its mark persisted) but the CC never heard: its view still says running.
    const copy = h.fake.nc(A).instances.find((i) => i.instanceId === id(1));
    if (!copy) throw new Error('no copy on A');
    copy.userStopped = true;
    h.fake.calls.length = 0;
    const r = await h.ops.ccStartInstance({ instanceId: id(1) }, CTX);
    expect(r).toEqual({ instanceId: id(1), host: A, previousState: 'running', currentState: 'running' });
    expect(h.fake.callsOf('start').map((c) => c.host)).toEqual([A]);
    expect(copy.userStopped).toBeUndefined();
    h.fake.nc(A).link = 'down';
    await expect(h.ops.ccStartInstance({ instanceId: id(1) }, CTX)).rejects.toMatchObject({ code: 'NodeUnreachable' });
  });
});

describe('a drain re-homes the stopped instances of its node (cold moves)', () => {
  it('plans the running one live and moves the stopped one, not started, onto an allowed host; the source forgets it', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)], [C, slots(2)]] });
    h.fake.nc(B).nodeState = 'disabled';
    h.fake.nc(C).nodeState = 'disabled';
    await h.keeper.refreshHosts([B, C], 500);
    await h.run(runReq([id(1), id(2)]));
    h.fake.nc(B).nodeState = 'enabled';
    h.fake.nc(C).nodeState = 'enabled';
    await h.keeper.refreshHosts([B, C], 500);
    await h.ops.ccStopInstance({ instanceId: id(2), force: false }, CTX);
    const r = await h.ops.ccMigrateInstances({
      sourceHost: A, destinations: [C], allowHosts: true, reserveDestinations: false, partial: false, vmTypes: [],
    }, CTX);
    expect(r.plan.items.map((i) => [i.instanceId, i.destination])).toEqual([[id(1), C]]);
    expect(r.rehomed).toEqual([{ instanceId: id(2), destination: C }]);
    expect(r.notRehomed).toEqual([]);
    expect(h.fake.nc(C).instances.find((i) => i.instanceId === id(2))).toMatchObject({ state: 'stopped', userStopped: true });
    expect(h.fake.callsOf('run').at(-1)).toMatchObject({ host: C, instanceId: id(2) });
    expect(h.fake.nc(A).instances.find((i) => i.instanceId === id(2))?.state).toBe('terminated');
    // The stopped copy on C stands for it, not the tombstone on A: its user's start finds it there.
    await h.settle();
    expect(await h.ops.ccStartInstance({ instanceId: id(2) }, CTX)).toMatchObject({ host: C, previousState: 'stopped', currentState: 'running' });
  });

  it('an instance move (InstanceId) re-homes nothing; a stopped one that fits nowhere stays, named', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    h.fake.nc(B).nodeState = 'disabled';
    await h.keeper.refreshHosts([B], 500);
    await h.run(runReq([id(1), id(2)]));
    h.fake.nc(B).nodeState = 'enabled';
    await h.keeper.refreshHosts([B], 500);
    await h.ops.ccStopInstance({ instanceId: id(2), force: false }, CTX);
    const one = await h.ops.ccMigrateInstances({ instanceId: id(1), destinations: [], allowHosts: true, reserveDestinations: false, partial: false, vmTypes: [] }, CTX);
    expect(one.rehomed).toBeUndefined();
    // The live move takes B's room (reserved): the stopped one has nowhere to go.
    const h2 = await harness({ nodes: [[A, slots(2)], [B, slots(1)]] });
    h2.fake.nc(B).nodeState = 'disabled';
    await h2.keeper.refreshHosts([B], 500);
    await h2.run(runReq([id(1), id(2)]));
    h2.fake.nc(B).nodeState = 'enabled';
    await h2.keeper.refreshHosts([B], 500);
    await h2.ops.ccStopInstance({ instanceId: id(2), force: false }, CTX);
    const drain = await h2.ops.ccMigrateInstances({ sourceHost: A, destinations: [], allowHosts: true, reserveDestinations: false, partial: false, vmTypes: [] }, CTX);
    expect(drain.plan.items.map((i) => i.instanceId)).toEqual([id(1)]);
    expect(drain.rehomed).toEqual([]);
    expect(drain.notRehomed?.map((n) => n.instanceId)).toEqual([id(2)]);
    expect(h2.fake.nc(A).instances.find((i) => i.instanceId === id(2))).toMatchObject({ state: 'stopped', userStopped: true });
  });
});
