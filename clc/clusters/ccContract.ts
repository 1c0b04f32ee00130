/**
 * The part of the CC contract the CLC calls: CC_OPS plus the live-migration operations, which
 * shared/protocol/ccProtocol.ts keeps in CC_MIGRATION_OPS until they fold into CC_OPS (ccNodeEvent
 * is the NCs' to call, not ours). Once folded, this is CC_OPS and the spread below is a no-op.
 */
import type { z } from 'zod';
import { CC_MIGRATION_OPS, CC_OPS } from '../../shared/protocol/ccProtocol.js';

export const CLC_CC_OPS = Object.freeze({
  ...CC_OPS,
  ccMigrateInstances: CC_MIGRATION_OPS.ccMigrateInstances,
  ccDescribeMigrations: CC_MIGRATION_OPS.ccDescribeMigrations,
  ccCancelMigration: CC_MIGRATION_OPS.ccCancelMigration,
});

export type ClcCcOp = keyof typeof CLC_CC_OPS;
export type ClcCcRequest<O extends ClcCcOp> = z.infer<(typeof CLC_CC_OPS)[O]['request']>;
export type ClcCcResponse<O extends ClcCcOp> = z.infer<(typeof CLC_CC_OPS)[O]['response']>;

/**
 * Operations that change something in a partition. The CLC sends them only while the request holds
 * the partition's gate (clc/api/requestGate.ts refuses any other): reads are never gated.
 */
export const CHANGE_OPS: ReadonlySet<ClcCcOp> = new Set<ClcCcOp>([
  'ccRunInstances', 'ccTerminateInstances', 'ccModifyNode', 'ccMigrateInstances', 'ccCancelMigration',
]);
