/** Migrations in the admin API's XML (MigrateInstances, DescribeMigrations, CancelMigration). */
import type { MigrationItemView, MigrationView } from '../../core/migrationView.js';
import type { XmlObject } from '../xmlResponse.js';
import { isoTime } from './instanceItems.js';

function optionalTime(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : isoTime(ms);
}

export function migrationItemXml(i: MigrationItemView): XmlObject {
  return {
    instanceId: i.instanceId,
    instanceType: i.instanceType,
    destination: i.destination,
    state: i.state,
    attempts: i.attempts,
    error: i.error,
    queuedAt: isoTime(i.queuedAt),
    startedAt: optionalTime(i.startedAt),
    endedAt: optionalTime(i.endedAt),
    elapsedMs: i.elapsedMs,
    progress: i.progress && {
      bytesTotal: i.progress.bytesTotal, bytesTransferred: i.progress.bytesTransferred,
      bytesRemaining: i.progress.bytesRemaining, iteration: i.progress.iteration,
    },
    stats: i.stats && {
      elapsedMs: i.stats.elapsedMs, downtimeMs: i.stats.downtimeMs, bytesTransferred: i.stats.bytesTransferred, iterations: i.stats.iterations,
    },
    // Only on a drain's cold move (issue 18): the instance was re-homed stopped, not live-migrated.
    cold: i.cold,
  };
}

/** One migration: its identity, request, overall state and items (also the body of Migrate/Cancel replies). */
export function migrationXml(m: MigrationView): XmlObject {
  return {
    migrationId: m.migrationId,
    partition: m.partition,
    sourceHost: m.source,
    kind: m.kind,
    state: m.status,
    createdAt: isoTime(m.createdAt),
    cancelRequested: m.cancelRequested,
    sourceReachable: m.sourceReachable,
    destinationHostSet: m.destinations,
    allowHosts: m.allowHosts,
    reserveDestinations: m.reserveDestinations,
    itemSet: m.items.map(migrationItemXml),
  };
}
