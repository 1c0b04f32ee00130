/**
 * The event stream's durable state, `<state-dir>/events.json` (kind 'ferry-clc-events', version 1):
 * the bounded log with its next seq, what the migration watcher last recorded of each plan, how far
 * HA's own log (clc.json `ha.events`) has been copied in, and the webhook's delivered cursor. A file
 * of its own beside clc.json: the log is the largest thing the CLC keeps, and HA's frequent writes to
 * clc.json must not rewrite it.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { openFileStore, openMemoryStore, type Store, type StoreOptions } from '../../shared/store/store.js';
import { eventRecordSchema } from './eventRecord.js';
import { trackedMigrationSchema } from './migrationWatch.js';

export const eventsStateSchema = z.strictObject({
  events: z.array(eventRecordSchema),
  nextSeq: z.number().int().min(1),
  migrations: z.record(z.string(), trackedMigrationSchema),
  /** The id of the last HA log event copied into the stream (0: none yet). */
  haCopiedId: z.number().int().min(0),
  /** Per webhook URL, the seq it acknowledged last: a restart resumes after it. */
  webhooks: z.record(z.string(), z.strictObject({ delivered: z.number().int().min(0) })),
});
export type EventsState = z.infer<typeof eventsStateSchema>;

export const EVENTS_STORE_OPTIONS: StoreOptions<EventsState> = Object.freeze({
  kind: 'ferry-clc-events',
  schemaVersion: 1,
  initial: (): EventsState => ({ events: [], nextSeq: 1, migrations: {}, haCopiedId: 0, webhooks: {} }),
  validate: (data: unknown): EventsState => eventsStateSchema.parse(data),
});

export const EVENTS_STORE_FILE = 'events.json';

export function openEventsStore(stateDir: string): Promise<Store<EventsState>> {
  return openFileStore(join(stateDir, EVENTS_STORE_FILE), EVENTS_STORE_OPTIONS);
}

export function openMemoryEventsStore(): Promise<Store<EventsState>> {
  return openMemoryStore(EVENTS_STORE_OPTIONS);
}
