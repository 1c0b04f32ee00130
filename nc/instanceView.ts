/**
 * How the NC reports an instance: its own record (what it promised) combined with what the
 * hypervisor says now. Pure: the table in deriveState is the whole rule.
 */
import type { DomainInfo, DomainState } from './hypervisor/driver.js';
import type { InstanceState } from '../shared/protocol/common.js';
import type { NcInstance } from '../shared/protocol/ncProtocol.js';
import type { InstancePhase, InstanceRecord } from './ncStore.js';

/** The hypervisor's word for a domain: its state, 'missing' when not listed, 'unknown' when never seen. */
export type Observed = DomainState | 'missing' | 'unknown';

/** One successful list() of the hypervisor, taken at `at` (injected clock). */
export interface Observation {
  readonly at: number;
  readonly domains: ReadonlyMap<string, DomainInfo>;
}

export function observe(domains: readonly DomainInfo[], at: number): Observation {
  return { at, domains: new Map(domains.map((d) => [d.id, d])) };
}

/** Last-known state of one domain; without any observation yet the NC cannot say. */
export function observedState(obs: Observation | undefined, id: string): Observed {
  if (!obs) return 'unknown';
  return obs.domains.get(id)?.state ?? 'missing';
}

const RUNNING_BY_DOMAIN: Readonly<Record<Observed, InstanceState>> = {
  running: 'running',
  paused: 'running',
  // EC2 has no paused state: a suspended instance is running, with Ferry's paused flag (NcInstance.paused).
  suspended: 'running',
  shutoff: 'stopped',
  crashed: 'stopped',
  // The domain vanished (host wiped, someone undefined it): report it, never drop it silently.
  missing: 'stopped',
  // Hypervisor not seen since start: the record's own word is the last-known state.
  unknown: 'running',
};

export function deriveState(phase: InstancePhase, observed: Observed): InstanceState {
  switch (phase) {
    case 'pending': return 'pending';
    case 'running': return RUNNING_BY_DOMAIN[observed];
    case 'shutting-down': return 'shutting-down';
    case 'terminated': return 'terminated';
  }
}

export function instanceView(rec: InstanceRecord, observed: Observed): NcInstance {
  return {
    instanceId: rec.instanceId,
    reservationId: rec.reservationId,
    imageId: rec.imageId,
    ownerId: rec.ownerId,
    vmType: rec.vmType,
    state: deriveState(rec.phase, observed),
    hypervisorState: observed,
    launchTime: rec.launchTime,
    migrationState: rec.migrationState,
    ...(rec.adopted === true ? { adopted: true } : {}),
    ...(rec.volumes !== undefined && rec.volumes.length > 0 ? { volumes: rec.volumes.map((v) => ({ ...v })) } : {}),
    ...(rec.paused === true ? { paused: true } : {}),
    ...(rec.userStopped === true ? { userStopped: true } : {}),
    ...(rec.lastReboot !== undefined ? { lastReboot: { ...rec.lastReboot } } : {}),
    ...(rec.moved !== undefined ? { moved: { ...rec.moved } } : {}),
    ...(rec.phase === 'terminated' && rec.endedBy !== undefined ? { endedBy: rec.endedBy } : {}),
  };
}
