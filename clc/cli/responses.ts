/**
 * Typed readings of the CLC's XML responses (parsed by xml2js with explicitArray off), checked with
 * zod so a response of the wrong shape is one clear error instead of `undefined` columns.
 */
import { z } from 'zod';
import { UnexpectedResponse } from './failures.js';
import type { XmlDoc } from './queryClient.js';

/** `<set><item/>...</set>` as xml2js leaves it: '' when empty, an object for one item, an array for more. */
function itemsOf<T extends z.ZodType>(item: T) {
  return z.preprocess((v) => {
    if (v === undefined || v === '' || v === null) return [];
    const items = (v as { item?: unknown }).item;
    if (items === undefined) return [];
    return Array.isArray(items) ? items : [items];
  }, z.array(item));
}

/** Text of an element that may be empty (xml2js gives '' for `<x/>`). */
const text = z.string().optional().transform((s) => s ?? '');
const num = z.coerce.number();

const resources = z.object({ cores: num, memoryMiB: num, diskGiB: num });

const nodeSchema = z.object({
  partition: z.string(),
  host: z.string(),
  state: z.string(),
  capacity: resources,
  used: resources,
  // Issue 18; absent from a CLC before quarantine (read as not quarantined).
  quarantined: text.transform((s) => s === 'true'),
  quarantinedSince: text,
  quarantineReason: text,
  instancesSet: itemsOf(z.object({
    instanceId: z.string(), state: z.string(), instanceType: z.string(), migrationState: text, migrationSource: text, migrationDestination: text,
  })),
});
export type NodeReading = z.infer<typeof nodeSchema>;

const unavailableSchema = itemsOf(z.object({ partition: z.string(), reason: text }));
export type UnavailableReading = z.infer<typeof unavailableSchema>;

const serviceSchema = z.object({
  serviceId: z.object({ partition: z.string(), name: z.string(), type: z.string(), fullName: text, uri: text }),
  localState: z.string(),
  details: itemsOf(z.string()),
});
export type ServiceReading = z.infer<typeof serviceSchema>;

const matrixSchema = z.object({ vmType: z.string(), available: num, max: num, cores: num, memoryMiB: num, diskGiB: num });
export type MatrixReading = z.infer<typeof matrixSchema>;

/** Eucalyptus 4's VmTypeDetails, as euca-describe-instance-types reads it (values kept as the text sent). */
const vmTypeDetailsSchema = z.object({
  name: z.string(),
  cpu: text,
  memory: text,
  disk: text,
  networkInterfaces: text,
  availability: itemsOf(z.object({ zoneName: z.string(), available: num, max: num })),
});
export type VmTypeDetailsReading = z.infer<typeof vmTypeDetailsSchema>;

const stateSchema = z.object({ code: num, name: z.string() });

/** PauseInstances / UnpauseInstances (issue 18): each instance's state, whether it is paused now and was before, and its node. */
const pausedSchema = z.object({
  instancesSet: itemsOf(z.object({
    instanceId: z.string(), currentState: stateSchema, paused: text.transform((s) => s === 'true'),
    previouslyPaused: text.transform((s) => s === 'true'), nodeHost: text,
  })),
});

const instanceSchema = z.object({
  instanceId: z.string(),
  imageId: z.string(),
  instanceState: stateSchema,
  instanceType: z.string(),
  launchTime: z.string(),
  placement: z.object({ availabilityZone: z.string() }),
  nodeHost: text,
  migrationState: text,
  migrationSource: text,
  migrationDestination: text,
});
export type InstanceReading = z.infer<typeof instanceSchema>;

const reservationSchema = z.object({
  reservationId: z.string(),
  ownerId: z.string(),
  instancesSet: itemsOf(instanceSchema),
});
export type ReservationReading = z.infer<typeof reservationSchema>;

const optionalNum = z.coerce.number().optional();

const migrationItemSchema = z.object({
  instanceId: z.string(),
  instanceType: z.string(),
  destination: text,
  state: z.string(),
  attempts: num,
  error: text,
  queuedAt: z.string(),
  startedAt: text,
  endedAt: text,
  elapsedMs: optionalNum,
  progress: z.object({ bytesTotal: num, bytesTransferred: num, bytesRemaining: num, iteration: num }).optional(),
  stats: z.object({ elapsedMs: num, downtimeMs: num, bytesTransferred: num, iterations: num }).optional(),
});
export type MigrationItemReading = z.infer<typeof migrationItemSchema>;

