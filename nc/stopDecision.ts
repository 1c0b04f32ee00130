/**
 * Stop and reboot of an instance (issue 18 part 5: ncStopInstance, ncRebootInstance), as pure
 * decisions over the NC's snapshot and its last look at the hypervisor (STYLE habit 1);
 * NodeController runs them. The record holds the user's word (`userStopped`), the domain the
 * hypervisor's. A stop whose two words already agree is answered as is (idempotent); otherwise the
 * record is written first (when it differs), then the domain is shut down (when it runs), so a
 * repeat, or the next start or reconnect (settleStops), finishes what a crash interrupted.
 *
 * | record / domain              | stop                 | reboot                  |
 * |------------------------------|----------------------|-------------------------|
 * | not stopped / running        | persist, shut down   | reboot                  |
 * | stopped / shutoff or crashed | answer               | refuse (stopped)        |
 * | stopped / running (crash)    | shut down            | refuse (stopped)        |
 * | not stopped / shutoff (HA)   | persist              | refuse (domain shutoff) |
 *
 * Refused, changing nothing: no record (InstanceNotFound); pending, shutting down, terminated,
 * paused by an administrator (unpause it first), or a domain neither running nor shut off
 * (InstanceStateConflict); in a migration (InstanceMigrating); the hypervisor not reached
 * (HypervisorUnavailable). A disabled or quarantined node stops and reboots its instances.
 */
import type { ErrorFields } from '../shared/errors/registry.js';
import type { InstanceState } from '../shared/protocol/common.js';
import type { DomainInfo } from './hypervisor/driver.js';
import type { NcErrorCode } from './errors.js';
import { deriveState, observedState, type Observation } from './instanceView.js';
import type { InstanceRecord, NcSnapshot } from './ncStore.js';

export interface PowerInput {
  readonly host: string;
  readonly snapshot: NcSnapshot;
  readonly instanceId: string;
  readonly healthy: boolean;
  readonly observation: Observation | undefined;
}

type Refusal = { readonly kind: 'refuse'; readonly code: NcErrorCode; readonly fields: ErrorFields; readonly message?: string };

export type StopDecision =
  /** Record and domain already say stopped: answer with them. */
  | { readonly kind: 'answer'; readonly record: InstanceRecord; readonly previousState: InstanceState }
  /** Write `userStopped` first when `persist`, then shut the domain down when `act`. */
  | { readonly kind: 'change'; readonly record: InstanceRecord; readonly previousState: InstanceState; readonly persist: boolean; readonly act: boolean }
  | Refusal;

export type RebootDecision = { readonly kind: 'reboot'; readonly record: InstanceRecord } | Refusal;

/** The checks stop and reboot share: the record exists, is launched, not migrating, not paused, and the hypervisor answers. */
function common(input: PowerInput, action: 'stopped' | 'rebooted'): { readonly record: InstanceRecord } | Refusal {
  const { host, snapshot, instanceId } = input;
  const rec = snapshot.instances[instanceId];
  if (!rec) {
    if (snapshot.incoming[instanceId]) return migrating(host, instanceId, 'incoming', action);
    return { kind: 'refuse', code: 'InstanceNotFound', fields: { host, instanceId } };
  }
  if (rec.phase !== 'running') return conflict(host, instanceId, action, `it is ${rec.phase}`);
  if (rec.migrationState !== 'none') return migrating(host, instanceId, rec.migrationState, action);
  if (rec.paused === true) return conflict(host, instanceId, action, 'it is paused by an administrator (unpause it first)');
  if (!input.healthy) return { kind: 'refuse', code: 'HypervisorUnavailable', fields: { host, detail: 'not connected' } };
  return { record: rec };
}

export function decideStop(input: PowerInput): StopDecision {
  const c = common(input, 'stopped');
  if ('kind' in c) return c;
  const { record } = c;
  const observed = observedState(input.observation, input.instanceId);
  const previousState = deriveState(record.phase, observed);
  const recordSays = record.userStopped === true;
  if (observed === 'shutoff' || observed === 'crashed') {
    return recordSays ? { kind: 'answer', record, previousState } : { kind: 'change', record, previousState, persist: true, act: false };
  }
  if (observed !== 'running') return conflict(input.host, input.instanceId, 'stopped', `its domain is ${observed} in the hypervisor`);
  return { kind: 'change', record, previousState, persist: !recordSays, act: true };
}

export function decideReboot(input: PowerInput): RebootDecision {
  const c = common(input, 'rebooted');
  if ('kind' in c) return c;
  const { record } = c;
  if (record.userStopped === true) return conflict(input.host, input.instanceId, 'rebooted', 'it is stopped (start it instead)');
  const observed = observedState(input.observation, input.instanceId);
  if (observed !== 'running') return conflict(input.host, input.instanceId, 'rebooted', `its domain is ${observed} in the hypervisor`);
  return { kind: 'reboot', record };
}

function conflict(host: string, instanceId: string, action: string, detail: string): Refusal {
  return { kind: 'refuse', code: 'InstanceStateConflict', fields: { host, instanceId, action, detail } };
}

function migrating(host: string, instanceId: string, state: string, action: string): Refusal {
  return {
    kind: 'refuse', code: 'InstanceMigrating', fields: { host, instanceId, migrationState: state },
    message: `instance ${instanceId} on node ${host} is migrating (${state}); it can be ${action} once the migration has ended`,
  };
}

/** Record transition: the user's word, applied to a store draft. */
export function setUserStopped(rec: InstanceRecord, stopped: boolean): void {
  if (stopped) rec.userStopped = true;
  else delete rec.userStopped;
}

/**
 * At start and every reconnect: records its user stopped whose domain runs (a crash
 * between the record's write and the shutdown) are shut down again. Instances in a migration are
 * left to it. The NC never starts a stopped instance on its own.
 */
export function settleStops(instances: Readonly<Record<string, InstanceRecord>>, domains: readonly DomainInfo[]): string[] {
  const byId = new Map(domains.map((d) => [d.id, d]));
  return Object.values(instances)
    .filter((r) => r.phase === 'running' && r.migrationState === 'none' && r.userStopped === true && byId.get(r.instanceId)?.state === 'running')
    .map((r) => r.instanceId)
    .sort();
}
