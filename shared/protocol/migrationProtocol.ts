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
 *
 * Who moves an item (the source NC persists item states; the CC never writes them directly):
 *   queued ──commit (source)──▶ migrating ──▶ cleaning ──▶ completed      (the source NC, on its own)
 *      │                           └──failure/stall/own timeout──▶ rolled-back | failed
 *      ├──replan (source)──▶ queued (new destination, attempts + 1) | failed (destination '')
 *      └──rollback (source)──▶ rolled-back | cancelled (cancel: true)     (also from migrating: abort)
 * The source is not told when a destination is prepared, so it keeps an item `queued` until commit:
 * `preparing` and `ready` are never persisted by an NC. The CC derives them from the destination's
 * Incoming record (preparing/ready) and reports them in ccDescribeMigrations.
 *
 * An Incoming record lives on the destination from prepare until it is rolled back, or until the
 * received VM runs there as the NC's own instance (then it is listed in `instances` instead, and the
 * record is removed). Its state is preparing, ready or migrating, never none or cleaning.
 * The CC sends rollback(destination) only for a record whose item the source reports final but not
 * completed, or redirected to another destination; for a record no plan explains only while its
 * source answers and still runs the VM (migrationState not cleaning); and, while the source does not
 * answer, only for a record still preparing. Never for an item cleaning or completed.
 */
import { z } from 'zod';
import { hostSchema, instanceIdSchema, migrationStateSchema, reservationIdSchema, vmTypeSchema } from './common.js';
import { ncVolumeAttachmentSchema } from './volumes.js';

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
  /**
   * Source, migrating: which generation of the item's credentials its migration uses or waits for
   * (absent: 0, the pair of the first prepare and commit).
   */
  credentialGeneration: z.number().int().min(0).optional(),
  /**
   * Source, migrating: the hypervisor refused to re-join without the credential the last NC process
   * lost (the migration never reached it). The item waits for the CC to re-issue both sides a pair of
   * generation `credentialGeneration` (prepare again on the destination, then commit again).
   */
  awaitingCredential: z.boolean().optional(),
  /**
   * A cold move (issue 18 part 5): a drain of a node holding only instances their users stopped. The
   * CC re-homed the instance (defined on `destination`, not started: cc/rehome.ts) before the plan
   * was recorded; the item is born final (completed, or failed saying why it stayed) and never runs.
   */
  cold: z.literal(true).optional(),
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
  /** The generation of the credential its hypervisor holds for the incoming domain (absent: 0, or none). */
  credentialGeneration: z.number().int().min(0).optional(),
  /**
   * The instance's volumes as its source holds them (issue 18): the destination connects them at
   * prepare, before the source commits, and the instance arrives with them; a rollback disconnects
   * them here. No data is copied: the locator (`path`) is on storage both hosts reach. Absent: none.
   */
  volumes: z.array(ncVolumeAttachmentSchema).max(64).optional(),
});
export type Incoming = z.infer<typeof incomingSchema>;

const PEM_MAX = 16 * 1024;
/**
 * One side's per-migration TLS credential (docs/SECURITY.md, "Per-migration credentials"), issued by
 * the CC for one item and one side, sent only over the CC↔NC mutual-TLS link, held only in memory.
 */
export const migrationCredentialSchema = z.object({
  caPem: z.string().min(1).max(PEM_MAX),
  certPem: z.string().min(1).max(PEM_MAX),
  keyPem: z.string().min(1).max(PEM_MAX),
});
export type MigrationCredential = z.infer<typeof migrationCredentialSchema>;

/**
 * The two prepare variants share action 'prepare', so they form their own union on `role`: a flat
 * discriminatedUnion on 'action' with two 'prepare' options is rejected by zod at the first parse.
 */
const prepareRequestSchema = z.discriminatedUnion('role', [
  /**
   * Source: persist the whole plan before replying; its instances become ready to send. Idempotent
   * by migrationId (a repeat answers the plan as held). Refusals: InstanceNotFound,
   * InstanceNotRunning, MigrationInProgress (an instance is in a non-final item of another plan).
   */
  z.object({ action: z.literal('prepare'), role: z.literal('source'), plan: planSchema }),
  /**
   * Destination: hold resources and set up for the incoming instance; allowDisabled when the plan named
   * this host. Answers `incoming` in state ready; idempotent by (migrationId, instanceId). Refusals:
   * NodeDisabled, InsufficientCapacity (the NC counts its Incoming records in `used`). A repeat whose
   * credential is of a later generation than the one held (a re-join) hands it to the hypervisor,
   * which from then on accepts only that generation's source.
   */
  z.object({
    action: z.literal('prepare'), role: z.literal('destination'), migrationId: migrationIdSchema,
    incoming: incomingSchema.omit({ state: true, since: true, credentialGeneration: true }), allowDisabled: z.boolean(),
    /** The destination's credential for this item; absent only in a --insecure-plaintext cloud. */
    credential: migrationCredentialSchema.optional(),
  }),
]);

export const ncMigrateRequestSchema = z.discriminatedUnion('action', [
  prepareRequestSchema,
  /**
   * Source: start the live migration of a queued item to `destination` (which must be the item's) and
   * answer at once. A repeat for an item already migrating/cleaning/completed to that destination
   * answers the plan, except for an item awaiting a credential: a credential of the generation it
   * awaits re-joins it (its hypervisor starts the migration with it). Anything else (unknown plan or
   * item, final item, other destination) is MigrationNotPrepared.
   */
  z.object({
    action: z.literal('commit'), migrationId: migrationIdSchema, instanceId: instanceIdSchema,
    destination: hostSchema, destinationUri: z.string().min(1),
    /** The source's credential for this item; absent only in a --insecure-plaintext cloud. */
    credential: migrationCredentialSchema.optional(),
  }),
  /**
   * Either side: undo prepare (source: abort if migrating); reason is recorded as the item's error;
   * cancel marks items cancelled. Without instanceId: every item of the plan (on the source, with
   * cancel, also sets cancelRequested). Items already cleaning or completed are left alone.
   * Destination: removes the Incoming record (answers without `incoming`). Unknown plan, item or
   * record: nothing to undo, answers as success.
   */
  z.object({
    action: z.literal('rollback'), role: z.enum(['source', 'destination']), migrationId: migrationIdSchema,
    instanceId: instanceIdSchema.optional(), reason: z.string().max(500), cancel: z.boolean(),
  }),
  /**
   * Source: a queued item gets a new destination, attempts + 1 (re-check at execution time), or fails
   * with `error` (destination ''). An item that is not queued (or unknown) is MigrationNotPrepared.
   */
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
/** The CC answers at once and looks afterwards (an NC must not wait on the CC's reconcile). */
export const ccNodeEventResponseSchema = z.object({});