const migrationSchema = z.object({
  migrationId: z.string(),
  partition: z.string(),
  sourceHost: z.string(),
  kind: z.string(),
  /** active, completed or incomplete. */
  state: z.string(),
  createdAt: z.string(),
  itemSet: itemsOf(migrationItemSchema),
});
export type MigrationReading = z.infer<typeof migrationSchema>;

const bmcSchema = z.object({
  agent: z.string(), address: text, port: text, username: text, timeoutMs: text, passwordSet: z.string(), sslInsecure: text, systemsUri: text, redfishUri: text,
});

const haEventSchema = z.object({ eventId: text, timestamp: z.string(), host: z.string(), kind: z.string(), level: z.string(), fromState: text, toState: text, message: text });
export type HaEventReading = z.infer<typeof haEventSchema>;

const hostHaSchema = z.object({
  host: z.string(),
  partition: z.string(),
  haEnabled: z.string(),
  state: z.string(),
  since: z.string(),
  reason: text,
  needsOperator: z.string(),
  blocked: z.object({ target: z.string(), reason: text, since: z.string() }).optional(),
  operation: z.object({ kind: z.string(), startedAt: z.string(), deadline: z.string() }).optional(),
  nextHealthCheckAt: text,
  nextPowerCheckAt: text.optional(),
  powerCheckInFlight: z.string().optional(),
  nextActivityCheckAt: text,
  activityChecks: num,
  activityFailures: num,
  recoveryAttempts: num,
  fenceAttempts: num,
  fencedBy: text,
  remediationAttempts: num.optional(),
  remediation: z.object({ remediationId: z.string(), since: z.string(), accepted: z.string() }).optional(),
  suspension: z.object({ scope: z.string(), until: text, reason: text, by: text }).optional(),
  bmc: bmcSchema.optional(),
  dryRun: z.object({ next: z.string(), at: text, waitsForOperator: z.string() }).optional(),
  owedRepair: z.object({ kind: z.string(), since: z.string(), attempts: num, nextAttemptAt: z.string(), inFlight: z.string(), lastOutcome: text }).optional(),
  eventSet: itemsOf(haEventSchema),
});
export type HostHaReading = z.infer<typeof hostHaSchema>;

const settingItems = itemsOf(z.object({ name: z.string(), value: z.string() }));
const haConfigSchema = z.object({
  global: z.object({ maxUnhealthy: z.string(), unhealthyRange: z.string().optional(), overrideSet: settingItems, settingSet: settingItems }),
  partitionSet: itemsOf(z.object({
    partition: z.string(), enabled: z.string(), maxUnhealthy: z.string(), unhealthyRange: z.string().optional(), autoRepair: z.string(),
    remediation: z.object({ strategy: z.string(), command: text, argSet: itemsOf(z.object({ arg: text })), webhook: text, secretSet: z.string() }).optional(),
    overrideSet: settingItems, settingSet: settingItems,
  })),
  hostSet: itemsOf(z.object({ host: z.string(), partition: z.string(), hostDisabled: z.string(), bmc: bmcSchema.optional() })),
  suspensionSet: itemsOf(z.object({ scope: z.string(), until: text, reason: text, by: text })),
  instanceSet: itemsOf(z.object({ instanceId: z.string(), autoRepair: z.string() })),
});
export type HaConfigReading = z.infer<typeof haConfigSchema>;

const attachmentSchema = z.object({ volumeId: z.string(), instanceId: z.string(), device: z.string(), status: z.string(), attachTime: text });
export type AttachmentReading = z.infer<typeof attachmentSchema>;

const volumeSchema = z.object({
  volumeId: z.string(), size: num, snapshotId: text, availabilityZone: z.string(), status: z.string(), createTime: text,
  volumeType: text, attachmentSet: itemsOf(attachmentSchema),
});
export type VolumeReading = z.infer<typeof volumeSchema>;

/** DescribeEvents (issue 20): one event of the stream. */
const streamEventSchema = z.object({
  eventSeq: z.string(), timestamp: z.string(), kind: z.string(), host: text, instanceId: text, migrationId: text, partition: text, actor: text, message: text,
  detailSet: itemsOf(z.object({ key: z.string(), value: text })),
});
export type StreamEventReading = z.infer<typeof streamEventSchema>;

