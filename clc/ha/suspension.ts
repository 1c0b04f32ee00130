/**
 * Suspending HA automation (issue 6, after Ganeti harep's suspend tag): an operator pauses automatic
 * recovery and fencing for a host, a cluster or a partition, optionally until a time. Health and
 * activity are still watched and shown; only new remediation is held, with the reason, exactly like
 * a storm (the machine sees one RemediationAllowance). Owed repairs (drain, restart elsewhere) are
 * held too but kept, and run once the suspension ends (HaContext.suspended; owedRepair.ts). Pure.
 */
import { z } from 'zod';
import type { RemediationAllowance } from './hostHaMachine.js';

export const suspensionSchema = z.strictObject({
  /** Epoch ms; null: until lifted. */
  until: z.number().nullable(),
  reason: z.string(),
  by: z.string(),
});
export type Suspension = z.infer<typeof suspensionSchema>;

/** Keyed `host:<addr>`, `cluster:<name>` or `partition:<name>`. */
export type SuspensionKey = `host:${string}` | `cluster:${string}` | `partition:${string}`;

export const suspensionsSchema = z.record(z.string().regex(/^(host|cluster|partition):.+$/), suspensionSchema);

export interface HostScope {
  readonly host: string;
  readonly partition: string;
  /** Ferry's clusters are its partitions (one CC each) until they differ. */
  readonly cluster?: string;
}

/** The suspension that applies to the host now (the most specific one first), if any. */
export function activeSuspension(all: Readonly<Record<string, Suspension>>, scope: HostScope, now: number): { key: string; s: Suspension } | undefined {
  const keys = [`host:${scope.host}`, `cluster:${scope.cluster ?? scope.partition}`, `partition:${scope.partition}`];
  for (const key of keys) {
    const s = all[key];
    if (s && (s.until === null || now < s.until)) return { key, s };
  }
  return undefined;
}

/** Why the host's automation is suspended now, in words, or undefined. */
export function suspensionReason(all: Readonly<Record<string, Suspension>>, scope: HostScope, now: number): string | undefined {
  const active = activeSuspension(all, scope, now);
  if (!active) return undefined;
  const until = active.s.until === null ? 'until lifted' : `until ${new Date(active.s.until).toISOString()}`;
  return `automation suspended for ${active.key} by ${active.s.by} ${until}: ${active.s.reason}`;
}

/** Combines the storm verdict with any suspension: either one holds remediation back. */
export function remediationFor(storm: RemediationAllowance, all: Readonly<Record<string, Suspension>>, scope: HostScope, now: number): RemediationAllowance {
  const reason = suspensionReason(all, scope, now);
  if (reason === undefined) return storm;
  return storm.allowed ? { allowed: false, reason } : { allowed: false, reason: `${reason}; ${storm.reason}` };
}
