/**
 * Puts a node in or out of maintenance mode (Eucalyptus 3.3): the one operation behind the admin's
 * EnableService / DisableService / ModifyService and host HA's DisableService of a failing host.
 * The node is found (in the named partition, or in whichever partition reports it), its CC is asked
 * to change it, and the answer comes only after the CC answered, which it does once the NC has
 * persisted the state.
 *
 * Gating (gate.ts): disabling takes capacity away, so it runs alone in its partition and the
 * changes that arrive meanwhile wait for its answer; enabling only adds capacity, so it is an
 * ordinary change.
 */
import type { NodeState } from '../../shared/protocol/common.js';
import type { ClcCcResponse } from '../clusters/ccContract.js';
import { partitionNames } from '../clusters/clusters.js';
import { findNodePartition } from './nodeLookup.js';
import type { OperationContext } from './operationContext.js';
import { requireZone } from './zones.js';

/** A node to change: its address, and its partition when the caller named it. */
export interface NodeTarget {
  readonly host: string;
  readonly partition: string | undefined;
  /** Why, as the caller said it (recorded in the event stream). */
  readonly reason?: string | undefined;
}

/** The node's partition and its CC's answer (the node as it is now, its previous state, the matrix). */
export interface NodeStateChange {
  readonly partition: string;
  readonly changed: ClcCcResponse<'ccModifyNode'>;
}

/**
 * Changes the node's state through the change gate, with host HA's hooks when the context has them.
 * `label` names the request to whoever waits behind it in the gate.
 */
export async function changeNodeState(ctx: OperationContext, target: NodeTarget, stateName: NodeState, label: string): Promise<NodeStateChange> {
  const candidates = target.partition !== undefined ? [requireZone(ctx.clusters, target.partition)] : partitionNames(ctx.clusters);
  const ticket = ctx.gate.enter(stateName === 'disabled' ? 'exclusive' : 'change', label, candidates);
  const partition = await findNodePartition(ctx, target.host, candidates, target.partition);
  await ticket.ready([partition]);
  if (stateName === 'enabled') await ctx.haHooks?.beforeEnable(target.host, partition);
  const changed = await ctx.clusters.call(partition, 'ccModifyNode', { host: target.host, stateName, vmTypes: ctx.store.read().vmTypes });
  if (stateName === 'enabled') await ctx.haHooks?.afterEnable(target.host, partition);
  ctx.logger.info({ partition, host: target.host, previousState: changed.previousState, stateName }, 'node state changed');
  // Recorded before the answer: an acknowledged change is never missing from the stream.
  await ctx.events?.record([{
    kind: stateName === 'disabled' ? 'node.disabled' : 'node.enabled', host: target.host, partition, actor: ctx.actor ?? 'system',
    message: `node ${target.host} ${stateName} by ${ctx.actor ?? 'system'}${target.reason !== undefined ? `: ${target.reason}` : ''} (was ${changed.previousState})`,
    details: { previousState: changed.previousState, ...(target.reason !== undefined ? { reason: target.reason } : {}) },
  }]);
  return { partition, changed };
}
