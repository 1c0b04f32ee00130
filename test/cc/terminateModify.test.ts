import { describe, expect, it } from 'vitest';
import { DEFAULT_VM_TYPES } from '../../shared/model/vmTypes.js';
import { SMALL, slots } from './fakeNodes.js';
import { CTX, harness, id, ids, runReq } from './harness.js';

const A = '127.0.11.1';
const B = '127.0.11.2';
const SMALL_ONLY = [SMALL];

describe('ccTerminateInstances', () => {
  it('routes each id to its node and records the new state', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    await h.run(runReq(ids(1, 2)));
    const { instances } = await h.ops.ccTerminateInstances({ instanceIds: [id(2), id(1)] }, CTX);
    expect(instances).toEqual([
      { instanceId: id(2), previousState: 'running', currentState: 'terminated' },
      { instanceId: id(1), previousState: 'running', currentState: 'terminated' },
    ]);
    expect(h.fake.callsOf('terminate').map((c) => `${c.instanceId}@${c.host}`).sort()).toEqual([`${id(1)}@${A}`, `${id(2)}@${B}`]);
    expect(h.fake.live(A)).toEqual([]);
    expect(h.node(A).used).toEqual(slots(0));
  });

  it('an unknown id fails the whole request with InstanceNotFound and terminates nothing', async () => {
    const h = await harness({ nodes: [[A, slots(2)]] });
    await h.run(runReq([id(1)]));
    await expect(h.ops.ccTerminateInstances({ instanceIds: [id(1), id(0x77)] }, CTX)).rejects.toMatchObject({
      code: 'InstanceNotFound', status: 404, fields: { instanceId: id(0x77) },
    });
    expect(h.fake.callsOf('terminate')).toEqual([]);
    expect(h.fake.live(A)).toHaveLength(1);
  });

  it('refreshes before deciding an id is unknown (it may have started since the last poll)', async () => {
    const h = await harness({ nodes: [[A, slots(2)]] });
    h.fake.sneak(A, id(0x55));
    const { instances } = await h.ops.ccTerminateInstances({ instanceIds: [id(0x55)] }, CTX);
    expect(instances).toEqual([{ instanceId: id(0x55), previousState: 'running', currentState: 'terminated' }]);
  });

  it('an unreachable NC fails with NodeUnreachable before anything is terminated', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    await h.run(runReq(ids(1, 2)));
    h.fake.nc(B).link = 'down';
    h.clock.advance(2000); // the view of B is stale, so the request refreshes it first
    await expect(h.ops.ccTerminateInstances({ instanceIds: ids(1, 2) }, CTX)).rejects.toMatchObject({
      code: 'NodeUnreachable', status: 503, fields: { host: B },
    });
    expect(h.fake.callsOf('terminate')).toEqual([]);
    expect(h.node(B).reachable).toBe(false);
    expect(h.fake.live(A)).toHaveLength(1);
  });

  it('an NC that dies mid-request answers NodeUnreachable and is marked unreachable', async () => {
    const h = await harness({ nodes: [[A, slots(2)]] });
    await h.run(runReq([id(1)]));
    await h.settle();
    h.fake.gate = async (call) => { if (call.op === 'describe') h.fake.nc(A).link = 'down'; };
    h.clock.advance(2000);
    await expect(h.ops.ccTerminateInstances({ instanceIds: [id(1)] }, CTX)).rejects.toMatchObject({ code: 'NodeUnreachable' });
    expect(h.node(A).reachable).toBe(false);
  });
});

