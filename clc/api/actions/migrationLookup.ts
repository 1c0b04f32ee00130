/** Migrations across partitions, shared by DescribeMigrations and CancelMigration. */
import type { FerryError } from '../../../shared/errors/registry.js';
import { askPartitions } from '../../clusters/fanOut.js';
import { ClcErrors } from '../../core/errors.js';
import { compareMigrations, viewOfPlan, type MigrationView } from '../../core/migrationView.js';
import type { OperationContext } from '../../core/operationContext.js';

export interface KnownMigrations {
  /** Oldest first. */
  readonly views: readonly MigrationView[];
  readonly unavailable: ReadonlyMap<string, FerryError>;
}

/** Every migration the answering partitions' CCs report (a read: the status page asks it too). */
export async function describeMigrations(ctx: Pick<OperationContext, 'clusters' | 'clock' | 'logger'>, partitions: readonly string[]): Promise<KnownMigrations> {
  // Always unfiltered: a CC asked for an id it does not hold may refuse, and that is not unavailability.
  const fan = await askPartitions(ctx.clusters, partitions, 'ccDescribeMigrations', {}, ctx.logger);
  const now = ctx.clock.now();
  const views = [...fan.answers].flatMap(([partition, r]) => r.migrations.map((m) => viewOfPlan(m, partition, now)));
  return { views: views.sort(compareMigrations), unavailable: fan.unavailable };
}

/**
 * The views of `ids`, in order. Unknown ids are InvalidMigrationID.NotFound (all named), unless a
 * partition did not answer: then they may be its, and that is ServiceUnavailable.
 */
export function requireMigrations(ids: readonly string[], known: KnownMigrations): MigrationView[] {
  const byId = new Map(known.views.map((v) => [v.migrationId, v]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0 && known.unavailable.size > 0) {
    throw ClcErrors.make('ServiceUnavailable', {
      partition: [...known.unavailable.keys()].join(','), delivered: 'no',
      detail: `migration ${missing.join(', ')} is not in any answering partition, and ${[...known.unavailable.values()].map((e) => e.message).join('; ')}`,
    });
  }
  if (missing.length > 0) throw ClcErrors.make('InvalidMigrationID.NotFound', { ids: missing.join(', ') });
  return ids.map((id) => byId.get(id) as MigrationView);
}
