/**
 * Issue 16 item 9: a read (ccDescribeNodes, ccDescribeInstances, ccDescribeResources,
 * ccDescribeMigrations) never waits on an NC that does not answer: it answers from the node's last
 * known state, marked stale, while the refresh carries on. Fake NCs and a ManualClock: "answered" is
 * an event here (the promise settled while the clock stood still), never a measured time.
 */
import { describe, expect, it } from 'vitest';
import { READ_GRACE_MS } from '../../cc/service.js';
import { SMALL, slots, type Call } from './fakeNodes.js';
import { CTX, harness, id, latch, runReq } from './harness.js';

const A = '127.0.11.1';
const B = '127.0.11.2';
const VM_TYPES = [SMALL];

/** Whether `p` has settled once every pending callback has run (the ManualClock stands still meanwhile). */
async function settledNow(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => { done = true; }, () => { done = true; });
  for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
  return done;
}

/** Two nodes, an instance on each; B's NC then stops answering describes (SIGSTOP: nothing comes back). */
async function oneStopped() {
  const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]], policy: 'greedy' });
  await h.run(runReq([id(1), id(2), id(3)]));
  h.clock.advance(2000); // every node's data is now older than FRESH_MS
  const stopped = latch();
  h.fake.gate = (call: Call) => (call.host === B && call.op === 'describe' ? stopped.promise : Promise.resolve());
  return { h, stopped };
}

