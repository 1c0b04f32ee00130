/** Host HA's CC-backed sources (clc/ha/cloud/ccSources.ts) over the fake CCs and a ManualClock. */
import { describe, expect, it } from 'vitest';
import { ccActivitySource, ccHealthSource, ccHostFacts, freshNodes, sharedNodes, withDeadline } from '../../../clc/ha/cloud/ccSources.js';
import { LEGACY_RETRY_MS, NodeHealthReader } from '../../../clc/ha/cloud/nodeHealthReader.js';
import { ManualClock } from '../../../shared/clock.js';
import { FakeClusters } from '../fakeClusters.js';

const P = 'cluster01';
const [A, B] = ['127.0.12.1', '127.0.12.2'] as const;
const ref = { host: A, partition: P };

function world() {
  const clock = new ManualClock(1_000);
  const fake = new FakeClusters({ [P]: [{ host: A }, { host: B }] });
  fake.clock = clock;
  const reader = new NodeHealthReader(fake, clock);
  const reads = (op: 'ccDescribeNodeHealth' | 'ccDescribeNodes' = 'ccDescribeNodeHealth'): unknown[] => fake.calls.filter((c) => c.op === op).map((c) => c.req);
  return { clock, fake, reader, reads };
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
    const health = ccHealthSource(w.fake, w.clock, freshNodes(w.reader));
    const describes = (): number => w.reads().length;
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
    const nodes = freshNodes(w.reader, (p) => bounds[p]);
    await nodes(P);
    bounds[P] = undefined;
    await nodes(P);
    // The second read carries the version of the first answer (the same kind: fresh).
    const sent = w.reads() as { maxAgeMs?: number; knownVersion?: string }[];
    expect(sent.map((r) => r.maxAgeMs)).toEqual([10_000, undefined]);
    expect(sent[0]?.knownVersion).toBeUndefined();
    expect(sent[1]?.knownVersion).toMatch(/^fake-f:/);
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
    const facts = ccHostFacts(w.fake, w.clock, () => state);
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

  it('shared nodes: one cached read per partition within the age, a new one after', async () => {
    const w = world();
    const facts = ccHostFacts(w.fake, w.clock, () => undefined, sharedNodes(w.reader, w.clock, 100));
    await facts.neighbours(ref);
    await facts.inMaintenance({ host: B, partition: P });
    expect(w.reads()).toHaveLength(1);
    w.clock.advance(100);
    await facts.neighbours(ref);
    expect(w.reads()).toEqual([{ cached: true }, { cached: true, knownVersion: expect.stringMatching(/^fake-c:/) as unknown }]);
  });
});

