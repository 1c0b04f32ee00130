/** The CC contract as the CLC calls it (ccNodeEvent is in it too, but only NCs send it). */
import type { z } from 'zod';
import { CC_OPS } from '../../shared/protocol/ccProtocol.js';

export const CLC_CC_OPS = CC_OPS;

export type ClcCcOp = keyof typeof CLC_CC_OPS;
export type ClcCcRequest<O extends ClcCcOp> = z.infer<(typeof CLC_CC_OPS)[O]['request']>;
export type ClcCcResponse<O extends ClcCcOp> = z.infer<(typeof CLC_CC_OPS)[O]['response']>;

/**
 * Operations that change something in a partition. The CLC sends them only while the request holds
 * the partition's gate (clc/core/requestGate.ts refuses any other): reads are never gated.
 */
export const CHANGE_OPS: ReadonlySet<ClcCcOp> = new Set<ClcCcOp>([
  'ccRunInstances', 'ccTerminateInstances', 'ccStartInstances', 'ccModifyNode', 'ccQuarantineNode', 'ccMigrateInstances', 'ccCancelMigration',
  'ccAttachVolume', 'ccDetachVolume', 'ccPauseInstance', 'ccStopInstance', 'ccStartInstance', 'ccRebootInstance',
]);
