import { describe, expect, it } from 'vitest';
import { DEFAULT_NOTIFY_TIMEOUT_MS, NOTIFY_RETRY_FIRST_MS, NOTIFY_RETRY_MAX_MS, WireCcNotifier, notifyRetryDelayMs } from '../../nc/ccNotifier.js';
import { ManualClock } from '../../shared/clock.js';
import { silentLogger } from '../../shared/log.js';
import { WireErrors } from '../../shared/wire/errors.js';
import type { CallOptions, WireTransport } from '../../shared/wire/transport.js';
import type { WireObject } from '../../shared/wire/xmlCodec.js';
import { settle } from './fixtures.js';
import { notLeaderText } from '../../shared/leader/leaderRouting.js';

/** A hand-written transport: records calls; each answers when the test says so. */
class FakeTransport implements WireTransport {
  readonly calls: { endpoint: string; operation: string; body: WireObject; opts?: CallOptions }[] = [];
  private readonly pending: { resolve: (v: WireObject) => void; reject: (e: unknown) => void }[] = [];

  call(endpoint: string, operation: string, body: WireObject, opts?: CallOptions): Promise<WireObject> {
    this.calls.push({ endpoint, operation, body, opts });
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  }

  answerAll(): void {
    for (const p of this.pending.splice(0)) p.resolve({});
  }

  failAll(): void {
    for (const p of this.pending.splice(0)) p.reject(WireErrors.make('PeerUnreachable', { peer: 'cc', detail: 'ECONNREFUSED' }));
  }
}

const CC = 'http://127.0.0.1:8774';

