/**
 * The event stream's bounded log, pure: appending gives each event the next durable seq and drops the
 * oldest beyond the limit; a query filters by time range, host, instance, migration, kind and a seq
 * cursor, oldest first. No clock, no disk: the recorder (eventRecorder.ts) passes `now` and persists.
 */
import type { EventDraft, EventKind, EventRecord } from './eventRecord.js';

/** Default retention: the newest 10,000 events (a few MB of events.json); --events-history changes it. */
export const DEFAULT_EVENT_HISTORY = 10_000;

export interface EventLog {
  /** Oldest first, seqs strictly increasing, at most the history limit. */
  events: EventRecord[];
  /** The seq the next event gets; never goes back, so a dropped event's seq is never reused. */
  nextSeq: number;
}

/** Appends with the next seqs and `now`, drops the oldest beyond `limit`; returns the records as stored. */
export function appendEvents(log: EventLog, drafts: readonly EventDraft[], now: number, limit: number): EventRecord[] {
  const added = drafts.map((d): EventRecord => {
    // Frozen: the events store shares records between snapshots instead of copying them.
    const rec: EventRecord = { ...d, seq: log.nextSeq++, time: now, details: Object.freeze({ ...(d.details ?? {}) }) };
    return Object.freeze(rec);
  });
  log.events.push(...added);
  if (log.events.length > limit) log.events.splice(0, log.events.length - limit);
  return added;
}

/** The seq of the newest event ever recorded (0 before any). */
export const lastSeqOf = (log: Pick<EventLog, 'nextSeq'>): number => log.nextSeq - 1;

/** The newest seq no longer kept (0 when nothing was ever dropped): events up to it are gone. */
export function droppedThrough(log: EventLog): number {
  const oldest = log.events[0];
  return oldest === undefined ? lastSeqOf(log) : oldest.seq - 1;
}

/** What DescribeEvents selects; every field narrows, absent ones do not. */
export interface EventFilter {
  /** Epoch ms, inclusive. */
  readonly startTime?: number;
  /** Epoch ms, inclusive. */
  readonly endTime?: number;
  /** The event's host, or a migration item's destination. */
  readonly host?: string;
  readonly instanceId?: string;
  readonly migrationId?: string;
  /** Any of these kinds (none: all). */
  readonly kinds?: readonly EventKind[];
  /** Only events with a larger seq (a follower's cursor). */
  readonly afterSeq?: number;
}

export function matchesEvent(e: EventRecord, f: EventFilter): boolean {
  return (f.afterSeq === undefined || e.seq > f.afterSeq)
    && (f.startTime === undefined || e.time >= f.startTime)
    && (f.endTime === undefined || e.time <= f.endTime)
    && (f.host === undefined || e.host === f.host || e.details.destination === f.host)
    && (f.instanceId === undefined || e.instanceId === f.instanceId)
    && (f.migrationId === undefined || e.migrationId === f.migrationId)
    && (f.kinds === undefined || f.kinds.length === 0 || f.kinds.includes(e.kind));
}

/** Every kept event the filter selects, oldest first. */
export function selectEvents(log: Pick<EventLog, 'events'>, f: EventFilter): EventRecord[] {
  // A cursor skips the older part by binary search: a follower's call costs what it returns.
  let lo = 0;
  if (f.afterSeq !== undefined) {
    let hi = log.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((log.events[mid] as EventRecord).seq <= f.afterSeq) lo = mid + 1;
      else hi = mid;
    }
  }
  const out: EventRecord[] = [];
  for (let i = lo; i < log.events.length; i++) {
    const e = log.events[i] as EventRecord;
    if (matchesEvent(e, f)) out.push(e);
  }
  return out;
}
