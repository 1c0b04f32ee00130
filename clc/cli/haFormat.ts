/**
 * Host-HA rows (tab-separated, as the other commands print). Pure: readings in, lines out.
 *   HOSTHA     host partition state ha-enabled|ha-disabled needs-operator|- reason
 *   BLOCKED    host target since reason
 *   SUSPENDED  host scope until|until-lifted reason
 *   BMC        host agent address port username password-set|no-password ssl-insecure|- systems-uri|-
 *   OWED       host drain|evacuate attempts in-flight|next-at last-outcome|-
 *   REMEDIATION host remediation-id accepted|not-accepted since
 *   DRYRUN     host at|- waits-for-operator|- next
 *   EVENT      timestamp host level from->to|kind message
 *   HACONFIG   partition|global enabled|disabled maxUnhealthy autoRepair overrides
 *   AUTOREPAIR instance level (instances with a level of their own)
 *   REMEDIATOR partition command PATH ARG...|webhook URL secret-set|no-secret (partitions with strategy external)
 */
import type { HaConfigReading, HaEventReading, HostHaReading } from './responses.js';

const row = (...cols: (string | number)[]): string => cols.join('\t');

export function haEventLine(e: HaEventReading): string {
  const what = e.fromState !== '' || e.toState !== '' ? `${e.fromState}->${e.toState}` : e.kind;
  return row('EVENT', e.timestamp, e.host, e.level, what, e.message);
}

export function hostHaLines(h: HostHaReading): string[] {
  const out = [row('HOSTHA', h.host, h.partition, h.state, h.haEnabled === 'true' ? 'ha-enabled' : 'ha-disabled', h.needsOperator === 'true' ? 'needs-operator' : '-', h.reason)];
  if (h.blocked) out.push(row('BLOCKED', h.host, h.blocked.target, h.blocked.since, h.blocked.reason));
  if (h.suspension) out.push(row('SUSPENDED', h.host, h.suspension.scope, h.suspension.until || 'until-lifted', h.suspension.reason));
  if (h.bmc) {
    out.push(row('BMC', h.host, h.bmc.agent, h.bmc.address, h.bmc.port, h.bmc.username, h.bmc.passwordSet === 'true' ? 'password-set' : 'no-password',
      h.bmc.sslInsecure === 'true' ? 'ssl-insecure' : '-', h.bmc.systemsUri || '-'));
  }
  const o = h.owedRepair;
  if (o) out.push(row('OWED', h.host, o.kind, o.attempts, o.inFlight === 'true' ? 'in-flight' : o.nextAttemptAt, o.lastOutcome || '-'));
  if (h.remediation) out.push(row('REMEDIATION', h.host, h.remediation.remediationId, h.remediation.accepted === 'true' ? 'accepted' : 'not-accepted', h.remediation.since));
  if (h.dryRun) out.push(row('DRYRUN', h.host, h.dryRun.at || '-', h.dryRun.waitsForOperator === 'true' ? 'waits-for-operator' : '-', h.dryRun.next));
  out.push(...h.eventSet.map(haEventLine));
  return out;
}

const overrides = (set: readonly { name: string; value: string }[]): string => set.map((s) => `${s.name}=${s.value}`).join(',') || '-';

export function haConfigLines(c: HaConfigReading): string[] {
  return [
    row('HACONFIG', 'global', '-', c.global.maxUnhealthy, '-', overrides(c.global.overrideSet)),
    ...c.partitionSet.map((p) => row('HACONFIG', p.partition, p.enabled === 'true' ? 'enabled' : 'disabled', p.maxUnhealthy, p.autoRepair, overrides(p.overrideSet))),
    ...c.hostSet.map((h) => row('HOSTCONFIG', h.host, h.partition, h.hostDisabled === 'true' ? 'ha-disabled' : 'ha-enabled',
      h.bmc ? `${h.bmc.agent} ${h.bmc.address}:${h.bmc.port || '-'} ${h.bmc.passwordSet === 'true' ? 'password-set' : 'no-password'}` : 'no-bmc')),
    ...c.partitionSet.flatMap((p) => (p.remediation?.strategy === 'external'
      ? [row('REMEDIATOR', p.partition, p.remediation.command ? ['command', p.remediation.command, ...p.remediation.argSet.map((a) => a.arg)].join(' ') : `webhook ${p.remediation.webhook}`,
        p.remediation.secretSet === 'true' ? 'secret-set' : 'no-secret')]
      : [])),
    ...c.suspensionSet.map((s) => row('SUSPENDED', s.scope, s.until || 'until-lifted', s.by, s.reason)),
    ...c.instanceSet.map((i) => row('AUTOREPAIR', i.instanceId, i.autoRepair)),
  ];
}
