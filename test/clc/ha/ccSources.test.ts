/** Host HA's CC-backed sources (clc/ha/cloud/ccSources.ts) over the fake CCs and a ManualClock. */
import { describe, expect, it } from 'vitest';
import { ccActivitySource, ccHealthSource, ccHostFacts, freshNodes, sharedNodes, withDeadline } from '../../../clc/ha/cloud/ccSources.js';
import { ManualClock } from '../../../shared/clock.js';
import { FakeClusters } from '../fakeClusters.js';

const P = 'cluster01';
const [A, B] = ['127.0.12.1', '127.0.12.2'] as const;
const ref = { host: A, partition: P };

function world() {
  const clock = new ManualClock(1_000);
  const fake = new FakeClusters({ [P]: [{ host: A }, { host: B }] });
  fake.clock = clock;
  return { clock, fake };
}

describe('withDeadline', () => {
  it('rejects once the deadline passes on the injected clock, and cancels its timer otherwise', async () => {
    const clock = new ManualClock(0);
    const late = withDeadline(clock, 100, 'the CC', new Promise(() => undefined));
    clock.advance(100);
    await expect(late).rejects.toThrow('the CC did not answer within 100 ms');
    await expect(withDeadline(clock, 200, 'x', Promise.resolve(7))).resolves.toBe(7);
    expect(clock.pendingTimers()).toBe(0);
    await expect(withDeadline(clock, 50, 'x', Promise.resolve(1))).rejects.toThrow('no time left');
  });

  it('past its deadline, still observes the work it was given: a later failure is not an unhandled rejection (which stops the CLC)', async () => {
    const clock = new ManualClock(1000);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => { unhandled.push(e); };
    process.on('unhandledRejection', onUnhandled);
    try {
      let fail: (e: Error) => void = () => undefined;
      const work = new Promise<never>((_, reject) => { fail = reject; });
      await expect(withDeadline(clock, 500, 'power status', work)).rejects.toThrow('no time left');
      fail(new Error('fence agent not installed'));
      // Unhandled rejections are reported after the microtask queue drains: two macrotask turns.
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('CC-backed health, activity and facts', () => {
  it('health is the CC\'s view: reachable and healthy', async () => {
    const w = world();
    const health = ccHealthSource(w.fake, w.clock);
    expect(await health.isHealthy(ref, 2_000)).toMatchObject({ healthy: true });
    const n = w.fake.node(A);
    if (n) n.reachable = false;
    expect(await health.isHealthy(ref, 2_000)).toEqual({ healthy: false, detail: `the NC of ${A} did not answer its CC` });
    expect((await health.isHealthy({ host: '127.0.12.9', partition: P }, 2_000)).healthy).toBe(false);
  });

  it('fresh health checks asked together share one describe, never one sent before they asked', async () => {
    const w = world();
    const health = ccHealthSource(w.fake, w.clock, freshNodes(w.fake));
    const describes = (): number => w.fake.calls.filter((c) => c.op === 'ccDescribeNodes').length;
    const first = health.isHealthy(ref, 2_000);
    // B fails after the first describe was sent: checks asked now must not be answered by it.
    const b = w.fake.node(B);
    if (b) b.reachable = false;
    const later = [health.isHealthy({ host: B, partition: P }, 2_000), health.isHealthy({ host: B, partition: P }, 2_000), health.isHealthy(ref, 2_000)];
    expect((await first).healthy).toBe(true);
    const answers = await Promise.all(later);
    expect(answers.map((a) => a.healthy)).toEqual([false, false, true]);
    expect(describes()).toBe(2);
  });

  it('fresh nodes ask the CC for data no older than the partition\'s bound (host HA: its health-check interval)', async () => {
    const w = world();
    const bounds: Record<string, number | undefined> = { [P]: 10_000 };
    const nodes = freshNodes(w.fake, (p) => bounds[p]);
    await nodes(P);
    bounds[P] = undefined;
    await nodes(P);
    expect(w.fake.calls.filter((c) => c.op === 'ccDescribeNodes').map((c) => c.req)).toEqual([{ maxAgeMs: 10_000 }, {}]);
  });

  it('activity asks the CC with a budget inside the deadline', async () => {
    const w = world();
    w.fake.activity.set(A, 'inactive');
    const r = await ccActivitySource(w.fake, w.clock).hasActivity(ref, 500, 2_000);
    expect(r.outcome).toBe('inactive');
    const sent = w.fake.calls.find((c) => c.op === 'ccCheckHostActivity')?.req as { timeoutMs: number; since: number };
    expect(sent).toEqual({ host: A, since: 500, timeoutMs: 900 });
  });

  it('facts: operator maintenance counts, HA\'s own does not; neighbours are the other hosts that are up', async () => {
    const w = world();
    let state: 'FENCED' | 'AVAILABLE' = 'AVAILABLE';
    const facts = ccHostFacts(w.fake, () => state);
    expect(await facts.neighbours(ref)).toBe(1);
    const a = w.fake.node(A);
    if (a) a.nodeState = 'disabled';
    expect(await facts.inMaintenance(ref)).toBe(true);
    state = 'FENCED';
    expect(await facts.inMaintenance(ref)).toBe(false);
    const b = w.fake.node(B);
    if (b) b.reachable = false;
    expect(await facts.neighbours(ref)).toBe(0);
  });

  it('shared nodes: one ccDescribeNodes per partition within the age, a new one after', async () => {
    const w = world();
    const facts = ccHostFacts(w.fake, () => undefined, sharedNodes(w.fake, w.clock, 100));
    await facts.neighbours(ref);
    await facts.inMaintenance({ host: B, partition: P });
    expect(w.fake.calls.filter((c) => c.op === 'ccDescribeNodes')).toHaveLength(1);
    w.clock.advance(100);
    await facts.neighbours(ref);
    expect(w.fake.calls.filter((c) => c.op === 'ccDescribeNodes')).toHaveLength(2);
  });
});
