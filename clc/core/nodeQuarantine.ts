/**
 * Quarantines a node suspected compromised, or lifts the quarantine (issue 18): the one operation
 * behind the admin's QuarantineNode and UnquarantineNode. The node is found as for a maintenance
 * change (nodeState.ts), its CC asked, and the answer comes only after the NC persisted it. The NC
 * decides (nc/quarantine.ts): already quarantined, not quarantined, or in an unfinished migration is
 * refused there, with nothing changed.
 *
 * Gating (gate.ts): a quarantine takes capacity away (the node is disabled in the same write), so it
 * runs alone in its partition like DisableService; lifting it adds nothing (the node stays
 * disabled), so it is an ordinary change.
 */
import type { ClcCcResponse } from '../clusters/ccContract.js';
import { partitionNames } from '../clusters/clusters.js';
import { findNodePartition } from './nodeLookup.js';
import type { NodeTarget } from './nodeState.js';
import type { OperationContext } from './operationContext.js';
import { requireZone } from './zones.js';

/** Quarantine with the administrator's reason ('' for none), or lift it. */
export type QuarantineChange = { readonly quarantined: true; readonly reason: string } | { readonly quarantined: false };

/** The node's partition and its CC's answer (the node as it is now, what it was, the matrix). */
export interface NodeQuarantineChange {
  readonly partition: string;
  readonly changed: ClcCcResponse<'ccQuarantineNode'>;
}

export async function changeNodeQuarantine(ctx: OperationContext, target: NodeTarget, change: QuarantineChange, label: string): Promise<NodeQuarantineChange> {
  const candidates = target.partition !== undefined ? [requireZone(ctx.clusters, target.partition)] : partitionNames(ctx.clusters);
  const ticket = ctx.gate.enter(change.quarantined ? 'exclusive' : 'change', label, candidates);
  const partition = await findNodePartition(ctx, target.host, candidates, target.partition);
  await ticket.ready([partition]);
  const changed = await ctx.clusters.call(partition, 'ccQuarantineNode', {
    host: target.host, quarantined: change.quarantined, reason: change.quarantined ? change.reason : '', vmTypes: ctx.store.read().vmTypes,
  });
  ctx.logger.warn({ partition, host: target.host, quarantined: change.quarantined, ...(change.quarantined ? { reason: change.reason } : {}) },
    change.quarantined ? 'node quarantined by an administrator' : 'node quarantine lifted by an administrator (the node stays disabled)');
  return { partition, changed };
}
