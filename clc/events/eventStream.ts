/**
 * The CLC's one event stream (issue 20): records events durably (events.json) before whoever
 * records them answers, serves queries and long polls, copies host HA's own log in, and tells
 * listeners (the webhook) that events were added. Appends that arrive while a write is under way go
 * into the next write together (group commit): one file write per burst, not per event.
 */
import type { Clock } from '../../shared/clock.js';
import { longPoll } from '../../shared/longPoll.js';
import { clcEvent } from '../../shared/metrics/channels.js';
import type { Store } from '../../shared/store/store.js';
import type { HaLogEvent } from '../ha/haState.js';
import { appendEvents, DEFAULT_EVENT_HISTORY, selectEvents, type EventFilter } from './eventLog.js';
import type { EventDraft, EventKind, EventRecord } from './eventRecord.js';
import type { EventSink } from './eventSink.js';
import type { EventsState } from './eventStore.js';
import type { TrackedMigration } from './migrationWatch.js';


export interface EventStreamOptions {
  readonly store: Store<EventsState>;
  readonly clock: Clock;
  /** How many events are kept (oldest dropped first). */
  readonly history?: number;
}

interface Pending {
  readonly compute: (state: EventsState) => readonly EventDraft[];
  resolve(records: EventRecord[]): void;
  reject(e: unknown): void;
}

/** How long a long poll sleeps between looks when no append wakes it (a safety net, not the signal). */
const WAIT_RECHECK_MS = 1_000;
const FENCE_STATES: ReadonlySet<string> = new Set(['FENCING', 'FENCED']);

/** HA's log entry as a stream event: fences and transitions apart, an HA scope (global, partition:X) as the partition. */
export function draftOfHaEvent(e: HaLogEvent): EventDraft {
  const kind: EventKind = e.kind === 'alert' ? 'ha.alert'
    : FENCE_STATES.has(e.to ?? '') || FENCE_STATES.has(e.from ?? '') ? 'ha.fence' : 'ha.transition';
  const scope = e.host === 'global' || e.host.includes(':');
  return {
    kind, actor: 'ha', message: e.message,
    ...(scope ? { partition: e.host.replace(/^(partition|cluster):/, '') } : { host: e.host }),
    details: {
      haEventId: String(e.id ?? 0), level: e.level, at: new Date(e.at).toISOString(),
      ...(e.from !== undefined ? { from: e.from } : {}), ...(e.to !== undefined ? { to: e.to } : {}),
    },
  };
}

export class EventStream implements EventSink {
  readonly history: number;
  private pending: Pending[] = [];
  private flushing = false;
  private readonly listeners = new Set<() => void>();
  private copying: Promise<number> = Promise.resolve(0);

  constructor(private readonly opts: EventStreamOptions) {
    this.history = opts.history ?? DEFAULT_EVENT_HISTORY;
  }

  /** The persisted state (read-only). */
  state(): EventsState {
    return this.opts.store.read();
  }

  record(drafts: readonly EventDraft[], alsoApply?: (state: EventsState) => void): Promise<EventRecord[]> {
    return this.recordFrom((s) => {
      alsoApply?.(s);
      return drafts;
    });
  }

  recordPlan(planned: EventDraft, migrationId: string, tracked: TrackedMigration): Promise<void> {
    return this.recordFrom((s) => {
      if (s.migrations[migrationId] !== undefined) return [];
      s.migrations[migrationId] = tracked;
      return [planned];
    }).then(() => undefined);
  }

  /** Records what `compute` decides from the state as it is when written (no lost update between a read and the write). */
  recordFrom(compute: (state: EventsState) => readonly EventDraft[]): Promise<EventRecord[]> {
    return new Promise<EventRecord[]>((resolve, reject) => {
      this.pending.push({ compute, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  /** Changes only the stream's bookkeeping (cursors, tracked plans), in order with the appends. */
  update(apply: (state: EventsState) => void): Promise<void> {
    return this.record([], apply).then(() => undefined);
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0);
      try {
        const now = this.opts.clock.now();
        const added = await this.opts.store.update((d) => batch.map((p) => appendEvents(d, p.compute(d), now, this.history)));
        batch.forEach((p, i) => p.resolve(added[i] ?? []));
        const all = added.flat();
        for (const e of all) clcEvent.publish({ kind: e.kind });
        if (all.length > 0) for (const l of [...this.listeners]) l();
      } catch (e) {
        for (const p of batch) p.reject(e);
      }
    }
    this.flushing = false;
  }

  /** Called after every write that added events. Returns the unsubscribe function. */
  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  select(filter: EventFilter): EventRecord[] {
    return selectEvents(this.state(), filter);
  }

  /** Answers as soon as the filter selects something, or with nothing after `waitMs` (a follower's long poll). */
  waitFor(filter: EventFilter, waitMs: number): Promise<EventRecord[]> {
    return longPoll(() => this.select(filter), { clock: this.opts.clock, waitMs, recheckMs: WAIT_RECHECK_MS, subscribe: (wake) => this.onAppend(wake) });
  }

  /**
   * Copies host HA's log entries newer than the last copied into the stream. HA's log is durable on
   * its own (clc.json), so a copy that a crash interrupts is made again at the next call. Entries HA
   * dropped before they were copied are said in one alert instead.
   */
  copyHaEvents(haLog: () => readonly HaLogEvent[]): Promise<number> {
    // One copy at a time: two at once would both see the same fresh entries.
    const run = (): Promise<number> => this.copyOnce(haLog());
    const p = this.copying.then(run, run);
    this.copying = p.catch(() => 0);
    return p;
  }

  private async copyOnce(haLog: readonly HaLogEvent[]): Promise<number> {
    const after = this.state().haCopiedId;
    const fresh = haLog.filter((e) => (e.id ?? 0) > after);
    if (fresh.length === 0) return 0;
    const firstId = fresh[0]?.id ?? 0;
    const lastId = fresh.at(-1)?.id ?? after;
    const lost = after > 0 && firstId > after + 1 ? firstId - after - 1 : 0;
    const drafts: EventDraft[] = [
      ...(lost > 0 ? [{ kind: 'ha.alert' as const, actor: 'system', message: `${lost} host-HA event(s) left HA's log before the stream copied them`, details: { lost: String(lost) } }] : []),
      ...fresh.map(draftOfHaEvent),
    ];
    await this.record(drafts, (s) => {
      // Another copy may have run meanwhile: never go back.
      s.haCopiedId = Math.max(s.haCopiedId, lastId);
    });
    return fresh.length;
  }
}