describe('ccModifyNode', () => {
  it('an unknown host is NodeNotFound and no NC is called', async () => {
    const h = await harness({ nodes: [[A, slots(2)]] });
    await expect(h.ops.ccModifyNode({ host: '127.0.11.99', stateName: 'disabled', vmTypes: SMALL_ONLY }, CTX)).rejects.toMatchObject({
      code: 'NodeNotFound', status: 404, fields: { host: '127.0.11.99' },
    });
    expect(h.fake.calls).toEqual([]);
  });

  it('an unreachable NC is NodeUnreachable; the view marks it and nothing else changes', async () => {
    const h = await harness({ nodes: [[A, slots(2)]] });
    h.fake.nc(A).link = 'down';
    await expect(h.ops.ccModifyNode({ host: A, stateName: 'disabled', vmTypes: SMALL_ONLY }, CTX)).rejects.toMatchObject({ code: 'NodeUnreachable' });
    expect(h.node(A)).toMatchObject({ reachable: false, nodeState: 'enabled' });
    expect(h.fake.nc(A).nodeState).toBe('enabled');
  });

  it('disables a node: replies with the previous state, the node and the matrix; then nothing lands there', async () => {
    const h = await harness({ nodes: [[A, slots(4)], [B, slots(2)]] });
    const r = await h.ops.ccModifyNode({ host: A, stateName: 'disabled', vmTypes: [...DEFAULT_VM_TYPES.slice(0, 2)] }, CTX);
    expect(r.previousState).toBe('enabled');
    expect(r.node).toMatchObject({ host: A, nodeState: 'disabled', reachable: true, partition: 'cluster01' });
    expect(r.matrix).toEqual([
      { vmType: 't1.micro', max: 6, available: 2, cores: 1, memoryMiB: 256, diskGiB: 5 },
      { vmType: 'm1.small', max: 6, available: 2, cores: 1, memoryMiB: 256, diskGiB: 5 },
    ]);
    const { instances } = await h.run(runReq(ids(1, 2)));
    expect(instances.map((i) => i.host)).toEqual([B, B]);
    await expect(h.run(runReq([id(3)]))).rejects.toMatchObject({ code: 'InsufficientInstanceCapacity', fields: { fit: 0 } });

    const back = await h.ops.ccModifyNode({ host: A, stateName: 'enabled', vmTypes: SMALL_ONLY }, CTX);
    expect(back.previousState).toBe('disabled');
    expect(back.matrix[0]?.available).toBe(4);
  });
});

describe('describe operations', () => {
  it('answer from the view, refreshing only nodes whose data is a second old', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    await h.ops.ccDescribeNodes({}, CTX);
    expect(h.fake.callsOf('describe')).toEqual([]);
    h.fake.sneak(A, id(0x42));
    h.clock.advance(1000);
    const { instances, partition } = await h.ops.ccDescribeInstances({}, CTX);
    expect(partition).toBe('cluster01');
    expect(h.fake.callsOf('describe').map((c) => c.host).sort()).toEqual([A, B]);
    expect(instances).toEqual([expect.objectContaining({ instanceId: id(0x42), host: A, partition: 'cluster01' })]);
  });

  it('ccDescribeResources counts only schedulable nodes as available', async () => {
    const h = await harness({ nodes: [[A, slots(4)], [B, slots(2), { nodeState: 'disabled' }]] });
    h.fake.sneak(A, id(1));
    h.clock.advance(1000);
    const { matrix } = await h.ops.ccDescribeResources({ vmTypes: SMALL_ONLY }, CTX);
    expect(matrix).toEqual([{ vmType: 'm1.small', max: 6, available: 3, cores: 1, memoryMiB: 256, diskGiB: 5 }]);
  });

  it('a dead NC shows reachable=false with its last known instances, and scheduling avoids it', async () => {
    const h = await harness({ nodes: [[A, slots(4)], [B, slots(4)]] });
    await h.run(runReq(ids(1, 2)));
    h.fake.nc(A).link = 'down';
    h.clock.advance(1000);
    const { nodes } = await h.ops.ccDescribeNodes({}, CTX);
    expect(nodes.find((n) => n.host === A)).toMatchObject({ reachable: false, instances: [{ instanceId: id(1) }] });
    // The instance list says it cannot vouch for what it does not show while A is unreachable.
    expect((await h.ops.ccDescribeInstances({}, CTX)).complete).toBe(false);
    h.fake.nc(A).link = 'up';
    h.clock.advance(1000);
    expect((await h.ops.ccDescribeInstances({}, CTX)).complete).toBe(true);
    h.fake.nc(A).link = 'down';
    h.clock.advance(1000);
    await h.ops.ccDescribeNodes({}, CTX);
    const { instances } = await h.run(runReq(ids(3, 2)));
    expect(instances.map((i) => i.host)).toEqual([B, B]);
    expect(h.fake.callsOf('run').filter((c) => c.host === A && c.instanceId === id(3))).toEqual([]);
  });

  it('after a restart, cached nodes answer as unreachable and unknown until their NC is heard, then the NC wins', async () => {
    const first = await harness({ nodes: [[A, slots(4)]] });
    await first.run(runReq([id(1)]));
    await first.ops.ccModifyNode({ host: A, stateName: 'disabled', vmTypes: SMALL_ONLY }, CTX);
    const cached = first.keeper.get().entries.map((e) => e.node);

    const h = await harness({ nodes: [[A, slots(4), { link: 'down' }]], cached, poll: false });
    const down = await h.ops.ccDescribeNodes({}, CTX);
    expect(down.nodes[0]).toMatchObject({ reachable: false, nodeState: 'unknown', instances: [{ instanceId: id(1) }] });

    // The NC comes back with a different truth than the cache. A read does not wait for a node whose
    // last contact failed: it answers from the last known state, marked stale, and asks again.
    h.fake.nc(A).link = 'up';
    h.fake.sneak(A, id(2));
    h.clock.advance(1000);
    const asked = await h.ops.ccDescribeNodes({}, CTX);
    expect(asked.nodes[0]).toMatchObject({ reachable: false, stale: true, instances: [{ instanceId: id(1) }] });
    await h.settle();
    // Its answer wins over the cache.
    const up = await h.ops.ccDescribeNodes({}, CTX);
    expect(up.nodes[0]).toMatchObject({ reachable: true, stale: false, nodeState: 'enabled', instances: [{ instanceId: id(2) }] });
  });
});

