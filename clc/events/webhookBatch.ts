/**
 * The webhook's pure parts: which events the next POST carries (in seq order after the delivered
 * cursor, with the range retention dropped before delivery named, never skipped silently), the body
 * it sends, and the capped exponential backoff between failed attempts.
 */
import { droppedThrough, type EventLog } from './eventLog.js';
import type { EventRecord } from './eventRecord.js';

export interface WebhookBatch {
  readonly events: readonly EventRecord[];
  /** Seqs retention removed before they were delivered (inclusive), when any. */
  readonly dropped?: { readonly fromSeq: number; readonly toSeq: number };
  /** The delivered cursor once this batch is acknowledged. */
  readonly upTo: number;
}

/** The next batch after `delivered`, at most `max` events; undefined when there is nothing to send. */
export function nextBatch(log: EventLog, delivered: number, max: number): WebhookBatch | undefined {
  const gone = droppedThrough(log);
  const dropped = gone > delivered ? { fromSeq: delivered + 1, toSeq: gone } : undefined;
  const events: EventRecord[] = [];
  for (const e of log.events) {
    if (e.seq <= delivered) continue;
    if (events.length >= max) break;
    events.push(e);
  }
  if (events.length === 0 && dropped === undefined) return undefined;
  const upTo = events.at(-1)?.seq ?? (dropped as { toSeq: number }).toSeq;
  return { events, upTo, ...(dropped ? { dropped } : {}) };
}

/** The JSON a receiver gets: times as ISO 8601 UTC, seq order, and the dropped range when any. */
export function batchBody(batch: WebhookBatch): string {
  return JSON.stringify({
    source: 'ferry-clc',
    events: batch.events.map((e) => ({ ...e, time: new Date(e.time).toISOString() })),
    ...(batch.dropped ? { dropped: batch.dropped } : {}),
  });
}

export interface RetryPolicy {
  /** Delay after the first failure. */
  readonly baseMs: number;
  /** No delay is longer. */
  readonly capMs: number;
}

/** Half a second doubling to a minute: a receiver back after a restart gets its events within a minute. */
export const DEFAULT_RETRY: RetryPolicy = Object.freeze({ baseMs: 500, capMs: 60_000 });

/** The wait before attempt `failures + 1`, after `failures` (≥ 1) failed in a row. */
export function retryDelayMs(failures: number, policy: RetryPolicy = DEFAULT_RETRY): number {
  const exp = Math.min(Math.max(failures, 1) - 1, 30);
  return Math.min(policy.capMs, policy.baseMs * 2 ** exp);
}
