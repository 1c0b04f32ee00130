/**
 * One fact of the CLC's event stream (issue 20): a durable, numbered record of what happened to a
 * migration, a node's maintenance state, the change gate or host HA. The kinds are a closed list;
 * the record is plain JSON, kept in `<state-dir>/events.json` (clc/events/eventStore.ts).
 */
import { z } from 'zod';

/** Every kind of event, with the one line an operator reads in the docs (docs/OPERATIONS.md "Event stream"). */
export const EVENT_KINDS = [
  /** MigrateInstances accepted by a CC (or a plan the CLC first saw on a poll: actor 'system'). */
  'migration.planned',
  /** An item of a plan changed state, as the CLC observed it on a poll of its CC. */
  'migration.item',
  /** Every item of a plan completed. */
  'migration.completed',
  /** Every item is final and some did not complete (rolled back or failed), without a cancel. */
  'migration.rolled-back',
  /** Every item is final after a CancelMigration. */
  'migration.cancelled',
  /** CancelMigration accepted by the CC. */
  'migration.cancel-requested',
  /** A node went into maintenance (DisableService, ModifyService, host HA). */
  'node.disabled',
  /** A node came out of maintenance. */
  'node.enabled',
  /** A change waited in the partition gate behind another. */
  'gate.queued',
  /** A waiting change left the gate: admitted, or refused (queue full, waited too long). */
  'gate.released',
  /** Host HA moved a host to another state. */
  'ha.transition',
  /** Host HA moved a host into or out of fencing (FENCING, FENCED). */
  'ha.fence',
  /** Host HA raised an alert or recorded an operator's HA change. */
  'ha.alert',
] as const;

export type EventKind = (typeof EVENT_KINDS)[number];
export const eventKindSchema = z.enum(EVENT_KINDS);

/** Who caused it: an access key, 'ha' (host HA's own change) or 'system' (observed, not asked). */
export type EventActor = string;

export const eventRecordSchema = z.strictObject({
  /** Durable, increasing from 1 with no reuse: a cursor (AfterSeq, the webhook's) survives restarts. */
  seq: z.number().int().min(1),
  /** Epoch ms of the CLC's clock when it was recorded. */
  time: z.number(),
  kind: eventKindSchema,
  host: z.string().optional(),
  instanceId: z.string().optional(),
  migrationId: z.string().optional(),
  partition: z.string().optional(),
  actor: z.string().optional(),
  message: z.string(),
  /** Kind-specific facts (item states, gate outcome, HA from/to), flat strings for the XML and the CLI. */
  details: z.record(z.string(), z.string()).default({}),
});
export type EventRecord = z.infer<typeof eventRecordSchema>;

/** An event as a recorder is handed it: the log gives it its seq and time. */
export type EventDraft = Omit<EventRecord, 'seq' | 'time' | 'details'> & { readonly details?: Readonly<Record<string, string>> };
