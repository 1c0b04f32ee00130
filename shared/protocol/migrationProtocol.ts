/**
 * The live-migration contract between CLC, CC and NC (Eucalyptus 3.3 maintenance-mode spec, extended).
 *
 * Truth: the SOURCE NC persists the whole plan (items, destinations, outcomes, stats); each NC
 * persists the migration state of its own instances (source side) and of incoming ones (destination
 * side). The CC keeps nothing durable: it rebuilds every plan from the NCs and drives the handshake
 *   source prepare(plan) → ready;  destination prepare(item) → ready;  source commit → migrating →
 *   cleaning → none (item completed), destination migrating → none with the VM running;
 *   rollback undoes prepare on either side.
 * Every step is idempotent and keyed by (migrationId, instanceId).
 */
import { z } from 'zod';
import { hostSchema, instanceIdSchema, migrationStateSchema, reservationIdSchema, vmTypeSchema } from './common.js';

export const migrationIdSchema = z.string().regex(/^mig-[0-9a-f]{8}$/, 'expected mig- and 8 hex digits');

/** Where one instance of a plan is. Final: completed, rolled-back, cancelled, failed. */
export const itemStateSchema = z.enum([
  /** Planned, waiting for a concurrency slot. */
  'queued',
  /** The destination is being prepared (resources held, incoming domain set up). */
  'preparing',
  /** Both sides prepared; waiting for commit. */
  'ready',
  /** Live migration running (source pushing state to the destination). */
  'migrating',
  /** The VM runs on the destination; the source is removing what is left. */
  'cleaning',
  'completed',
  /** Undone after a failure or timeout; the VM runs on the source. */
  'rolled-back',
  /** Undone by CancelMigration before it committed; the VM runs on the source. */
  'cancelled',
  /** Could not be placed or could not run; the VM runs on the source. */
  'failed',
]);
export type ItemState = z.infer<typeof itemStateSchema>;
export const FINAL_ITEM_STATES: readonly ItemState[] = ['completed', 'rolled-back', 'cancelled', 'failed'];

export const progressSchema = z.object({
  bytesTotal: z.number().min(0),
  bytesTransferred: z.number().min(0),
  bytesRemaining: z.number().min(0),
  iteration: z.number().int().min(0),
});

export const statsSchema = z.object({
  elapsedMs: z.number().min(0),
  downtimeMs: z.number().min(0),
  bytesTransferred: z.number().min(0),
  iterations: z.number().int().min(0),
});

export const planItemSchema = z.object({
  instanceId: instanceIdSchema,
  vmType: vmTypeSchema,
  /** Empty when the item could not be placed (state failed, error says why). */
  destination: z.union([hostSchema, z.literal('')]),
  state: itemStateSchema,
  /** How many destinations were tried (re-planning at execution time adds one). */
  attempts: z.number().int().min(0),
  error: z.string().optional(),
  queuedAt: z.number(),
  startedAt: z.number().optional(),
  endedAt: z.number().optional(),
  progress: progressSchema.optional(),
  stats: statsSchema.optional(),
});
export type PlanItem = z.infer<typeof planItemSchema>;

export const limitsSchema = z.object({
  perSource: z.number().int().min(1),
  perDestination: z.number().int().min(1),
  perCluster: z.number().int().min(1),
});

export const timeoutsSchema = z.object({
  /** Destination prepare must reach ready within this. */
  prepareMs: z.number().int().min(1),
  /** Both sides ready but not committed: give up after this. */
  readyMs: z.number().int().min(1),
  /** Migrating: allowed time is baseMs + perGiBMs × memory GiB. */
  migratingBaseMs: z.number().int().min(1),
  migratingPerGiBMs: z.number().int().min(1),
  /** Migrating with no progress for this long: abort. */
  stallMs: z.number().int().min(1),
});

export const planSchema = z.object({
  migrationId: migrationIdSchema,
  source: hostSchema,
  createdAt: z.number(),
  request: z.object({
    kind: z.enum(['drain', 'instance']),
    destinations: z.array(hostSchema),
    allowHosts: z.boolean(),
    reserveDestinations: z.boolean(),
  }),
  limits: limitsSchema,
  timeouts: timeoutsSchema,
  cancelRequested: z.boolean(),
  items: z.array(planItemSchema).min(1),
});
export type MigrationPlan = z.infer<typeof planSchema>;

/** What a destination NC holds for one incoming instance. */
export const incomingSchema = z.object({
  migrationId: migrationIdSchema,
  instanceId: instanceIdSchema,
  source: hostSchema,
  reservationId: reservationIdSchema,
  imageId: z.string(),
  ownerId: z.string(),
  launchTime: z.number(),
  vmType: vmTypeSchema,
  /** Destination-side NC migration state. */
  state: migrationStateSchema,
  since: z.number(),
});
export type Incoming = z.infer<typeof incomingSchema>;

export const ncMigrateRequestSchema = z.discriminatedUnion('action', [
  /** Source: persist the whole plan before replying; its instances become ready to send. */
  z.object({ action: z.literal('prepare'), role: z.literal('source'), plan: planSchema }),
  /** Destination: hold resources and set up for the incoming instance; allowDisabled when the plan named this host. */
  z.object({
    action: z.literal('prepare'), role: z.literal('destination'), migrationId: migrationIdSchema,
    incoming: incomingSchema.omit({ state: true, since: true }), allowDisabled: z.boolean(),
  }),
  /** Source: start the live migration of a prepared instance to its prepared destination. */
  z.object({
    action: z.literal('commit'), migrationId: migrationIdSchema, instanceId: instanceIdSchema,
    destination: hostSchema, destinationUri: z.string().min(1),
  }),
  /** Either side: undo prepare (source: abort if migrating); reason is recorded; cancel marks items cancelled. */
  z.object({
    action: z.literal('rollback'), role: z.enum(['source', 'destination']), migrationId: migrationIdSchema,
    instanceId: instanceIdSchema.optional(), reason: z.string().max(500), cancel: z.boolean(),
  }),
  /** Source: a queued item gets a new destination (re-check at execution time) or fails with a reason. */
  z.object({
    action: z.literal('replan'), migrationId: migrationIdSchema, instanceId: instanceIdSchema,
    destination: z.union([hostSchema, z.literal('')]), error: z.string().optional(),
  }),
]);
export type NcMigrateRequest = z.infer<typeof ncMigrateRequestSchema>;

export const ncMigrateResponseSchema = z.object({
  migrationId: migrationIdSchema,
  /** The plan as the source now holds it (source actions), or absent. */
  plan: planSchema.optional(),
  /** The destination's incoming record after the action, or absent. */
  incoming: incomingSchema.optional(),
});

/** NC → CC: "something about my migrations changed, look now" (polling stays as the safety net). */
export const ccNodeEventRequestSchema = z.object({
  host: hostSchema,
  migrationId: migrationIdSchema.optional(),
  instanceId: instanceIdSchema.optional(),
  kind: z.enum(['migration', 'instance', 'node']),
});
