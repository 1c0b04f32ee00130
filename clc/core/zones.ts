/** Partition (= availability zone) checks shared by the core operations and the API's actions. */
import type { Clusters } from '../clusters/clusters.js';
import { hasPartition, partitionNames } from '../clusters/clusters.js';
import { ClcErrors } from './errors.js';
import { showKey } from './showKey.js';

/** Throws InvalidAvailabilityZone unless `zone` is a configured partition. */
export function requireZone(clusters: Clusters, zone: string): string {
  if (!hasPartition(clusters, zone)) {
    throw ClcErrors.make('InvalidAvailabilityZone', { zone: showKey(zone), known: partitionNames(clusters).join(', ') });
  }
  return zone;
}
