/**
 * CancelMigration: rolls back every item of a migration that has not committed yet (committed ones
 * finish); answers the plan once its source NC recorded the cancel. A change in the migration's
 * partition (clc/core/gate.ts): it frees reservations, so it waits for a pending drain there.
 */
import { z } from 'zod';
import { partitionNames } from '../../clusters/clusters.js';
import { ClcErrors } from '../../core/errors.js';
import { viewOfPlan } from '../../core/migrationView.js';
import { defineAction, type ActionContext } from '../action.js';
import { migrationIdParam, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { migrationXml } from '../render/migrationItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { describeMigrations, requireMigrations } from './migrationLookup.js';

const schema = z.strictObject({
  MigrationId: migrationIdParam,
}).transform((p) => ({ migrationId: p.MigrationId }));

export type CancelMigrationInput = Readonly<z.infer<typeof schema>>;

export function parseCancelMigration(params: ParamMap): CancelMigrationInput {
  return parseActionParams(schema, params);
}

async function run(input: CancelMigrationInput, ctx: ActionContext): Promise<XmlObject> {
  const all = partitionNames(ctx.clusters);
  const ticket = ctx.gate.enter('change', `CancelMigration of ${input.migrationId}`, all);
  const [found] = requireMigrations([input.migrationId], await describeMigrations(ctx, all));
  if (!found) throw ClcErrors.make('InternalError', { detail: `migration ${input.migrationId} was resolved to nothing` });
  await ticket.ready([found.partition]);
  // Already finished is the CC's to say (MigrationAlreadyFinished): its answer is fresher than ours.
  const r = await ctx.clusters.call(found.partition, 'ccCancelMigration', { migrationId: input.migrationId });
  ctx.logger.info({ partition: found.partition, migrationId: input.migrationId }, 'migration cancelled');
  const actor = ctx.actor ?? 'system';
  await ctx.events?.record([{
    kind: 'migration.cancel-requested', migrationId: input.migrationId, partition: found.partition, host: r.plan.source, actor,
    message: `CancelMigration of ${input.migrationId} by ${actor}`, details: {},
  }]);
  return migrationXml(viewOfPlan(r.plan, found.partition, ctx.clock.now()));
}

export const cancelMigration = defineAction({ namespace: EUCA_NAMESPACE, parse: parseCancelMigration, run });
