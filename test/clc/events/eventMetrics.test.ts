/**
 * The event stream's series in the CLC's registry: events by kind move as events are recorded,
 * webhook POSTs by result, events lost to retention before delivery, and the webhook's lag (events
 * and seconds) read from the delivered cursor when scraped.
 */
import { describe, expect, it } from 'vitest';
import { PartitionGate } from '../../../clc/core/partitionGate.js';
import { openMemoryEventsStore } from '../../../clc/events/eventStore.js';
import { EventStream } from '../../../clc/events/eventStream.js';
import { WebhookDelivery, type WebhookPoster } from '../../../clc/events/webhookDelivery.js';
import { addClcMetrics } from '../../../clc/metrics.js';
import { openMemoryClcStore } from '../../../clc/state/clcStore.js';
import { ManualClock } from '../../../shared/clock.js';
import { silentLogger } from '../../../shared/log.js';
import { daemonMetrics } from '../../../shared/metrics/registry.js';
import { parseProm, valueOf } from '../../helpers/promText.js';
import { eventually } from '../harness.js';

const URL = 'http://127.0.77.200:18791/hook';

describe('the event stream\'s metrics', () => {
  it('move with the stream and the webhook', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const stream = new EventStream({ store: await openMemoryEventsStore(), clock, history: 100 });
    const m = daemonMetrics('clc');
    addClcMetrics(m, { store: await openMemoryClcStore(), gate: new PartitionGate({ clock }), partitions: ['cluster01'], events: stream, webhookUrl: URL, clock });
    const scrape = async () => parseProm(await m.registry.metrics());
    let status = 503;
    const poster: WebhookPoster = { post: () => Promise.resolve(status) };
    const hook = new WebhookDelivery({ stream, url: URL, poster, clock, logger: silentLogger(), retry: { baseMs: 1000, capMs: 1000 } });
    try {
      await hook.start();
      await stream.record([{ kind: 'node.disabled', message: 'a' }, { kind: 'node.disabled', message: 'b' }, { kind: 'ha.fence', message: 'c' }]);
      await eventually(() => hook.delivered() === 0 && clockHasRetry(clock), 'a failed POST, a retry waiting');
      clock.advance(30_000);
      let s = await scrape();
      expect(valueOf(s, 'ferry_clc_events_total', { kind: 'node.disabled' })).toBe(2);
      expect(valueOf(s, 'ferry_clc_events_total', { kind: 'ha.fence' })).toBe(1);
      expect(valueOf(s, 'ferry_clc_webhook_deliveries_total', { result: 'failed' })).toBeGreaterThanOrEqual(1);
      expect(valueOf(s, 'ferry_clc_webhook_lag_events')).toBe(3);
      expect(valueOf(s, 'ferry_clc_webhook_lag_seconds')).toBe(30);
      status = 200;
      // The next retries come on the clock: move it until the receiver's 200 is in.
      await eventually(() => {
        clock.advance(1000);
        return hook.delivered() === 3;
      }, 'delivered once the receiver answers 200');
      s = await scrape();
      expect(valueOf(s, 'ferry_clc_webhook_deliveries_total', { result: 'ok' })).toBe(1);
      expect(valueOf(s, 'ferry_clc_webhook_lag_events')).toBe(0);
      expect(valueOf(s, 'ferry_clc_webhook_lag_seconds')).toBe(0);
    } finally {
      await hook.stop();
      m.close();
    }
  });
});

function clockHasRetry(clock: ManualClock): boolean {
  return clock.pendingTimers() > 0;
}
