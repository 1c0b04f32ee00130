/**
 * What the core operations (clc/core) record events through: durable when the promise resolves, so
 * an operation records before it answers. EventStream (eventStream.ts) is the one implementation.
 */
import type { EventDraft, EventRecord } from './eventRecord.js';
import type { TrackedMigration } from './migrationWatch.js';

export interface EventSink {
  record(drafts: readonly EventDraft[]): Promise<EventRecord[]>;
  /**
   * A plan a CC just accepted: its planned event and the watcher's record of it, in one write (so the
   * watcher reports its items from there). Nothing is added when a poll already recorded the plan.
   */
  recordPlan(planned: EventDraft, migrationId: string, tracked: TrackedMigration): Promise<void>;
}