export const RESPONSES = {
  // Volumes (issue 18).
  CreateVolume: volumeSchema.omit({ attachmentSet: true }),
  DescribeVolumes: z.object({ volumeSet: itemsOf(volumeSchema) }),
  DeleteVolume: z.object({ return: z.string() }),
  AttachVolume: attachmentSchema,
  DetachVolume: attachmentSchema,
  HostHA: z.object({ host: hostHaSchema }),
  HostHASet: z.object({ hostSet: itemsOf(hostHaSchema) }),
  HAConfigurations: haConfigSchema,
  InstanceAutoRepair: z.object({
    instanceId: z.string(), partition: z.string(), autoRepair: z.string(), clusterAutoRepair: z.string(), effectiveAutoRepair: z.string(),
  }),
  HAEvents: z.object({ eventSet: itemsOf(haEventSchema) }),
  DescribeEvents: z.object({ eventSet: itemsOf(streamEventSchema), lastSeq: z.string(), nextToken: text }),
  Suspension: z.object({ scope: z.string(), until: text, reason: z.string(), by: z.string() }),
  Resumed: z.object({ scope: z.string(), wasSuspended: z.string() }),
  DescribeNodes: z.object({ nodeSet: itemsOf(nodeSchema), unavailablePartitionSet: unavailableSchema }),
  DescribeServices: z.object({ serviceStatuses: itemsOf(serviceSchema) }),
  ModifyService: z.object({ serviceStatuses: itemsOf(serviceSchema), previousState: z.string(), resourceMatrix: itemsOf(matrixSchema) }),
  QuarantineNode: z.object({
    serviceStatuses: itemsOf(serviceSchema), previousState: z.string(), previousQuarantined: text.transform((s) => s === 'true'),
    previousQuarantinedSince: text, previousQuarantineReason: text, node: nodeSchema, resourceMatrix: itemsOf(matrixSchema),
  }),
  RunInstances: reservationSchema,
  DescribeInstances: z.object({ reservationSet: itemsOf(reservationSchema), unavailablePartitionSet: unavailableSchema }),
  TerminateInstances: z.object({
    instancesSet: itemsOf(z.object({ instanceId: z.string(), previousState: stateSchema, currentState: stateSchema })),
  }),
  // Stop, start, reboot (issue 18 part 5): EC2's shapes; start adds the node the instance runs on.
  StopInstances: z.object({
    instancesSet: itemsOf(z.object({ instanceId: z.string(), previousState: stateSchema, currentState: stateSchema })),
  }),
  StartInstances: z.object({
    instancesSet: itemsOf(z.object({ instanceId: z.string(), previousState: stateSchema, currentState: stateSchema, nodeHost: text })),
  }),
  RebootInstances: z.object({ return: z.string() }),
  PauseInstances: pausedSchema,
  UnpauseInstances: pausedSchema,
  MigrateInstances: migrationSchema.extend({
    unplacedSet: itemsOf(z.object({ instanceId: z.string(), reason: z.string() })),
    rehomedSet: itemsOf(z.object({ instanceId: z.string(), destination: z.string() })),
    notRehomedSet: itemsOf(z.object({ instanceId: z.string(), reason: z.string() })),
    resourceMatrix: itemsOf(matrixSchema),
  }),
  DescribeMigrations: z.object({ migrationSet: itemsOf(migrationSchema), unavailablePartitionSet: unavailableSchema }),
  CancelMigration: migrationSchema,
  DescribeInstanceTypes: z.object({ instanceTypeDetails: itemsOf(vmTypeDetailsSchema), unavailablePartitionSet: unavailableSchema }),
  DescribeAvailabilityZones: z.object({
    availabilityZoneInfo: itemsOf(z.object({ zoneName: z.string(), zoneState: text, messageSet: itemsOf(z.object({ message: text })) })),
  }),
} as const;

export type Reading<K extends keyof typeof RESPONSES> = z.infer<(typeof RESPONSES)[K]>;

export function readResponse<K extends keyof typeof RESPONSES>(kind: K, doc: XmlDoc, url: string): Reading<K> {
  const r = RESPONSES[kind].safeParse(doc);
  if (r.success) return r.data as Reading<K>;
  const issue = r.error.issues[0];
  throw new UnexpectedResponse(url, `${kind} response has no valid ${issue?.path.join('.') || 'body'} (${issue?.message ?? 'invalid'})`);
}
