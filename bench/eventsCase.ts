/**
 * The `events/burst` sub-measurement: 20 events recorded at once (a drain's item changes, a burst of
 * gate waits) into a full event history (10,000 events in events.json), through EventStream's group
 * commit (appends that arrive during a write share the next one) / the same 50 recorded one durable
 * write each, as a recorder without batching would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEventsStore } from '../clc/events/eventStore.js';
import { EventStream } from '../clc/events/eventStream.js';
import type { EventDraft } from '../clc/events/eventRecord.js';
import { systemClock } from '../shared/clock.js';

export const BURST = 20;
const HISTORY = 10_000;

const draft = (i: number): EventDraft => ({
  kind: 'migration.item', host: '127.0.1.1', instanceId: `i-${i.toString(16).padStart(8, '0')}`, migrationId: 'mig-0000abcd', partition: 'cluster01', actor: 'system',
  message: `i-${i.toString(16).padStart(8, '0')}: migrating -> completed (to 127.0.1.2)`, details: { from: 'migrating', to: 'completed', destination: '127.0.1.2' },
});

export interface EventsRig {
  /** BURST events recorded at once (group commit). */
  burst(): Promise<void>;
  /** BURST events recorded one write each. */
  oneByOne(): Promise<void>;
  close(): void;
}

export async function eventsRig(): Promise<EventsRig> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-events-'));
  const stream = new EventStream({ store: await openEventsStore(dir), clock: systemClock, history: HISTORY });
  // Fill the history first: every write then rewrites what a long-running CLC's file holds.
  for (let i = 0; i < HISTORY; i += 1000) await stream.record(Array.from({ length: 1000 }, (_, j) => draft(i + j)));
  const burst = Array.from({ length: BURST }, (_, i) => draft(i));
  return {
    async burst() {
      await Promise.all(burst.map((d) => stream.record([d])));
    },
    async oneByOne() {
      for (const d of burst) await stream.record([d]);
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
