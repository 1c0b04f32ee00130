/** Resource accounting on one node: what instances and unclaimed domains hold. Pure. */
import { add, sum, type Resources } from '../shared/model/resources.js';
import type { DomainInfo } from './hypervisor/driver.js';
import type { Observation } from './instanceView.js';
import type { InstanceRecord } from './ncStore.js';

function toResources(r: Resources): Resources {
  return { cores: r.cores, memoryMiB: r.memoryMiB, diskGiB: r.diskGiB };
}

/** Domains the hypervisor runs that the NC has no record of (its store was lost or replaced). */
export function orphanDomains(instances: Readonly<Record<string, InstanceRecord>>, obs: Observation | undefined): DomainInfo[] {
  if (!obs) return [];
  return [...obs.domains.values()].filter((d) => !Object.prototype.hasOwnProperty.call(instances, d.id));
}

/**
 * Every instance that is not terminated holds its VM type's resources, whatever the hypervisor says
 * (a stopped domain keeps its disk and can be started again); orphan domains hold theirs too.
 */
export function usedResources(instances: Readonly<Record<string, InstanceRecord>>, obs: Observation | undefined): Resources {
  const held = Object.values(instances).filter((r) => r.phase !== 'terminated').map((r) => toResources(r.vmType));
  const orphans = orphanDomains(instances, obs).map((d) => toResources(d.resources));
  return add(sum(held), sum(orphans));
}
