/**
 * The CC's part of host HA (issue 6): ccCheckHostActivity asks a healthy neighbour (never the
 * suspect), ccRunInstances with restartFrom places a fenced host's known ids again elsewhere, and
 * ccTerminateInstances with onHost destroys the obsolete copies a fenced host still holds.
 */
import { describe, expect, it } from 'vitest';
import { SMALL } from '../fakeNodes.js';
import { CTX, harness, id, runReq } from '../harness.js';

const CAP = { cores: 4, memoryMiB: 4096, diskGiB: 100 };
const [A, B, C] = ['127.0.12.1', '127.0.12.2', '127.0.12.3'] as const;

describe('ccCheckHostActivity', () => {
  it('asks a healthy neighbour, not the suspect, and answers its verdict', async () => {
    const h = await harness({ nodes: [[A, CAP], [B, CAP], [C, CAP]] });
    h.fake.activity.set(A, 'inactive');
    h.fake.nc(A).link = 'down';
    const r = await h.ops.ccCheckHostActivity({ host: A, since: 0, timeoutMs: 1000 }, CTX);
    expect(r.outcome).toBe('inactive');
    expect(r.checkedBy).toBe(B);
    expect(h.fake.callsOf('activity').map((c) => c.host)).toEqual([B]);
  });

  it('does not wait for the suspect\'s own NC (hung: its poll never ends), only for the neighbours', async () => {
    const h = await harness({ nodes: [[A, CAP], [B, CAP]] });
    h.fake.activity.set(A, 'active');
    h.fake.gate = (call) => (call.op === 'describe' && call.host === A ? new Promise<void>(() => {}) : Promise.resolve());
    h.clock.advance(5000); // every node's data is stale: a check refreshes the neighbours first
    const r = await h.ops.ccCheckHostActivity({ host: A, since: 0, timeoutMs: 1000 }, CTX);
    expect(r).toMatchObject({ outcome: 'active', checkedBy: B });
    expect(h.fake.callsOf('describe').map((c) => c.host)).toEqual([B]);
    h.fake.gate = undefined;
  });

  it('moves on to the next neighbour when one fails', async () => {
    const h = await harness({ nodes: [[A, CAP], [B, CAP], [C, CAP]] });
    h.fake.activity.set(A, 'active');
    await h.keeper.refreshHosts([A, B, C], 500);
    h.fake.nc(B).dropReplies = 5; // describe is fresh; B's activity answer is lost
    h.clock.advance(0);
    const r = await h.ops.ccCheckHostActivity({ host: A, since: 0, timeoutMs: 1000 }, CTX);
    expect(r.outcome).toBe('active');
    expect(r.checkedBy).toBe(C);
  });

  it('is unknown, never inactive, without a neighbour', async () => {
    const h = await harness({ nodes: [[A, CAP], [B, CAP]] });
    h.fake.activity.set(A, 'inactive');
    h.fake.nc(B).link = 'down';
    h.clock.advance(5000);
    const r = await h.ops.ccCheckHostActivity({ host: A, since: 0, timeoutMs: 1000 }, CTX);
    expect(r).toMatchObject({ outcome: 'unknown', checkedBy: '' });
    expect(h.fake.callsOf('activity')).toEqual([]);
  });

  it('refuses an unknown host with NodeNotFound', async () => {
    const h = await harness({ nodes: [[A, CAP], [B, CAP]] });
    await expect(h.ops.ccCheckHostActivity({ host: '127.0.12.99', since: 0, timeoutMs: 1000 }, CTX)).rejects.toMatchObject({ code: 'NodeNotFound' });
  });
});

