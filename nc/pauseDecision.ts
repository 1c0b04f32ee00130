/**
 * Pause and resume of an instance (issue 18 part 6: ncPauseInstance), as pure decisions over the
 * NC's snapshot and its last look at the hypervisor (STYLE habit 1); NodeController runs them. The
 * instance's record holds the administrator's word (`paused`), the domain the hypervisor's
 * ('suspended' or 'running'). A request whose two words already agree is answered as is
 * (idempotent); otherwise the record is written first (when it differs) and then the domain is
 * changed (when it differs), so a repeat finishes what a crash interrupted.
 *
 * | record / domain            | pause              | resume             |
 * |----------------------------|--------------------|--------------------|
 * | not paused / running       | persist, suspend   | answer             |
 * | paused / suspended         | answer             | persist, resume    |
 * | paused / running (crash)   | suspend            | persist            |
 * | not paused / suspended     | persist            | resume             |
 *
 * Refused, changing nothing: no record (InstanceNotFound); pending, shutting down or terminated, or
 * a domain that does not run (InstanceNotPausable); in a migration (InstanceMigrating); the
 * hypervisor not reached (HypervisorUnavailable). A disabled or quarantined node pauses and resumes:
 * neither takes capacity (freezing a suspect guest on a quarantined node is the point).
 */
import type { ErrorFields } from '../shared/errors/registry.js';
import type { DomainInfo } from './hypervisor/driver.js';
import type { NcErrorCode } from './errors.js';
import { observedState, type Observation } from './instanceView.js';
import type { InstanceRecord, NcSnapshot } from './ncStore.js';

export interface PauseInput {
  readonly host: string;
  readonly snapshot: NcSnapshot;
  readonly instanceId: string;
  /** true: pause; false: resume. */
  readonly paused: boolean;
  readonly healthy: boolean;
  readonly observation: Observation | undefined;
}

export type PauseDecision =
  /** Record and domain already say so: answer with them. */
  | { readonly kind: 'answer'; readonly record: InstanceRecord }
  /** Write the record's `paused` first when `persist`, then suspend or resume the domain when `act`. */
  | { readonly kind: 'change'; readonly record: InstanceRecord; readonly persist: boolean; readonly act: boolean }
  | { readonly kind: 'refuse'; readonly code: NcErrorCode; readonly fields: ErrorFields; readonly message?: string };

const verb = (paused: boolean): string => (paused ? 'paused' : 'resumed');

export function decidePause(input: PauseInput): PauseDecision {
  const { host, snapshot, instanceId, paused } = input;
  const rec = snapshot.instances[instanceId];
  if (!rec) {
    const incoming = snapshot.incoming[instanceId];
    if (incoming) return migrating(host, instanceId, 'incoming', paused);
    return { kind: 'refuse', code: 'InstanceNotFound', fields: { host, instanceId } };
  }
  if (rec.phase !== 'running') return notPausable(host, instanceId, paused, `it is ${rec.phase}`);
  if (rec.migrationState !== 'none') return migrating(host, instanceId, rec.migrationState, paused);
  if (!input.healthy) return { kind: 'refuse', code: 'HypervisorUnavailable', fields: { host, detail: 'not connected' } };
  const observed = observedState(input.observation, instanceId);
  if (observed !== 'running' && observed !== 'suspended') return notPausable(host, instanceId, paused, `its domain is ${observed} in the hypervisor`);
  const recordSays = rec.paused === true;
  const domainSays = observed === 'suspended';
  if (recordSays === paused && domainSays === paused) return { kind: 'answer', record: rec };
  return { kind: 'change', record: rec, persist: recordSays !== paused, act: domainSays !== paused };
}

function notPausable(host: string, instanceId: string, paused: boolean, detail: string): PauseDecision {
  return { kind: 'refuse', code: 'InstanceNotPausable', fields: { host, instanceId, action: verb(paused), detail } };
}

function migrating(host: string, instanceId: string, state: string, paused: boolean): PauseDecision {
  return {
    kind: 'refuse', code: 'InstanceMigrating', fields: { host, instanceId, migrationState: state },
    message: `instance ${instanceId} on node ${host} is migrating (${state}); it can be ${verb(paused)} once the migration has ended`,
  };
}

/** Record transition: the administrator's word, applied to a store draft. */
export function setPaused(rec: InstanceRecord, paused: boolean): void {
  if (paused) rec.paused = true;
  else delete rec.paused;
}

export interface PauseSettlement {
  /** Records whose domain is suspended though the record does not say so: they are marked paused. */
  readonly markPaused: readonly string[];
  /** Paused records whose domain runs (a crash between the record's write and the suspend): suspend again. */
  readonly suspend: readonly string[];
}

/**
 * At start and every reconnect: record and domain brought to agree, and freezing wins. A frozen
 * guest is never thawed by the NC on its own: only an administrator's resume does that (a lost
 * store re-adopts a suspended domain, and it stays paused). Instances in a migration are left to it.
 */
export function settlePauses(instances: Readonly<Record<string, InstanceRecord>>, domains: readonly DomainInfo[]): PauseSettlement {
  const markPaused: string[] = [];
  const suspend: string[] = [];
  const byId = new Map(domains.map((d) => [d.id, d]));
  for (const rec of Object.values(instances)) {
    if (rec.phase !== 'running' || rec.migrationState !== 'none') continue;
    const state = byId.get(rec.instanceId)?.state;
    if (state === 'suspended' && rec.paused !== true) markPaused.push(rec.instanceId);
    if (state === 'running' && rec.paused === true) suspend.push(rec.instanceId);
  }
  return { markPaused: markPaused.sort(), suspend: suspend.sort() };
}
