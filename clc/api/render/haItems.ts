/** Host HA's views (clc/ha/haControl.ts) as EC2-style XML items; times in ISO 8601. */
import { POWER_WATCHED } from '../../ha/hostHaMoves.js';
import type { ConfigurationsView, HostHaView, PartitionConfigView } from '../../ha/haControl.js';
import type { HaLogEvent } from '../../ha/haState.js';
import type { PublicBmcView } from '../../ha/power/bmcStore.js';
import type { HaSettings, HaSettingsOverride } from '../../ha/settings.js';
import type { XmlObject } from '../xmlResponse.js';

export const iso = (ms: number | null | undefined): string | undefined => (ms === null || ms === undefined ? undefined : new Date(ms).toISOString());

export function haEventItem(e: HaLogEvent): XmlObject {
  return { eventId: e.id, timestamp: iso(e.at), host: e.host, kind: e.kind, level: e.level, fromState: e.from, toState: e.to, message: e.message };
}

function bmcItem(b: PublicBmcView | null): XmlObject | undefined {
  if (!b) return undefined;
  return {
    agent: b.agent, address: b.options.ip, port: b.options.ipport, username: b.options.username, timeoutMs: b.timeoutMs, passwordSet: b.passwordSet,
    sslInsecure: b.options.ssl_insecure === '1', systemsUri: b.options.systems_uri, redfishUri: b.options.redfish_uri,
  };
}

export function hostHaItem(v: HostHaView): XmlObject {
  const r = v.record;
  return {
    host: v.host,
    partition: v.partition,
    haEnabled: v.haEnabled,
    state: r.state,
    since: iso(r.since),
    reason: r.reason,
    needsOperator: r.needsOperator,
    blocked: r.blocked ? { target: r.blocked.target, reason: r.blocked.reason, since: iso(r.blocked.since) } : undefined,
    operation: r.operation ? { kind: r.operation.kind, startedAt: iso(r.operation.startedAt), deadline: iso(r.operation.deadline) } : undefined,
    nextHealthCheckAt: r.state === 'DISABLED' || r.state === 'INELIGIBLE' ? undefined : iso(r.nextHealthCheckAt),
    // The BMC power watch (POWER_WATCHED states): when its power status is asked next, and whether it is being asked now.
    nextPowerCheckAt: POWER_WATCHED.has(r.state) ? iso(r.nextPowerCheckAt) : undefined,
    powerCheckInFlight: POWER_WATCHED.has(r.state) ? r.powerProbe !== null : undefined,
    nextActivityCheckAt: iso(r.nextActivityCheckAt),
    suspectSince: iso(r.suspectSince),
    activityChecks: r.activityChecks,
    activityFailures: r.activityFailures,
    recoveryAttempts: r.recoveryAttempts,
    fenceAttempts: r.fenceAttempts,
    fencedBy: r.fencedBy ?? undefined,
    remediationAttempts: r.remediationAttempts,
    remediation: r.remediation ? { remediationId: r.remediation.id, since: iso(r.remediation.since), accepted: r.remediation.accepted } : undefined,
    owedRepair: r.owed ? {
      kind: r.owed.kind, since: iso(r.owed.since), attempts: r.owed.attempts, nextAttemptAt: iso(r.owed.nextAttemptAt),
      inFlight: r.owed.inFlight !== null, lastOutcome: r.owed.lastOutcome ?? undefined, heldBy: r.owed.heldBy,
    } : undefined,
    suspension: v.suspension ? { scope: v.suspension.key, until: iso(v.suspension.until), reason: v.suspension.reason, by: v.suspension.by } : undefined,
    bmc: bmcItem(v.bmc),
    dryRun: v.dryRun ? { next: v.dryRun.next, at: iso(v.dryRun.at), waitsForOperator: v.dryRun.waitsForOperator } : undefined,
    eventSet: v.lastEvents.map(haEventItem),
  };
}

function settingItems(s: HaSettingsOverride | HaSettings): XmlObject[] {
  return Object.entries(s).map(([name, value]) => ({ name, value: value as number }));
}

function partitionItem(p: PartitionConfigView): XmlObject {
  return {
    partition: p.partition, enabled: p.enabled, maxUnhealthy: p.maxUnhealthy ?? '50%', unhealthyRange: p.unhealthyRange ?? '', autoRepair: p.autoRepair ?? 'failover',
    remediation: {
      strategy: p.remediation.strategy, command: p.remediation.command?.path, argSet: p.remediation.command?.args.map((a) => ({ arg: a })),
      webhook: p.remediation.webhook ?? undefined, secretSet: p.remediation.secretSet,
    },
    overrideSet: settingItems(p.overrides), settingSet: settingItems(p.effective),
  };
}

export function configurationsXml(c: ConfigurationsView): XmlObject {
  return {
    global: { maxUnhealthy: c.global.maxUnhealthy ?? '50%', unhealthyRange: c.global.unhealthyRange ?? '', overrideSet: settingItems(c.global.overrides), settingSet: settingItems(c.global.effective) },
    partitionSet: c.partitions.map(partitionItem),
    hostSet: c.hosts.map((h) => ({ host: h.host, partition: h.partition, hostDisabled: h.hostDisabled, bmc: bmcItem(h.bmc) })),
    suspensionSet: c.suspended.map((s) => ({ scope: s.key, until: iso(s.until), reason: s.reason, by: s.by })),
    instanceSet: c.instances.map((i) => ({ instanceId: i.instanceId, autoRepair: i.autoRepair })),
  };
}