describe('reads while one NC is stopped', () => {
  it.each([
    ['ccDescribeNodes', (h: Awaited<ReturnType<typeof oneStopped>>['h']) => h.ops.ccDescribeNodes({}, CTX)],
    ['ccDescribeInstances', (h: Awaited<ReturnType<typeof oneStopped>>['h']) => h.ops.ccDescribeInstances({}, CTX)],
    ['ccDescribeResources', (h: Awaited<ReturnType<typeof oneStopped>>['h']) => h.ops.ccDescribeResources({ vmTypes: VM_TYPES }, CTX)],
    ['ccDescribeMigrations', (h: Awaited<ReturnType<typeof oneStopped>>['h']) => h.ops.ccDescribeMigrations({}, CTX)],
  ])('%s waits for the stopped NC only until its grace ends, then never again for that refresh', async (_op, read) => {
    const { h, stopped } = await oneStopped();
    const asked = h.fake.callsOf('describe').filter((c) => c.host === B).length;
    const first = read(h);
    expect(await settledNow(first), 'answered before the grace ended: it did not wait for the NC that answers').toBe(false);
    h.clock.advance(READ_GRACE_MS);
    expect(await settledNow(first), 'still waiting for the stopped NC after its grace').toBe(true);
    // The refresh of B is still out: a second read within it does not wait at all.
    h.clock.advance(600);
    expect(await settledNow(read(h))).toBe(true);
    expect(h.fake.callsOf('describe').filter((c) => c.host === B)).toHaveLength(asked + 1);
    stopped.open();
    await h.settle();
  });

  it('shows the stopped node stale with its last known state, and the others current', async () => {
    const { h, stopped } = await oneStopped();
    const nodes = h.ops.ccDescribeNodes({}, CTX);
    expect(await settledNow(nodes)).toBe(false); // A has answered by now; B has not
    h.clock.advance(READ_GRACE_MS);
    const { nodes: [a, b] } = await nodes;
    expect(a).toMatchObject({ host: A, reachable: true, stale: false, lastSeen: h.clock.now() - READ_GRACE_MS });
    expect(b).toMatchObject({ host: B, reachable: true, stale: true, nodeState: 'enabled' });
    expect(b?.lastSeen).toBeLessThan(h.clock.now() - 2000);
    expect(b?.instances.map((i) => i.instanceId)).toEqual([id(3)]);

    const listed = await h.ops.ccDescribeInstances({}, CTX);
    expect(listed.complete, 'an instance may have arrived on the silent node since').toBe(false);
    expect(listed.instances.map((i) => [i.instanceId, i.host, i.state])).toEqual([[id(1), A, 'running'], [id(2), A, 'running'], [id(3), B, 'running']]);
    // The matrix counts the stale node with its last known state (placement itself waits for fresh data).
    const { matrix } = await h.ops.ccDescribeResources({ vmTypes: VM_TYPES }, CTX);
    expect(matrix[0]).toMatchObject({ vmType: 'm1.small', available: 1 });

    // Once it answers again, it is current.
    stopped.open();
    await h.settle();
    h.clock.advance(1000);
    const again = h.ops.ccDescribeNodes({}, CTX);
    expect((await again).nodes.map((n) => n.stale)).toEqual([false, false]);
  });

  it('does not wait at all for a node whose last contact failed, but asks it again', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    h.fake.nc(B).link = 'down';
    h.clock.advance(2000);
    await h.keeper.refreshHosts([B], 500);
    expect(h.node(B).reachable).toBe(false);
    h.clock.advance(2000);
    const hold = latch();
    h.fake.gate = (call) => (call.host === B ? hold.promise : Promise.resolve());
    h.fake.nc(B).link = 'up';
    const before = h.fake.callsOf('describe').filter((c) => c.host === B).length;
    const answer = h.ops.ccDescribeNodes({}, CTX);
    expect(await settledNow(answer)).toBe(true);
    expect((await answer).nodes[1]).toMatchObject({ host: B, reachable: false, stale: true });
    expect(h.fake.callsOf('describe').filter((c) => c.host === B)).toHaveLength(before + 1);
    hold.open();
    await h.settle();
    expect(h.node(B).reachable).toBe(true);
  });

  it('waits for a node never heard from since the CC started until its first poll ends, grace or not', async () => {
    const h = await harness({ nodes: [[A, slots(2)]], poll: false });
    const hold = latch();
    h.fake.gate = () => hold.promise;
    const answer = h.ops.ccDescribeNodes({}, CTX);
    h.clock.advance(READ_GRACE_MS * 4);
    expect(await settledNow(answer)).toBe(false);
    hold.open();
    expect((await answer).nodes[0]).toMatchObject({ reachable: true, stale: false, nodeState: 'enabled' });
  });

  it('waits only what is left of the grace of a poll already under way', async () => {
    const { h, stopped } = await oneStopped();
    void h.keeper.refresh(B, 3000); // the safety-net poll went out
    h.clock.advance(READ_GRACE_MS - 100);
    const answer = h.ops.ccDescribeNodes({}, CTX);
    expect(await settledNow(answer)).toBe(false);
    h.clock.advance(100);
    expect(await settledNow(answer)).toBe(true);
    expect((await answer).nodes[1]).toMatchObject({ host: B, stale: true });
    stopped.open();
    await h.settle();
  });

  it('still waits for fresh data before placing a new instance (a change, not a read)', async () => {
    const { h, stopped } = await oneStopped();
    const placed = h.run(runReq([id(9)]));
    h.clock.advance(READ_GRACE_MS * 4);
    expect(await settledNow(placed), 'placement went ahead without waiting for the nodes it may place on').toBe(false);
    stopped.open();
    expect((await placed).instances.map((i) => i.instanceId)).toEqual([id(9)]);
  });
});

describe('a cached read (host HA\'s host list)', () => {
  it('answers from the view at once, asks no NC, and marks what is older than the freshness bound stale', async () => {
    const { h, stopped } = await oneStopped();
    const asked = h.fake.callsOf('describe').length;
    const read = h.ops.ccDescribeNodes({ cached: true }, CTX);
    expect(await settledNow(read)).toBe(true);
    const { nodes } = await read;
    expect(nodes.map((n) => [n.host, n.stale])).toEqual([[A, true], [B, true]]);
    expect(h.fake.callsOf('describe')).toHaveLength(asked);
    // A fresh read polls them; a cached read right after sees A current and asks nobody either.
    const fresh = h.ops.ccDescribeNodes({}, CTX);
    h.clock.advance(READ_GRACE_MS);
    await fresh;
    const afterFresh = h.fake.callsOf('describe').length;
    expect(afterFresh).toBeGreaterThan(asked);
    const again = await h.ops.ccDescribeNodes({ cached: true }, CTX);
    expect(again.nodes.map((n) => [n.host, n.stale])).toEqual([[A, false], [B, true]]);
    expect(h.fake.callsOf('describe')).toHaveLength(afterFresh);
    stopped.open();
    await h.settle();
  });
});
