import { describe, expect, it } from 'vitest';
import { LARGE, slots } from './fakeNodes.js';
import { CTX, harness, id, ids, latch, runReq } from './harness.js';

const A = '127.0.11.1';
const B = '127.0.11.2';
const C = '127.0.11.3';

/** Every instance id is live on at most one NC. */
function assertNoDuplicates(h: Awaited<ReturnType<typeof harness>>): void {
  const live = [...h.fake.ncs.keys()].flatMap((host) => h.fake.live(host).map((i) => i.instanceId));
  expect(new Set(live).size).toBe(live.length);
}

describe('ccRunInstances placement', () => {
  it('spreads instances over enabled nodes and answers with host and partition', async () => {
    const h = await harness({ nodes: [[A, slots(4)], [B, slots(4)]] });
    const { instances } = await h.run(runReq(ids(1, 4)));
    expect(instances.map((i) => [i.instanceId, i.host, i.partition])).toEqual([
      [id(1), A, 'cluster01'], [id(2), B, 'cluster01'], [id(3), A, 'cluster01'], [id(4), B, 'cluster01'],
    ]);
    expect(h.fake.live(A)).toHaveLength(2);
    expect(h.node(A).used).toEqual(slots(2));
  });

  it('greedy fills the first registered node before the next', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(4)]], policy: 'greedy' });
    const { instances } = await h.run(runReq(ids(1, 3)));
    expect(instances.map((i) => i.host)).toEqual([A, A, B]);
  });

  it('never chooses a disabled node', async () => {
    const h = await harness({ nodes: [[A, slots(8), { nodeState: 'disabled' }], [B, slots(2)]] });
    const { instances } = await h.run(runReq(ids(1, 2)));
    expect(instances.map((i) => i.host)).toEqual([B, B]);
    expect(h.fake.callsOf('run').every((c) => c.host === B)).toBe(true);
  });

  it.each([
    ['disabled', (h: Awaited<ReturnType<typeof harness>>) => { h.fake.nc(A).nodeState = 'disabled'; }, 'disabled'],
    ['filled by someone else', (h: Awaited<ReturnType<typeof harness>>) => { h.fake.sneak(A, id(0x99)); h.fake.sneak(A, id(0x98)); }, 'enabled'],
    ['unhealthy', (h: Awaited<ReturnType<typeof harness>>) => { h.fake.nc(A).healthy = false; }, 'enabled'],
    ['unreachable', (h: Awaited<ReturnType<typeof harness>>) => { h.fake.nc(A).link = 'down'; }, 'enabled'],
  ])('re-places an instance elsewhere when its NC has become %s since the last poll', async (_name, change, state) => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(1)]] });
    change(h);
    const { instances } = await h.run(runReq([id(1)]));
    expect(instances.map((i) => i.host)).toEqual([B]);
    expect(h.fake.callsOf('run').map((c) => c.host)).toEqual([A, B]);
    await h.settle();
    // The refusing node was refreshed, so the view now tells why it was skipped.
    const a = h.node(A);
    expect(a.reachable && a.healthy && a.nodeState === 'enabled' && a.used.cores < 2).toBe(false);
    if (h.fake.nc(A).link === 'up') expect(a.nodeState).toBe(state);
    assertNoDuplicates(h);
  });

  it('returns what started when at least minCount did (best effort up to the ids given)', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(1)]] });
    const { instances } = await h.run(runReq(ids(1, 5), 2));
    expect(instances.map((i) => i.instanceId)).toEqual(ids(1, 3));
  });

  it('fails before calling any NC when fewer than minCount fit, saying how many fit', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(1)]] });
    await expect(h.run(runReq(ids(1, 4), 4))).rejects.toMatchObject({
      code: 'InsufficientInstanceCapacity', status: 409, fields: { fit: 3, minCount: 4 },
      message: expect.stringContaining('only 3 of the minimum 4'),
    });
    expect(h.fake.callsOf('run')).toEqual([]);
  });

  it('is all-or-nothing below minCount: what started is terminated again', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    // Behind the view's back B fills up: only 2 of the 4 the view expects can start.
    h.fake.sneak(B, id(0x90));
    h.fake.sneak(B, id(0x91));
    await expect(h.run(runReq(ids(1, 4), 4))).rejects.toMatchObject({ code: 'InsufficientInstanceCapacity', fields: { fit: 2 } });
    expect(h.fake.live(A)).toEqual([]);
    expect(h.fake.live(B).map((i) => i.instanceId)).toEqual([id(0x90), id(0x91)]);
    expect(h.fake.callsOf('terminate').map((c) => c.instanceId).sort()).toEqual([id(1), id(3)]);
    await h.settle();
    expect(h.node(A).used).toEqual(slots(0));
  });

  it('after a lost reply, re-places only once the NC confirms the instance is gone', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(1)]] });
    h.fake.nc(A).dropReplies = 1;
    const { instances } = await h.run(runReq([id(1)]));
    expect(instances.map((i) => i.host)).toEqual([B]);
    expect(h.fake.calls.filter((c) => c.op !== 'describe').map((c) => `${c.op}@${c.host}`)).toEqual([`run@${A}`, `terminate@${A}`, `run@${B}`]);
    assertNoDuplicates(h);
  });

  it('never starts a second copy when the NC cannot confirm what happened', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(1)]] });
    h.fake.nc(A).dropReplies = 2; // the run and the clean-up terminate both lose their answers
    await expect(h.run(runReq([id(1)]))).rejects.toMatchObject({ code: 'InsufficientInstanceCapacity' });
    expect(h.fake.callsOf('run').map((c) => c.host)).toEqual([A]);
    assertNoDuplicates(h);
  });

  it('a repeated request for an id whose run could not be settled does not place it elsewhere (sim seed 859)', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    h.fake.nc(A).dropReplies = 1; // the run lands on A, its answer is lost ...
    h.fake.gate = (call) => {
      if (call.op === 'run' && call.host === A) h.fake.nc(A).link = 'down'; // ... and A goes away before the settling terminate
      return Promise.resolve();
    };
    await expect(h.run(runReq([id(1)]))).rejects.toMatchObject({ code: 'InsufficientInstanceCapacity' });
    h.fake.gate = () => Promise.resolve();
    // The same request again (a retry, a duplicate): A still silent, so nothing is placed on B.
    await expect(h.run(runReq([id(1)]))).rejects.toMatchObject({ code: 'InsufficientInstanceCapacity' });
    expect(h.fake.callsOf('run').map((c) => c.host)).toEqual([A]);
    // A answers again, holding the instance: the repeat adopts it there.
    h.fake.nc(A).link = 'up';
    const { instances } = await h.run(runReq([id(1)]));
    expect(instances.map((i) => [i.instanceId, i.host])).toEqual([[id(1), A]]);
    expect(h.fake.callsOf('run').map((c) => c.host)).toEqual([A]);
    assertNoDuplicates(h);
  });

  it('one request at a time: two requests for the last slot cannot both take it', async () => {
    const h = await harness({ nodes: [[A, slots(1)]] });
    const hold = latch();
    h.fake.gate = (call) => (call.op === 'run' ? hold.promise : Promise.resolve());
    const first = h.run(runReq([id(1)], 1, undefined, 'r-00000001'));
    const second = h.run(runReq([id(2)], 1, undefined, 'r-00000002'));
    await new Promise((r) => setTimeout(r, 5));
    expect(h.fake.callsOf('run').map((c) => c.instanceId)).toEqual([id(1)]);
    hold.open();
    await expect(first).resolves.toMatchObject({ instances: [{ instanceId: id(1) }] });
    await expect(second).rejects.toMatchObject({ code: 'InsufficientInstanceCapacity', fields: { fit: 0 } });
    expect(h.fake.callsOf('run')).toHaveLength(1);
    expect(h.fake.live(A)).toHaveLength(1);
  });

  it('counts its own placements in flight when re-placing, so a refusal cannot over-commit a node', async () => {
    // C has one slot and is taken by the first plan; when A refuses, the re-placed instance must
    // not also be sent to C while C's placement is still in flight.
    const h = await harness({ nodes: [[A, slots(1)], [B, slots(1)], [C, slots(1)]] });
    h.fake.nc(A).nodeState = 'disabled';
    const hold = latch();
    h.fake.gate = (call) => (call.op === 'run' && call.host !== A ? hold.promise : Promise.resolve());
    const p = h.run(runReq(ids(1, 3), 1));
    await new Promise((r) => setTimeout(r, 5));
    hold.open();
    const { instances } = await p;
    expect(instances.map((i) => i.host).sort()).toEqual([B, C]);
    expect(h.fake.callsOf('run').map((c) => c.host).sort()).toEqual([A, B, C]);
    for (const host of [A, B, C]) expect(h.fake.live(host).length).toBeLessThanOrEqual(1);
  });

  it('a retry of the same launch is idempotent; reusing an id for another launch is refused', async () => {
    const h = await harness({ nodes: [[A, slots(4)]] });
    const first = await h.run(runReq(ids(1, 2)));
    const again = await h.run(runReq(ids(1, 2)));
    expect(again.instances.map((i) => i.instanceId)).toEqual(first.instances.map((i) => i.instanceId));
    expect(h.fake.callsOf('run')).toHaveLength(2);
    await expect(h.run(runReq([id(2)], 1, LARGE, 'r-000000ff'))).rejects.toMatchObject({ code: 'InstanceExists', status: 409 });
  });

  it.each([
    ['duplicate ids', runReq([id(1), id(1)], 1), 'instanceIds'],
    ['minCount above the ids given', runReq([id(1)], 2), 'minCount'],
  ])('rejects %s as InvalidParameter before placing anything', async (_n, req, field) => {
    const h = await harness({ nodes: [[A, slots(4)]] });
    await expect(h.service.ops.ccRunInstances(req, CTX)).rejects.toMatchObject({ code: 'InvalidParameter', fields: { field } });
    expect(h.fake.calls).toEqual([]);
  });
});
