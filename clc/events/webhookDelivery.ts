/**
 * Posts the event stream to an operator's webhook: batches of JSON in seq order, at least once,
 * retried with capped exponential backoff on the injected clock, the delivered cursor kept per URL
 * in events.json so a CLC restart resumes after the last acknowledged batch. It runs beside the API
 * and never holds a request up: recording an event only wakes it.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import { webhookDelivery } from '../../shared/metrics/channels.js';
import { lastSeqOf } from './eventLog.js';
import type { EventStream } from './eventStream.js';
import { batchBody, DEFAULT_RETRY, nextBatch, retryDelayMs, type RetryPolicy } from './webhookBatch.js';

/** The narrow HTTP edge (a hand-written fake in unit tests): resolves with the status, rejects when nothing came back. */
export interface WebhookPoster {
  post(body: string): Promise<number>;
}

/** Long enough for a slow receiver, short enough that a hung one is retried. */
const POST_TIMEOUT_MS = 10_000;

/** The real poster: fetch with a timeout, `Authorization: Bearer <token>` when a token is set. */
export function httpPoster(url: string, token: string | undefined): WebhookPoster {
  return {
    async post(body) {
      const res = await fetch(url, {
        method: 'POST', body, signal: AbortSignal.timeout(POST_TIMEOUT_MS),
        headers: { 'content-type': 'application/json', ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
      });
      // Drained so the connection is reused; the receiver's words are not ours to keep.
      await res.arrayBuffer().catch(() => undefined);
      return res.status;
    },
  };
}

export interface WebhookDeliveryOptions {
  readonly stream: EventStream;
  /** The cursor's key in events.json (the URL, without any secret). */
  readonly url: string;
  readonly poster: WebhookPoster;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly batchSize?: number;
  readonly retry?: RetryPolicy;
}

export class WebhookDelivery {
  private failures = 0;
  private busy = false;
  private again = false;
  private stopped = false;
  private timer: TimerHandle | undefined;
  private unsubscribe: (() => void) | undefined;
  private current: Promise<void> = Promise.resolve();

  constructor(private readonly opts: WebhookDeliveryOptions) {}

  /** Adds this URL's cursor when new (it starts after the newest event: a new receiver gets what happens from now), then delivers. */
  async start(): Promise<void> {
    const { stream, url } = this.opts;
    if (stream.state().webhooks[url] === undefined) {
      await stream.update((s) => {
        s.webhooks[url] ??= { delivered: lastSeqOf(s) };
      });
    }
    this.unsubscribe = stream.onAppend(() => this.wake());
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.timer?.cancel();
    await this.current;
  }

  /** The acknowledged cursor. */
  delivered(): number {
    return this.opts.stream.state().webhooks[this.opts.url]?.delivered ?? 0;
  }

  /** Starts a delivery pass unless one runs or a backoff waits (it will see the new events). */
  private wake(): void {
    if (this.stopped) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    if (this.timer !== undefined) return;
    this.busy = true;
    this.current = this.pass().catch((e: unknown) => {
      // events.json could not take the cursor: try again later, as after a failed POST.
      this.opts.logger.warn({ url: this.opts.url, detail: (e as Error).message }, 'event webhook: could not record the delivered cursor; retrying');
      this.timer = this.opts.clock.setTimer(retryDelayMs(1, this.opts.retry ?? DEFAULT_RETRY), () => {
        this.timer = undefined;
        this.wake();
      });
    }).finally(() => {
      this.busy = false;
      if (this.again && this.timer === undefined) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Posts batches until none is left or one fails (then a backoff timer wakes it). */
  private async pass(): Promise<void> {
    const { stream, url, poster, logger } = this.opts;
    for (;;) {
      if (this.stopped) return;
      this.again = false;
      const batch = nextBatch(stream.state(), this.delivered(), this.opts.batchSize ?? 100);
      if (!batch) return;
      let ok = false;
      let why = '';
      try {
        const status = await poster.post(batchBody(batch));
        ok = status >= 200 && status < 300;
        why = `HTTP ${status}`;
      } catch (e) {
        why = (e as Error).message;
      }
      const dropped = batch.dropped ? batch.dropped.toSeq - batch.dropped.fromSeq + 1 : 0;
      webhookDelivery.publish({ result: ok ? 'ok' : 'failed', events: batch.events.length, dropped: ok ? dropped : 0 });
      if (!ok) {
        this.failures++;
        const wait = retryDelayMs(this.failures, this.opts.retry ?? DEFAULT_RETRY);
        if (this.failures === 1 || this.failures % 10 === 0) logger.warn({ url, failures: this.failures, retryInMs: wait, detail: why }, 'event webhook: delivery failed; retrying');
        this.timer = this.opts.clock.setTimer(wait, () => {
          this.timer = undefined;
          this.wake();
        });
        return;
      }
      if (this.failures > 0) logger.info({ url, failures: this.failures }, 'event webhook: delivering again');
      this.failures = 0;
      if (dropped > 0) logger.warn({ url, ...batch.dropped }, 'event webhook: events left the history before they were delivered');
      await stream.update((s) => {
        const w = s.webhooks[url];
        if (w) w.delivered = Math.max(w.delivered, batch.upTo);
      });
    }
  }
}
