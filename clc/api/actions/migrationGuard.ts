/**
 * Changes to an instance that is migrating (TerminateInstances now; reboot, stop, attach and detach
 * when they exist) are refused as a whole with OperationNotPermitted, naming each instance and its
 * migration, before anything is done: the migration owns the instance until its item is final.
 */
import { askPartitions } from '../../clusters/fanOut.js';
import { ClcErrors } from '../../core/errors.js';
import { isMigrating, type InstanceView } from '../../core/instanceView.js';
import { isFinalItemState } from '../../core/migrationView.js';
import type { ActionContext } from '../action.js';

/** How many refused instances one message names before it says "and N more". */
const NAMED_IN_MESSAGE = 5;

/** migrationId of each instance's unfinished item, asked of their partitions; best effort. */
async function migrationIdsOf(ctx: ActionContext, views: readonly InstanceView[]): Promise<Map<string, string>> {
  const partitions = [...new Set(views.map((v) => v.partition))];
  const fan = await askPartitions(ctx.clusters, partitions, 'ccDescribeMigrations', {}, ctx.logger);
  const out = new Map<string, string>();
  for (const r of fan.answers.values()) {
    for (const m of r.migrations) {
      for (const item of m.items) if (!isFinalItemState(item.state)) out.set(item.instanceId, m.migrationId);
    }
  }
  return out;
}

function describe(v: InstanceView, migrationId: string | undefined): string {
  const what = migrationId !== undefined ? `migration ${migrationId}` : 'a migration';
  const route = v.migration.source !== undefined || v.migration.destination !== undefined
    ? `, ${v.migration.source ?? v.host ?? '?'} to ${v.migration.destination ?? '?'}`
    : '';
  return `instance ${v.instanceId}: it is in ${what} (${v.migration.state}${route})`;
}

/** Throws OperationNotPermitted when any of `views` is migrating; `action` is the refused request. */
export async function refuseMigrating(ctx: ActionContext, action: string, views: readonly InstanceView[]): Promise<void> {
  const moving = views.filter(isMigrating);
  if (moving.length === 0) return;
  const ids = await migrationIdsOf(ctx, moving);
  const named = moving.slice(0, NAMED_IN_MESSAGE).map((v) => describe(v, ids.get(v.instanceId)));
  if (moving.length > NAMED_IN_MESSAGE) named.push(`and ${moving.length - NAMED_IN_MESSAGE} more`);
  throw ClcErrors.make('OperationNotPermitted', {
    action,
    instanceIds: moving.map((v) => v.instanceId).join(','),
    detail: `${named.join('; ')}. Nothing was done; retry once the migration has finished, or cancel it with CancelMigration`,
  });
}
