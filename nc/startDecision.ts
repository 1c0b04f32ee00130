/**
 * Whether the NC starts again an instance it already owns whose domain is shut off or crashed
 * (ncStartInstance; host HA powering on a fenced host's own instances once it is back, issue 15), as
 * a pure decision over its snapshot (STYLE habit 1). The runner executes it: the driver's create()
 * starts the existing domain from its own disk. Nothing new is admitted: the record, its resources
 * and its disk are the ones the node already holds.
 */
import { fits, sub, type Resources } from '../shared/model/resources.js';
import type { ErrorFields } from '../shared/errors/registry.js';
import type { NcErrorCode } from './errors.js';
import { observedState, type Observation } from './instanceView.js';
import type { InstanceRecord, NcSnapshot } from './ncStore.js';
import { show, withoutDomain } from './admission.js';
import { usedResources } from './usage.js';

export interface StartInput {
  readonly host: string;
  readonly snapshot: NcSnapshot;
  readonly instanceId: string;
  /** Host capacity from the last connect(); undefined when the hypervisor was never reached. */
  readonly capacity: Resources | undefined;
  readonly healthy: boolean;
  readonly observation: Observation | undefined;
  /** StartInstances (issue 18): a user-stopped instance may start (its mark cleared first); host HA's start may not. */
  readonly userStart?: boolean;
}

export type StartDecision =
  /** Its domain runs already (or is paused): answer with it as is. */
  | { readonly kind: 'running'; readonly record: InstanceRecord }
  /** Start the shut-off (or crashed) domain of `record`; `clearStopped`: persist the user's start first. */
  | { readonly kind: 'start'; readonly record: InstanceRecord; readonly clearStopped: boolean }
  | { readonly kind: 'refuse'; readonly code: NcErrorCode; readonly fields: ErrorFields; readonly message?: string };

const notStartable = (host: string, instanceId: string, detail: string): StartDecision =>
  ({ kind: 'refuse', code: 'InstanceNotStartable', fields: { host, instanceId, detail } });

/**
 * Identity first, then what the instance is doing, then (idempotency) a running domain is answered
 * even on a disabled node, then the node: a disabled node starts nothing (a FENCED host is held
 * disabled, so no copy ever starts behind a fence), its hypervisor must answer, and the instance
 * must still fit (a real host can come back with less memory than it had).
 */
export function decideStart(input: StartInput): StartDecision {
  const { host, snapshot, instanceId } = input;
  const rec = snapshot.instances[instanceId];
  if (!rec) return { kind: 'refuse', code: 'InstanceNotFound', fields: { host, instanceId } };
  if (rec.phase === 'terminated' || rec.phase === 'shutting-down') return notStartable(host, instanceId, `it is ${rec.phase}`);
  // Its create was never confirmed: re-adoption settles it (domain there → running), not a start.
  if (rec.phase === 'pending') return notStartable(host, instanceId, 'its launch has not finished');
  if (rec.migrationState !== 'none' || snapshot.incoming[instanceId] !== undefined) {
    const state = snapshot.incoming[instanceId] !== undefined ? 'incoming' : rec.migrationState;
    return {
      kind: 'refuse', code: 'InstanceMigrating', fields: { host, instanceId, migrationState: state },
      message: `instance ${instanceId} on node ${host} is migrating (${state}); start it once the migration has ended`,
    };
  }
  // Only its user starts what its user stopped: host HA powering on a returning host's own leaves it off.
  if (rec.userStopped === true && input.userStart !== true) return notStartable(host, instanceId, 'its user stopped it (StartInstances starts it)');
  if (!input.healthy || !input.capacity) return { kind: 'refuse', code: 'HypervisorUnavailable', fields: { host, detail: 'not connected' } };
  const observed = observedState(input.observation, instanceId);
  if (observed === 'running' || observed === 'paused' || observed === 'suspended') {
    // A user's start of an instance whose stop never reached its domain: the record's mark goes, the domain is as asked.
    return rec.userStopped === true ? { kind: 'start', record: rec, clearStopped: true } : { kind: 'running', record: rec };
  }
  // Nothing to start from: the domain (and with it the disk the NC knows) is gone.
  if (observed !== 'shutoff' && observed !== 'crashed') return notStartable(host, instanceId, `its domain is ${observed} in the hypervisor`);
  if (snapshot.nodeState === 'disabled') {
    return { kind: 'refuse', code: 'NodeDisabled', fields: { host }, message: `node ${host} is disabled and starts no instance until it is enabled` };
  }
  const others = Object.fromEntries(Object.entries(snapshot.instances).filter(([id]) => id !== instanceId));
  const free = sub(input.capacity, usedResources(others, withoutDomain(input.observation, instanceId), snapshot.incoming));
  if (!fits(rec.vmType, free)) {
    return { kind: 'refuse', code: 'InsufficientCapacity', fields: { host, vmType: rec.vmType.name, need: show(rec.vmType), free: show(free) } };
  }
  return { kind: 'start', record: rec, clearStopped: rec.userStopped === true };
}
