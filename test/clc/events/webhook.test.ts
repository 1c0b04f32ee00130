/**
 * The event webhook without a network: batches in seq order after the delivered cursor, the range
 * retention dropped named in the batch, capped exponential backoff on the injected clock, the
 * cursor kept in the events store so a new deliverer (a restarted CLC) resumes after it, and a
 * receiver that was down getting everything, once, when it is back.
 */
import { describe, expect, it } from 'vitest';
import { appendEvents, type EventLog } from '../../../clc/events/eventLog.js';
import { openMemoryEventsStore } from '../../../clc/events/eventStore.js';
import { EventStream } from '../../../clc/events/eventStream.js';
import { batchBody, nextBatch, retryDelayMs } from '../../../clc/events/webhookBatch.js';
import { WebhookDelivery, type WebhookPoster } from '../../../clc/events/webhookDelivery.js';
import { ManualClock } from '../../../shared/clock.js';
import { silentLogger } from '../../../shared/log.js';
import { eventually } from '../harness.js';

function logOf(n: number, limit = 1000): EventLog {
  const log: EventLog = { events: [], nextSeq: 1 };
  for (let i = 0; i < n; i++) appendEvents(log, [{ kind: 'node.disabled', message: `e${i + 1}` }], 1000 + i, limit);
  return log;
}

describe('retryDelayMs', () => {
  it.each([
    [1, 500], [2, 1000], [3, 2000], [4, 4000], [7, 32_000], [8, 60_000], [9, 60_000], [1000, 60_000],
  ])('after %i failure(s): %i ms', (failures, ms) => {
    expect(retryDelayMs(failures)).toBe(ms);
  });

  it('follows its policy', () => {
    expect([1, 2, 3, 4].map((f) => retryDelayMs(f, { baseMs: 100, capMs: 250 }))).toEqual([100, 200, 250, 250]);
  });
});

describe('nextBatch', () => {
  it.each<[string, number, number, number, number[], { fromSeq: number; toSeq: number } | undefined, number | undefined]>([
    ['from the start, one batch', 3, 0, 10, [1, 2, 3], undefined, 3],
    ['capped at the batch size', 5, 0, 2, [1, 2], undefined, 2],
    ['after the cursor', 5, 3, 10, [4, 5], undefined, 5],
    ['nothing new', 5, 5, 10, [], undefined, undefined],
  ])('%s', (_what, n, delivered, max, seqs, dropped, upTo) => {
    const b = nextBatch(logOf(n), delivered, max);
    if (upTo === undefined) {
      expect(b).toBeUndefined();
      return;
    }
    expect(b?.events.map((e) => e.seq)).toEqual(seqs);
    expect(b?.dropped).toEqual(dropped);
    expect(b?.upTo).toBe(upTo);
  });

  it('names the events retention dropped before they were delivered, and carries on after them', () => {
    const log = logOf(10, 4);
    const b = nextBatch(log, 2, 100);
    expect(b?.dropped).toEqual({ fromSeq: 3, toSeq: 6 });
    expect(b?.events.map((e) => e.seq)).toEqual([7, 8, 9, 10]);
    expect(JSON.parse(batchBody(b!))).toMatchObject({ source: 'ferry-clc', dropped: { fromSeq: 3, toSeq: 6 }, events: [{ seq: 7, time: new Date(1006).toISOString() }, {}, {}, {}] });
  });

  it('a gap with nothing after it is still a batch, moving the cursor over it', () => {
    const log = logOf(5, 5);
    log.events.length = 0;
    expect(nextBatch(log, 2, 10)).toEqual({ events: [], dropped: { fromSeq: 3, toSeq: 5 }, upTo: 5 });
  });
});

/** A receiver that answers what `status` says now, or drops the connection (null), and keeps what it got. */
class FakeReceiver implements WebhookPoster {
  status: number | null = 200;
  readonly got: number[][] = [];
  attempts = 0;
  post(body: string): Promise<number> {
    this.attempts++;
    if (this.status === null) return Promise.reject(new Error('connect ECONNREFUSED'));
    if (this.status >= 200 && this.status < 300) this.got.push((JSON.parse(body) as { events: { seq: number }[] }).events.map((e) => e.seq));
    return Promise.resolve(this.status);
  }
}

const URL = 'http://127.0.77.200:18790/hook';

async function setUp() {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const store = await openMemoryEventsStore();
  const stream = new EventStream({ store, clock });
  const receiver = new FakeReceiver();
  const delivery = (batchSize = 2) => new WebhookDelivery({ stream, url: URL, poster: receiver, clock, logger: silentLogger(), batchSize, retry: { baseMs: 1000, capMs: 8000 } });
  return { clock, store, stream, receiver, delivery };
}

const record = (stream: EventStream, n: number) => stream.record(Array.from({ length: n }, (_, i) => ({ kind: 'node.enabled' as const, message: `n${i}` })));

describe('WebhookDelivery', () => {
  it('a new URL starts after the newest event; then every event goes out in seq order, in batches, and the cursor follows', async () => {
    const { stream, receiver, delivery } = await setUp();
    await record(stream, 2);
    const d = delivery();
    await d.start();
    expect(d.delivered()).toBe(2);
    await record(stream, 5);
    await eventually(() => d.delivered() === 7, 'all delivered');
    expect(receiver.got.flat()).toEqual([3, 4, 5, 6, 7]);
    expect(receiver.got.every((b) => b.length <= 2)).toBe(true);
    await d.stop();
  });

  it('a receiver that is down is retried with capped backoff on the clock; once back it gets everything, in order, and the cursor never passes an unacknowledged event', async () => {
    const { clock, stream, receiver, delivery } = await setUp();
    const d = delivery(100);
    await d.start();
    receiver.status = null;
    await record(stream, 3);
    await eventually(() => receiver.attempts === 1, 'first attempt');
    // Retries come at 1 s, then 2 s, 4 s, 8 s, 8 s: only when the clock says so.
    const waits = [1000, 2000, 4000, 8000, 8000];
    for (const [i, ms] of waits.entries()) {
      clock.advance(ms - 1);
      await new Promise((r) => setImmediate(r));
      expect(receiver.attempts).toBe(i + 1);
      if (i === 2) receiver.status = 503;
      clock.advance(1);
      await eventually(() => receiver.attempts === i + 2, `attempt ${i + 2}`);
    }
    expect(d.delivered()).toBe(0);
    await record(stream, 2);
    receiver.status = 200;
    clock.advance(8000);
    await eventually(() => d.delivered() === 5, 'delivered after the receiver came back');
    expect(receiver.got.flat()).toEqual([1, 2, 3, 4, 5]);
    await d.stop();
  });

  it('a new deliverer over the same store (a CLC restart) resumes after the acknowledged cursor', async () => {
    const { stream, receiver, delivery } = await setUp();
    const first = delivery(100);
    await first.start();
    await record(stream, 3);
    await eventually(() => first.delivered() === 3, 'first three delivered');
    await first.stop();
    await record(stream, 2);
    const second = delivery(100);
    await second.start();
    await eventually(() => second.delivered() === 5, 'the rest delivered');
    expect(receiver.got.flat()).toEqual([1, 2, 3, 4, 5]);
    await second.stop();
  });
});