describe('ccTerminateInstances of an instance known only as terminated (sim seed 361)', () => {
  it('refuses with NodeUnreachable while a node that may run it is silent, and terminates nothing', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    await h.run(runReq([id(1)]));
    // A copy of id(1) ended on A (a tombstone) while the live one runs on B, which stops answering.
    const live = h.fake.live(A)[0];
    if (!live) throw new Error('id(1) should run on A');
    live.state = 'terminated';
    h.fake.sneak(B, id(1));
    h.fake.nc(B).link = 'down';
    h.clock.advance(2000);
    await expect(h.ops.ccTerminateInstances({ instanceIds: [id(1)] }, CTX)).rejects.toMatchObject({ code: 'NodeUnreachable', fields: { host: B } });
    expect(h.fake.callsOf('terminate')).toEqual([]);
    expect(h.fake.live(B)).toHaveLength(1);
  });

  it('asks every node first, and terminates the live copy once it is found', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    await h.run(runReq([id(1)]));
    const onA = h.fake.live(A)[0] ? A : B;
    const other = onA === A ? B : A;
    const copy = h.fake.live(onA)[0];
    if (!copy) throw new Error('id(1) should run somewhere');
    copy.state = 'terminated';
    h.fake.sneak(other, id(1));
    h.clock.advance(2000); // the view is stale: the request refreshes before routing
    const { instances } = await h.ops.ccTerminateInstances({ instanceIds: [id(1)] }, CTX);
    expect(instances).toEqual([{ instanceId: id(1), previousState: 'running', currentState: 'terminated' }]);
    expect(h.fake.callsOf('terminate').map((c) => c.host)).toEqual([other]);
    expect(h.fake.live(other)).toEqual([]);
  });

  it('answers from the tombstone when every node has answered (a repeated terminate)', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    await h.run(runReq([id(1)]));
    await h.ops.ccTerminateInstances({ instanceIds: [id(1)] }, CTX);
    const host = h.fake.callsOf('terminate')[0]?.host;
    const again = await h.ops.ccTerminateInstances({ instanceIds: [id(1)] }, CTX);
    expect(again.instances).toMatchObject([{ instanceId: id(1), currentState: 'terminated' }]);
    expect(h.fake.callsOf('terminate').map((c) => c.host)).toEqual([host, host]);
  });
});
