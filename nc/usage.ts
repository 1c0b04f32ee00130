/** Resource accounting on one node: what instances, incoming migrations and unclaimed domains hold. Pure. */
import { add, sum, type Resources } from '../shared/model/resources.js';
import type { DomainInfo } from './hypervisor/driver.js';
import type { Observation } from './instanceView.js';
import type { InstanceRecord, StoredIncoming } from './ncStore.js';

function toResources(r: Resources): Resources {
  return { cores: r.cores, memoryMiB: r.memoryMiB, diskGiB: r.diskGiB };
}

const has = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

/**
 * Domains the hypervisor runs that the NC has no record of (its store was lost or replaced). A
 * prepared incoming domain is not one: its Incoming record holds it.
 */
export function orphanDomains(
  instances: Readonly<Record<string, InstanceRecord>>, obs: Observation | undefined,
  incoming: Readonly<Record<string, StoredIncoming>> = {},
): DomainInfo[] {
  if (!obs) return [];
  return [...obs.domains.values()].filter((d) => !has(instances, d.id) && !has(incoming, d.id));
}

/**
 * Every instance that is not terminated holds its VM type's resources, whatever the hypervisor says
 * (a domain stopped by a power cycle keeps them: host HA starts it again), except one its user
 * stopped (StopInstances, issue 18: as in EC2, it holds nothing and its start is admitted afresh); every Incoming record holds its VM
 * type's (the reservation a destination prepare made); orphan domains hold theirs too.
 */
export function usedResources(
  instances: Readonly<Record<string, InstanceRecord>>, obs: Observation | undefined,
  incoming: Readonly<Record<string, StoredIncoming>> = {},
): Resources {
  const held = Object.values(instances).filter((r) => r.phase !== 'terminated' && r.userStopped !== true).map((r) => toResources(r.vmType));
  const reserved = Object.values(incoming).map((r) => toResources(r.vmType));
  const orphans = orphanDomains(instances, obs, incoming).map((d) => toResources(d.resources));
  return add(add(sum(held), sum(reserved)), sum(orphans));
}
