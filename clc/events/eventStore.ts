/**
 * The event stream's durable state, `<state-dir>/events.json` (kind 'ferry-clc-events', version 1):
 * the bounded log with its next seq, what the migration watcher last recorded of each plan, how far
 * HA's own log (clc.json `ha.events`) has been copied in, and the webhook's delivered cursor. A file
 * of its own beside clc.json: the log is the largest thing the CLC keeps, and HA's frequent writes to
 * clc.json must not rewrite it.
 *
 * Same file format and contract as shared/store/store.ts (validated on load, durable before visible,
 * in call order, group-committed by shared/store/groupCommit.ts), but a batch of updates copies the
 * event list by reference instead of deep-cloning it: with 10,000 events the clone was most of each write's cost (bench events/burst).
 * Event records are never changed once appended (appendEvents freezes them), which makes that safe.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { storeWrite } from '../../shared/metrics/channels.js';
import { writeFileDurable } from '../../shared/store/durableFile.js';
import { StoreErrors } from '../../shared/store/errors.js';
import { paddedKey } from '../../shared/store/etcdLayout.js';
import { GroupCommitStore } from '../../shared/store/groupCommit.js';
import { openFileStore, type Store, type StoreOptions } from '../../shared/store/store.js';
import type { StoreSpec } from '../../shared/store/storeBackend.js';
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

/** The draft an update works on: the small sections deep-copied, the event list a new array of the same (frozen) records. */
function draftOf(s: EventsState): EventsState {
  const { events, ...rest } = s;
  return { ...structuredClone(rest), events: events.slice() };
}

/** Opens (or creates) `<stateDir>/events.json`: loaded and checked by the common store code, written here. */
export function openEventsStore(stateDir: string): Promise<Store<EventsState>> {
  return openEventsFile(join(stateDir, EVENTS_STORE_FILE));
}

/**
 * events.json, or `<etcd-prefix>clc/events/` with one key per event (by seq), tracked migration and
 * webhook: an append writes the new events and deletes the dropped ones, never the whole log.
 */
export const EVENTS_STORE_SPEC: StoreSpec<EventsState> = Object.freeze<StoreSpec<EventsState>>({
  file: EVENTS_STORE_FILE, key: 'clc/events', options: EVENTS_STORE_OPTIONS,
  layout: { collections: {
    events: { kind: 'list', keyOf: (e: unknown) => paddedKey((e as { seq: number }).seq) },
    migrations: { kind: 'record' },
    webhooks: { kind: 'record' },
  } },
  draftOf,
  openFile: (file: string) => openEventsFile(file),
});

async function openEventsFile(file: string): Promise<Store<EventsState>> {
  const loaded = await openFileStore(file, EVENTS_STORE_OPTIONS);
  return new GroupCommitStore(loaded.read(), { draftOf, persist: async (data) => {
    const t0 = performance.now();
    try {
      await writeFileDurable(file, JSON.stringify({ schemaVersion: EVENTS_STORE_OPTIONS.schemaVersion, kind: EVENTS_STORE_OPTIONS.kind, data }));
    } catch (e) {
      throw StoreErrors.make('StoreWriteFailed', { file, detail: (e as Error).message });
    }
    storeWrite.publish({ kind: EVENTS_STORE_OPTIONS.kind, seconds: (performance.now() - t0) / 1000 });
  } });
}

/** The same store in memory, for unit tests and the simulator. */
export function openMemoryEventsStore(): Promise<Store<EventsState>> {
  return Promise.resolve(new GroupCommitStore(EVENTS_STORE_OPTIONS.initial(), { draftOf, persist: () => Promise.resolve() }));
}
