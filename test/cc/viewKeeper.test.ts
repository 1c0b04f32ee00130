import { describe, expect, it } from 'vitest';
import { applyStarted } from '../../cc/view.js';
import { MAX_POLLS_IN_FLIGHT } from '../../cc/pollPace.js';
import { ViewKeeper } from '../../cc/viewKeeper.js';
import { silentLogger } from '../../shared/log.js';
import { instance, slots } from './fakeNodes.js';
import { harness, id, latch, runReq } from './harness.js';

const A = '127.0.11.1';
const B = '127.0.11.2';

describe('ViewKeeper', () => {
  it('polls every NC at start and again each interval after a round ends', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]], poll: false });
    h.keeper.startPolling(5000, 500);
    await h.settle();
    expect(h.fake.callsOf('describe')).toHaveLength(2);
    expect(h.node(A).reachable).toBe(true);

    h.fake.nc(B).link = 'down';
    h.clock.advance(4999);
    await h.settle();
    expect(h.fake.callsOf('describe')).toHaveLength(2);
    h.clock.advance(1);
    await h.settle();
    expect(h.fake.callsOf('describe')).toHaveLength(4);
    expect(h.node(B)).toMatchObject({ reachable: false, nodeState: 'enabled' });

    await h.keeper.stop();
    expect(h.clock.pendingTimers()).toBe(0);
    h.clock.advance(60_000);
    expect(h.fake.callsOf('describe')).toHaveLength(4);
  });

  it('stopPolling stops the rounds (a CC replica that lost its lease) and startPolling resumes them at once', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]], poll: false });
    h.keeper.startPolling(5000, 500);
    await h.settle();
    expect(h.fake.callsOf('describe')).toHaveLength(2);
    await h.keeper.stopPolling();
    expect(h.clock.pendingTimers()).toBe(0);
    h.clock.advance(60_000);
    await h.settle();
    expect(h.fake.callsOf('describe')).toHaveLength(2);
    h.keeper.startPolling(5000, 500);
    h.keeper.startPolling(5000, 500); // a second start while polling changes nothing
    await h.settle();
    expect(h.fake.callsOf('describe')).toHaveLength(4);
    // The round arms its next timer once its answers are in (after settle's refreshes).
    await new Promise((r) => setImmediate(r));
    expect(h.clock.pendingTimers()).toBe(1);
    h.clock.advance(5000);
    await h.settle();
    expect(h.fake.callsOf('describe')).toHaveLength(6);
    await h.keeper.stop();
  });

  it('spreads a round over half the interval (issue 19: a burst of answers stalled the CC) and starts the next one interval after the last started', async () => {
    const hosts = Array.from({ length: 40 }, (_, i) => `127.0.11.${i + 10}`);
    const h = await harness({ nodes: hosts.map((host) => [host, slots(2)] as const), poll: false });
    const asked = () => new Set(h.fake.callsOf('describe').map((c) => c.host)).size;
    // 40 hosts over half of 1,000 ms: 16 at once, 16 at +50 ms, 8 at +100 ms.
    h.keeper.startPolling(1000, 500);
    await h.settle();
    expect(asked()).toBe(16);
    h.clock.advance(50);
    await h.settle();
    expect(asked()).toBe(32);
    h.clock.advance(50);
    await h.settle();
    expect(asked()).toBe(40);
    expect(h.fake.callsOf('describe')).toHaveLength(40);
    // The next round: 1,000 ms after this one started, not after it ended.
    await new Promise((r) => setImmediate(r));
    h.clock.advance(899);
    await h.settle();
    expect(h.fake.callsOf('describe')).toHaveLength(40);
    h.clock.advance(1);
    await h.settle();
    expect(h.fake.callsOf('describe')).toHaveLength(56);
    // Stopping in the middle of a round sends none of its later batches.
    await h.keeper.stopPolling();
    expect(h.clock.pendingTimers()).toBe(0);
    h.clock.advance(10_000);
    await h.settle();
    expect(h.fake.callsOf('describe')).toHaveLength(56);
    await h.keeper.stop();
  });

  it('keeps at most MAX_POLLS_IN_FLIGHT polls of a round unanswered (slow NCs are waited for, not piled on)', async () => {
    const hosts = Array.from({ length: MAX_POLLS_IN_FLIGHT + 40 }, (_, i) => `127.0.12.${i + 1}`);
    const h = await harness({ nodes: hosts.map((host) => [host, slots(2)] as const), poll: false });
    const hold = latch();
    h.fake.gate = async (call) => { if (call.op === 'describe') await hold.promise; };
    h.keeper.startPolling(10_000, 500);
    for (let t = 0; t < 5000; t += 50) {
      h.clock.advance(50);
      await new Promise((r) => setImmediate(r));
    }
    expect(h.fake.callsOf('describe')).toHaveLength(MAX_POLLS_IN_FLIGHT);
    hold.open();
    for (let t = 0; t < 1000; t += 50) {
      await h.settle();
      await new Promise((r) => setImmediate(r));
      h.clock.advance(50);
    }
    await h.settle();
    expect(new Set(h.fake.callsOf('describe').map((c) => c.host)).size).toBe(hosts.length);
    await h.keeper.stop();
  });

  it('drops a poll answer that was in flight across a change the CC made', async () => {
    const h = await harness({ nodes: [[A, slots(2)]] });
    const hold = latch();
    const asked = latch();
    h.fake.gate = (call) => {
      if (call.op !== 'describe') return Promise.resolve();
      asked.open();
      return hold.promise;
    };
    const poll = h.keeper.refresh(A, 500); // the NC answers "no instances", slowly
    await asked.promise; // the poll is in flight (a witness, not a 1 ms sleep)
    h.fake.gate = undefined;
    await h.run(runReq([id(1)]));
    hold.open();
    await poll;
    expect(h.node(A).instances.map((i) => i.instanceId)).toEqual([id(1)]);
  });

  it('joins a refresh in flight instead of asking the NC twice', async () => {
    const h = await harness({ nodes: [[A, slots(2)]] });
    await Promise.all([h.keeper.refresh(A, 500), h.keeper.refresh(A, 500), h.keeper.refreshStale(0, 500)]);
    expect(h.fake.callsOf('describe')).toHaveLength(1);
  });

  it('hands every change of a node to onChange (the cache), but not epoch-only updates', async () => {
    const h = await harness({ nodes: [[A, slots(2)]] });
    const seen: number[] = [];
    const k = new ViewKeeper({
      initial: h.keeper.get(), nodes: h.fake, clock: h.clock, logger: silentLogger(),
      onChange: (v) => seen.push(v.entries[0]?.node.instances.length ?? -1),
    });
    await k.change(A, async () => { k.update(A, (v) => applyStarted(v, A, instance(id(1)))); });
    expect(seen).toEqual([1]);
  });
});
