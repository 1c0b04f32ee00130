/**
 * Shapes of the simulated hypervisor's private HTTP protocol (driver ↔ daemon, daemon ↔ daemon).
 * Both ends parse with these schemas: the daemon validates requests once at its edge, the driver
 * validates answers once at its edge. This is not Ferry's wire protocol.
 */
import { z } from 'zod';
import { migrationCredentialSchema } from '../../../shared/protocol/migrationProtocol.js';
import { volumeAttachmentSpecSchema } from '../../../shared/protocol/volumes.js';

/** Ids become file names under the storage dir, so they are restricted to a safe alphabet. */
export const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const id = z.string().regex(SAFE_ID, 'must be 1-128 of [A-Za-z0-9._-], starting with a letter or digit');

/** Every address the sim deals with is loopback: the whole 127.0.0.0/8 range is local on Linux. */
export const LOOPBACK_V4 = /^127\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

export const ResourcesSchema = z.object({
  cores: z.number().int().min(1).max(1024),
  memoryMiB: z.number().int().min(1).max(16 * 1024 * 1024),
  diskGiB: z.number().int().min(0).max(1024 * 1024),
});

export const VolumeAttachmentSchema = volumeAttachmentSpecSchema;

export const DomainSpecSchema = z.object({
  id,
  resources: ResourcesSchema,
  imageId: z.string().min(1).max(128),
});

/**
 * A spec with the volumes its definition holds (issue 18): an incoming domain arrives with them;
 * a created or defined one (host HA's restart elsewhere, a re-homed stopped instance) has them
 * before its guest boots.
 */
export const IncomingSpecSchema = DomainSpecSchema.extend({ volumes: z.array(VolumeAttachmentSchema).max(64).optional() });

export const DomainStateSchema = z.enum(['running', 'paused', 'suspended', 'shutoff', 'crashed']);

export const DomainInfoSchema = DomainSpecSchema.extend({
  state: DomainStateSchema,
  diskPath: z.string(),
  startedAt: z.number(),
  /** Volumes connected to the domain; absent from daemons before volumes. */
  volumes: z.array(VolumeAttachmentSchema).optional(),
});

export const HostInfoSchema = z.object({
  host: z.string(),
  capacity: ResourcesSchema,
  hypervisor: z.literal('sim'),
});

export const DomainListSchema = z.object({ domains: z.array(DomainInfoSchema) });

/** POST /v1/domains/:id/shutdown (StopInstances, issue 18): force skips the ACPI request. */
export const ShutdownRequest = z.object({ force: z.boolean() });
export const PrepareIncomingRequest = z.object({ spec: IncomingSpecSchema, migrationId: id, credential: migrationCredentialSchema.optional() });

/** The destination must be another sim daemon on loopback; nothing leaves the machine. */
export const DestinationUri = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && LOOPBACK_V4.test(u.hostname);
  } catch {
    return false;
  }
}, 'must be an http:// or https:// URL of a sim daemon on 127.0.0.0/8');

export const MigrateRequest = z.object({
  migrationId: id,
  destinationUri: DestinationUri,
  maxDowntimeMs: z.number().min(0).max(600_000).optional(),
  credential: migrationCredentialSchema.optional(),
});

export const MigrationStatsSchema = z.object({
  migrationId: z.string(),
  id: z.string(),
  elapsedMs: z.number(),
  downtimeMs: z.number(),
  bytesTransferred: z.number(),
  iterations: z.number(),
});

export const MigrationProgressSchema = z.object({
  migrationId: z.string(),
  id: z.string(),
  bytesTotal: z.number(),
  bytesTransferred: z.number(),
  bytesRemaining: z.number(),
  iteration: z.number(),
});

export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** Long-poll answer for an outgoing migration. 'unknown': the daemon has no record (e.g. restarted). */
export const MigrationStatusSchema = z.discriminatedUnion('state', [
  z.object({ state: z.literal('running'), progress: MigrationProgressSchema.optional() }),
  z.object({ state: z.literal('completed'), stats: MigrationStatsSchema }),
  z.object({ state: z.literal('failed'), error: ErrorBodySchema.shape.error }),
  z.object({ state: z.literal('unknown') }),
]);
export type MigrationStatus = z.infer<typeof MigrationStatusSchema>;

export const HypervisorEventSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('started'), id: z.string() }),
  z.object({
    kind: z.literal('stopped'),
    id: z.string(),
    reason: z.enum(['destroyed', 'shutdown', 'migrated', 'crashed', 'host-down']),
  }),
  z.object({ kind: z.literal('migration-progress'), progress: MigrationProgressSchema }),
  z.object({ kind: z.literal('migration-incoming-done'), migrationId: z.string(), id: z.string() }),
  z.object({ kind: z.literal('rebooted'), id: z.string() }),
]);

// --- daemon ↔ daemon migration stream: control messages (see streamFrames.ts for framing) ---

export const HelloMessage = z.object({
  t: z.literal('hello'),
  migrationId: id,
  spec: DomainSpecSchema,
  sourceHost: z.string(),
});
export const RoundMessage = z.object({
  t: z.literal('round'),
  iteration: z.number().int().min(1),
  /** Guest memory bytes this round stands for. */
  bytes: z.number().int().min(0),
  /** Wire bytes of page data that follow this frame (bytes scaled down, see PAGE_SCALE). */
  payloadBytes: z.number().int().min(0),
});
export const FinalMessage = z.object({
  t: z.literal('final'),
  /** The guest's disk-activity counter at pause, so the destination carries it on. */
  diskCounter: z.number().int().min(0),
  /** The guest was suspended by its administrator before the migration: it arrives suspended (libvirt's VIR_MIGRATE_PAUSED). */
  suspended: z.boolean().optional(),
});
export const ControlMessage = z.discriminatedUnion('t', [HelloMessage, RoundMessage, FinalMessage]);
export type ControlMessage = z.infer<typeof ControlMessage>;
export type HelloMessage = z.infer<typeof HelloMessage>;
export type RoundMessage = z.infer<typeof RoundMessage>;
export type FinalMessage = z.infer<typeof FinalMessage>;

/** Destination → source, one JSON object per line on the stream's response. */
export const StreamReply = z.discriminatedUnion('t', [
  z.object({ t: z.literal('accepted') }),
  z.object({ t: z.literal('done'), receivedBytes: z.number() }),
  z.object({ t: z.literal('error'), error: ErrorBodySchema.shape.error }),
]);
export type StreamReply = z.infer<typeof StreamReply>;

/** Turns zod issues into one line naming each bad field. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(body)'}: ${i.message}`).join('; ');
}