describe('host HA\'s versioned reads of the nodes (issue 19, ccDescribeNodeHealth)', () => {
  it('an unchanged answer hands back the very list held; a changed node brings a new list and version', async () => {
    const w = world();
    const first = await w.reader.read(P, {});
    const second = await w.reader.read(P, {});
    expect(second.hosts).toBe(first.hosts);
    const sent = w.reads() as { knownVersion?: string }[];
    expect(sent[0]?.knownVersion).toBeUndefined();
    expect(sent[1]?.knownVersion).toMatch(/^fake-f:/);
    const b = w.fake.node(B);
    if (b) b.reachable = false;
    const third = await w.reader.read(P, {});
    expect(third.hosts).not.toBe(first.hosts);
    expect(third.hosts.find((h) => h.host === B)).toMatchObject({ reachable: false, stale: true });
    // The cached kind keeps its own copy: its first read is in full, whatever the fresh kind holds.
    await w.reader.read(P, { cached: true });
    expect((w.reads().at(-1) as { knownVersion?: string }).knownVersion).toBeUndefined();
  });

  it('health and facts read from the compact tuple: reachable, healthy, disabled, quarantined', async () => {
    const w = world();
    const health = ccHealthSource(w.fake, w.clock, freshNodes(w.reader));
    const facts = ccHostFacts(w.fake, w.clock, () => undefined, freshNodes(w.reader));
    const a = w.fake.node(A);
    if (!a) throw new Error('no A');
    a.healthy = false;
    expect(await health.isHealthy(ref, 2_000)).toEqual({ healthy: false, detail: `the NC of ${A} has no connection to its hypervisor` });
    expect(await facts.neighbours({ host: B, partition: P })).toBe(0);
    a.healthy = true;
    expect(await facts.inMaintenance(ref)).toBe(false);
    a.quarantine = { since: 1, reason: 'disk' };
    expect(await facts.inMaintenance(ref)).toBe(true);
    expect(w.reads('ccDescribeNodes')).toEqual([]);
  });

  it('a CC that does not serve it (an older CC) is read with ccDescribeNodes, and asked again after LEGACY_RETRY_MS', async () => {
    const w = world();
    w.fake.notServed.add('ccDescribeNodeHealth');
    const health = ccHealthSource(w.fake, w.clock, freshNodes(w.reader, () => 5_000));
    const b = w.fake.node(B);
    if (b) b.reachable = false;
    expect(await health.isHealthy(ref, 2_000)).toMatchObject({ healthy: true });
    expect(await health.isHealthy({ host: B, partition: P }, 2_000)).toEqual({ healthy: false, detail: `the NC of ${B} did not answer its CC` });
    // Refused once; the second read went straight to ccDescribeNodes, with the same freshness.
    expect(w.reads()).toHaveLength(1);
    expect(w.reads('ccDescribeNodes')).toEqual([{ maxAgeMs: 5_000 }, { maxAgeMs: 5_000 }]);
    const facts = ccHostFacts(w.fake, w.clock, () => undefined, sharedNodes(w.reader, w.clock, 100));
    expect(await facts.neighbours({ host: B, partition: P })).toBe(1);
    expect(w.reads('ccDescribeNodes').at(-1)).toEqual({ cached: true });
    // Upgraded meanwhile: after LEGACY_RETRY_MS the new operation is asked again, and used from then on.
    w.fake.notServed.delete('ccDescribeNodeHealth');
    w.clock.advance(LEGACY_RETRY_MS);
    expect(await health.isHealthy(ref, w.clock.now() + 1_000)).toMatchObject({ healthy: true });
    expect(w.reads()).toHaveLength(2);
    expect(w.reads('ccDescribeNodes')).toHaveLength(3);
  });

  it('an unchanged answer for a version this CLC does not hold is asked again in full', async () => {
    const w = world();
    let lie = true;
    const clusters = {
      partitions: w.fake.partitions,
      call: (async (partition: string, op: string, req: { knownVersion?: string }) => {
        const r = await w.fake.call(partition, op as never, req as never);
        if (op !== 'ccDescribeNodeHealth' || !lie) return r;
        lie = false;
        return { partition, version: 'v-not-held', unchanged: true };
      }) as typeof w.fake.call,
    };
    const answer = await new NodeHealthReader(clusters, w.clock).read(P, {});
    expect(answer.hosts.map((h) => h.host)).toEqual([A, B]);
    expect(w.reads()).toEqual([{}, {}]);
  });

  it('an answer that is neither unchanged nor carries hosts is a ServiceUnavailable, not an empty cluster', async () => {
    const w = world();
    const clusters = {
      partitions: w.fake.partitions,
      call: (async (partition: string) => ({ partition, version: 'v1' })) as typeof w.fake.call,
    };
    await expect(new NodeHealthReader(clusters, w.clock).read(P, {})).rejects.toMatchObject({ code: 'ServiceUnavailable' });
  });

  it('issue 21: a standby CC replica\'s word that a node is down is inconclusive; that it is up stands', async () => {
    const w = world();
    const health = ccHealthSource(w.fake, w.clock, freshNodes(w.reader));
    const b = w.fake.node(B);
    if (b) b.reachable = false;
    w.fake.leading = false;
    expect(await health.isHealthy(ref, 2_000)).toMatchObject({ healthy: true });
    await expect(health.isHealthy({ host: B, partition: P }, 2_000)).rejects.toMatchObject({ code: 'SourceInconclusive' });
    await expect(health.isHealthy({ host: '127.0.12.9', partition: P }, 2_000)).rejects.toMatchObject({ code: 'SourceInconclusive' });
    // `leading` is the current answer's, also when the list is unchanged from the leader's.
    w.fake.leading = true;
    expect(await health.isHealthy({ host: B, partition: P }, 2_000)).toMatchObject({ healthy: false });
    w.fake.leading = false;
    await expect(health.isHealthy({ host: B, partition: P }, 2_000)).rejects.toMatchObject({ code: 'SourceInconclusive' });
    // The same from an older CC (ccDescribeNodes' leading).
    w.fake.notServed.add('ccDescribeNodeHealth');
    await expect(ccHealthSource(w.fake, w.clock, freshNodes(new NodeHealthReader(w.fake, w.clock))).isHealthy({ host: B, partition: P }, 2_000))
      .rejects.toMatchObject({ code: 'SourceInconclusive' });
  });
});
