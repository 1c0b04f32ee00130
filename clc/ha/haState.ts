/**
 * Host HA's part of the CLC store (`clc.json` key `ha`; clc/state/clcStore.ts): per-host machine
 * records, per-partition configuration and a bounded event log. Plain JSON, validated on load; a
 * store written before host HA loads with an empty section (the key defaults), so clc.json keeps
 * schema version 1.
 */
import { z } from 'zod';
import { hostHaRecordSchema, HA_STATES } from './hostHaState.js';
import { haSettingsOverrideSchema } from './settings.js';
import { maxUnhealthySchema, unhealthyRangeSchema } from './stormGuard.js';
import { autoRepairSchema } from './repairPolicy.js';
import { suspensionsSchema } from './suspension.js';
import { remediationConfigSchema } from './remediation.js';

/** Kept as the operator wrote it ("2", "40%"), validated on the way in. */
const maxUnhealthyText = z.string().refine((s) => maxUnhealthySchema.safeParse(s).success, 'a host count ("2") or a percentage ("40%")');
const unhealthyRangeText = z.string().refine((s) => unhealthyRangeSchema.safeParse(s).success, 'a range such as "[2-5]"');

/** The event log keeps this many entries (oldest dropped first): DescribeHostHA shows the last ones. */
export const HA_EVENT_LOG_LIMIT = 1000;

export const haPartitionConfigSchema = z.strictObject({
  /** HA switched on for the partition (EnableHAForCluster). */
  enabled: z.boolean(),
  /** Storm protection bound: a count ("2") or a percentage ("50%"); parsed by stormGuard.ts. */
  maxUnhealthy: maxUnhealthyText.optional(),
  /** Cluster API's unhealthyRange ("[2-5]"): when set, it decides instead of maxUnhealthy. */
  unhealthyRange: unhealthyRangeText.optional(),
  /** Cluster-level settings over the global ones. */
  settings: haSettingsOverrideSchema.default({}),
  /** The cluster's auto-repair level (repairPolicy.ts); unset = failover. */
  autoRepair: autoRepairSchema.optional(),
  /** How a failed host is remediated (remediation.ts); unset = fence (power cycle, then fence). Its secret is in bmc.json. */
  remediation: remediationConfigSchema.optional(),
});
export type HaPartitionConfig = z.infer<typeof haPartitionConfigSchema>;

export const haEventSchema = z.strictObject({
  /** Durable, increasing from 1 (a DescribeHAEvents `After` cursor); absent only in stores written before ids. */
  id: z.number().int().min(1).optional(),
  at: z.number(),
  host: z.string(),
  kind: z.enum(['transition', 'alert']),
  level: z.enum(['info', 'warn', 'critical']),
  from: z.enum(HA_STATES).optional(),
  to: z.enum(HA_STATES).optional(),
  message: z.string(),
});
export type HaLogEvent = z.infer<typeof haEventSchema>;

export const haSectionSchema = z.strictObject({
  global: z.strictObject({ settings: haSettingsOverrideSchema.default({}), maxUnhealthy: maxUnhealthyText.optional(), unhealthyRange: unhealthyRangeText.optional() }),
  partitions: z.record(z.string(), haPartitionConfigSchema),
  /** Per host (the NC's address), with HA switched on for it unless `hostDisabled` lists it. */
  hosts: z.record(z.string(), hostHaRecordSchema),
  hostDisabled: z.array(z.string()),
  /** Automation paused per host, cluster or partition (suspension.ts); absent in older stores. */
  suspended: suspensionsSchema.default({}),
  events: z.array(haEventSchema).max(HA_EVENT_LOG_LIMIT),
  /** The id the next logged event gets; absent in older stores (their events are numbered on load). */
  nextEventId: z.number().int().min(1).default(1),
  /** Auto-repair level per instance (ConfigureHAForInstance); absent = inherit the cluster's. */
  instanceAutoRepair: z.record(z.string(), autoRepairSchema).default({}),
}).transform((ha) => {
  // Events from before ids are numbered in log order, after any id already given: a cursor never goes back.
  if (ha.events.every((e) => e.id !== undefined)) return ha;
  let next = Math.max(ha.nextEventId, ...ha.events.map((e) => (e.id ?? 0) + 1));
  return { ...ha, events: ha.events.map((e) => (e.id !== undefined ? e : { ...e, id: next++ })), nextEventId: next };
});

export type HaSection = z.infer<typeof haSectionSchema>;

export const emptyHaSection = (): HaSection => ({ global: { settings: {} }, partitions: {}, hosts: {}, hostDisabled: [], suspended: {}, events: [], nextEventId: 1, instanceAutoRepair: {} });

/** Appends to the log with the next ids, dropping the oldest beyond the limit. */
export function appendHaEvents(ha: { events: HaLogEvent[]; nextEventId: number }, added: readonly HaLogEvent[]): void {
  const log = ha.events;
  for (const e of added) log.push({ ...e, id: ha.nextEventId++ });
  if (log.length > HA_EVENT_LOG_LIMIT) log.splice(0, log.length - HA_EVENT_LOG_LIMIT);
}
