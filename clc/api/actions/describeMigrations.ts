/**
 * DescribeMigrations: every migration plan of every answering partition (finished ones the source
 * NCs still keep included), or those named by MigrationId.N, each with its items' state, progress,
 * timings, errors and statistics. A read: never gated.
 */
import { z } from 'zod';
import { partitionNames } from '../../clusters/clusters.js';
import { dedupe } from '../../core/instanceLookup.js';
import { defineAction, type ActionContext } from '../action.js';
import { migrationIdParam, paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { migrationXml } from '../render/migrationItems.js';
import { unavailableItems } from '../render/serviceItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { describeMigrations as knownMigrations, requireMigrations } from './migrationLookup.js';

const schema = z.strictObject({
  MigrationId: paramList(migrationIdParam).optional(),
}).transform((p) => ({ migrationIds: dedupe(p.MigrationId ?? []) }));

export type DescribeMigrationsInput = Readonly<z.infer<typeof schema>>;

export function parseDescribeMigrations(params: ParamMap): DescribeMigrationsInput {
  return parseActionParams(schema, params);
}

async function run(input: DescribeMigrationsInput, ctx: ActionContext): Promise<XmlObject> {
  const known = await knownMigrations(ctx, partitionNames(ctx.clusters));
  const views = input.migrationIds.length > 0 ? requireMigrations(input.migrationIds, known) : known.views;
  return { migrationSet: views.map(migrationXml), unavailablePartitionSet: unavailableItems(known.unavailable) };
}

export const describeMigrations = defineAction({ namespace: EUCA_NAMESPACE, parse: parseDescribeMigrations, run });