describe('restart of a fenced host\'s instances', () => {
  it('a plain launch of a known id adopts the copy; restartFrom places it again elsewhere, never on the fenced host', async () => {
    const h = await harness({ nodes: [[A, CAP], [B, CAP], [C, CAP]] });
    const i1 = id(1);
    const first = (await h.run(runReq([i1]))).instances[0]?.host as string;
    // The host dies behind the CC's back: its copy stays in the view (unreachable).
    h.fake.nc(first).link = 'down';
    h.clock.advance(5000);
    await h.keeper.refreshHosts([A, B, C], 500);
    h.fake.calls.length = 0;
    const retry = await h.run(runReq([i1]));
    expect(retry.instances[0]?.host).toBe(first); // adopted: nothing started
    expect(h.fake.callsOf('run')).toEqual([]);

    const restarted = await h.run({ ...runReq([i1]), restartFrom: [first] });
    expect(restarted.instances[0]?.host).not.toBe(first);
    expect(h.fake.callsOf('run').map((c) => c.host)).not.toContain(first);
    // Retrying the restart adopts the new copy.
    h.fake.calls.length = 0;
    const again = await h.run({ ...runReq([i1]), restartFrom: [first] });
    expect(again.instances[0]?.host).toBe(restarted.instances[0]?.host);
    expect(h.fake.callsOf('run')).toEqual([]);
  });

  it('a restart does not adopt an obsolete copy on another fenced host (issue 21)', async () => {
    const h = await harness({ nodes: [[A, CAP], [B, CAP], [C, CAP]] });
    // i1 ran on A (fenced earlier, its copy still listed) and was restarted on B, which is fenced now.
    h.fake.sneak(A, id(1));
    await h.keeper.refreshHosts([A, B, C], 500);
    h.keeper.setFencedHosts([A, B]);
    h.fake.calls.length = 0;
    const restarted = await h.run({ ...runReq([id(1)]), restartFrom: [B] });
    expect(restarted.instances[0]?.host).toBe(C);
    expect(h.fake.callsOf('run').map((c) => c.host)).toEqual([C]);
  });

  it('a CC that has not heard the fenced list yet (new leader) goes by the restart\'s avoidHosts (issue 21)', async () => {
    const h = await harness({ nodes: [[A, CAP], [B, CAP], [C, CAP]] });
    h.fake.sneak(A, id(1));
    await h.keeper.refreshHosts([A, B, C], 500);
    h.keeper.forgetFencedHosts();
    h.fake.calls.length = 0;
    const restarted = await h.run({ ...runReq([id(1)]), restartFrom: [B], avoidHosts: [A] });
    expect(restarted.instances[0]?.host).toBe(C);
    expect(h.fake.callsOf('run').map((c) => c.host)).toEqual([C]);
  });

  it('avoidHosts keeps a launch off hosts HA fences, even while they look enabled and empty; none fits: refused', async () => {
    const h = await harness({ nodes: [[A, CAP], [B, CAP]] });
    const placed = await h.run({ ...runReq([id(1), id(2), id(3)]), avoidHosts: [A] });
    expect(placed.instances.map((i) => i.host)).toEqual([B, B, B]);
    expect(h.fake.callsOf('run').map((c) => c.host)).not.toContain(A);
    h.fake.calls.length = 0;
    await expect(h.run({ ...runReq([id(4)]), avoidHosts: [A, B] })).rejects.toMatchObject({ code: 'InsufficientInstanceCapacity' });
    expect(h.fake.callsOf('run')).toEqual([]);
  });

  it('onHost terminates only the fenced host\'s copy once it is back', async () => {
    const h = await harness({ nodes: [[A, CAP], [B, CAP]] });
    h.fake.sneak(A, id(7));
    h.fake.sneak(B, id(7), SMALL);
    await h.keeper.refreshHosts([A, B], 500);
    const r = await h.ops.ccTerminateInstances({ instanceIds: [id(7)], onHost: A }, CTX);
    expect(r.instances).toEqual([{ instanceId: id(7), previousState: 'running', currentState: 'terminated' }]);
    expect(h.fake.live(A)).toEqual([]);
    expect(h.fake.live(B).map((i) => i.instanceId)).toEqual([id(7)]);
  });

  it('onHost refuses an id the host does not hold, and terminates nothing', async () => {
    const h = await harness({ nodes: [[A, CAP], [B, CAP]] });
    h.fake.sneak(A, id(7));
    await h.keeper.refreshHosts([A, B], 500);
    await expect(h.ops.ccTerminateInstances({ instanceIds: [id(7), id(8)], onHost: A }, CTX)).rejects.toMatchObject({ code: 'InstanceNotFound' });
    expect(h.fake.live(A).map((i) => i.instanceId)).toEqual([id(7)]);
  });
});