describe('CC notifier', () => {
  it('sends ccNodeEvent with its own timeout (DEFAULT_NOTIFY_TIMEOUT_MS), without waiting for the answer', async () => {
    const t = new FakeTransport();
    const n = new WireCcNotifier({ transport: t, ccUrl: CC, logger: silentLogger() });
    n.notify({ host: '127.0.10.1', kind: 'migration', migrationId: 'mig-0000000a', instanceId: 'i-0000000a' });
    await settle();
    expect(t.calls).toEqual([{
      endpoint: CC, operation: 'ccNodeEvent', opts: { timeoutMs: DEFAULT_NOTIFY_TIMEOUT_MS },
      body: { host: '127.0.10.1', kind: 'migration', migrationId: 'mig-0000000a', instanceId: 'i-0000000a' },
    }]);
    t.answerAll();
  });

  it('sends a hint the CC did not take again after a back-off, until it is taken', async () => {
    const t = new FakeTransport();
    const clock = new ManualClock(0);
    const n = new WireCcNotifier({ transport: t, ccUrl: CC, logger: silentLogger(), clock });
    n.notify({ host: '127.0.10.1', kind: 'instance', instanceId: 'i-0000000a' });
    await settle();
    expect(t.calls).toHaveLength(1);
    t.failAll();
    await settle();
    // Nothing is sent before the back-off ends.
    const first = notifyRetryDelayMs('127.0.10.1', 1);
    clock.advance(first - 1);
    await settle();
    expect(t.calls).toHaveLength(1);
    clock.advance(1);
    await settle();
    expect(t.calls).toHaveLength(2);
    t.failAll();
    await settle();
    // The back-off doubles (its ceiling; the wait is between half and all of it).
    const second = notifyRetryDelayMs('127.0.10.1', 2);
    clock.advance(second - 1);
    await settle();
    expect(t.calls).toHaveLength(2);
    clock.advance(1);
    await settle();
    expect(t.calls).toHaveLength(3);
    expect(t.calls[2]!.body).toEqual({ host: '127.0.10.1', kind: 'instance', instanceId: 'i-0000000a' });
    t.answerAll();
    await settle();
    clock.advance(NOTIFY_RETRY_MAX_MS);
    await settle();
    expect(t.calls).toHaveLength(3);
    n.close();
  });

  it('CC replicas (issue 21): a hint goes to the leader a follower names, and one no replica takes is sent again', async () => {
    const A = 'http://127.0.96.1:19860';
    const B = 'http://127.0.96.2:19861';
    const sent: string[] = [];
    const elected: { leader?: string } = {};
    const transport: WireTransport = {
      call: (endpoint, operation) => {
        sent.push(endpoint);
        if (endpoint === elected.leader) return Promise.resolve({});
        return Promise.reject(WireErrors.make('RemoteFault', { peer: endpoint, operation, remoteCode: 'NotLeader', remoteMessage: `does not lead: ${notLeaderText(endpoint, elected.leader)}` }));
      },
    };
    const clock = new ManualClock(0);
    const n = new WireCcNotifier({ transport, ccUrl: A, ccUrls: [A, B], logger: silentLogger(), clock });
    // No leader elected: both refuse; the hint waits out a back-off like an unreachable CC's.
    n.notify({ host: '127.0.10.1', kind: 'node' });
    await settle();
    expect(sent).toEqual([A, B]);
    elected.leader = B;
    clock.advance(NOTIFY_RETRY_FIRST_MS);
    await settle();
    expect(sent).toEqual([A, B, A, B]);
    // Now straight to the leader.
    n.notify({ host: '127.0.10.1', kind: 'node' });
    await settle();
    expect(sent).toEqual([A, B, A, B, B]);
    n.close();
  });

  it('coalesces hints that say the same: one in flight, at most one more after it', async () => {
    const t = new FakeTransport();
    const n = new WireCcNotifier({ transport: t, ccUrl: CC, logger: silentLogger(), clock: new ManualClock(0) });
    for (let i = 0; i < 5; i++) n.notify({ host: '127.0.10.1', kind: 'node' });
    await settle();
    expect(t.calls).toHaveLength(1);
    t.answerAll();
    await settle();
    expect(t.calls).toHaveLength(2);
    t.answerAll();
    await settle();
    expect(t.calls).toHaveLength(2);
  });

  it('keeps at most maxInFlight sent; many different hints during an outage collapse into one for the node', async () => {
    const t = new FakeTransport();
    const clock = new ManualClock(0);
    const n = new WireCcNotifier({ transport: t, ccUrl: CC, logger: silentLogger(), clock, maxInFlight: 2, maxPending: 8 });
    const id = (i: number): string => `i-${i.toString(16).padStart(8, '0')}`;
    for (let i = 0; i < 100; i++) n.notify({ host: '127.0.10.1', kind: 'instance', instanceId: id(i) });
    await settle();
    expect(t.calls).toHaveLength(2);
    t.failAll();
    await settle();
    clock.advance(NOTIFY_RETRY_FIRST_MS);
    await settle();
    // Waiting never exceeds maxPending; what waited collapsed into one hint about the whole node.
    for (let round = 0; round < 10; round++) {
      t.answerAll();
      await settle();
    }
    const bodies = t.calls.slice(2).map((c) => c.body);
    expect(bodies).toContainEqual({ host: '127.0.10.1', kind: 'node' });
    expect(bodies.length).toBeLessThanOrEqual(8 + 2);
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(bodies.length);
  });

  it('never sends a hint that breaks the contract', async () => {
    const t = new FakeTransport();
    const n = new WireCcNotifier({ transport: t, ccUrl: CC, logger: silentLogger() });
    n.notify({ host: 'not-an-address', kind: 'node' });
    await settle();
    expect(t.calls).toEqual([]);
  });
});

describe('notifyRetryDelayMs: equal jitter spread by host', () => {
  const hosts = Array.from({ length: 2000 }, (_, i) => `127.64.${Math.floor(i / 250)}.${(i % 250) + 1}`);
  it.each([1, 2, 3, 5, 8, 40])('attempt %i: between half and all of the doubling ceiling, the same for the same host', (attempt) => {
    const ceiling = Math.min(NOTIFY_RETRY_MAX_MS, NOTIFY_RETRY_FIRST_MS * 2 ** (attempt - 1));
    for (const h of hosts.slice(0, 200)) {
      const d = notifyRetryDelayMs(h, attempt);
      expect(d).toBeGreaterThanOrEqual(ceiling / 2);
      expect(d).toBeLessThanOrEqual(ceiling);
      expect(notifyRetryDelayMs(h, attempt)).toBe(d);
    }
  });
  it('2,000 hosts refused together do not come back in step: no tenth of the window holds more than a fifth of them', () => {
    for (const attempt of [1, 4, 10]) {
      const ceiling = Math.min(NOTIFY_RETRY_MAX_MS, NOTIFY_RETRY_FIRST_MS * 2 ** (attempt - 1));
      const buckets = new Array<number>(10).fill(0);
      for (const h of hosts) {
        const i = Math.min(9, Math.floor(((notifyRetryDelayMs(h, attempt) - ceiling / 2) / (ceiling / 2)) * 10));
        buckets[i]! += 1;
      }
      expect(Math.max(...buckets)).toBeLessThan(hosts.length / 5);
    }
  });
});
