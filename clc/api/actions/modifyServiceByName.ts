/**
 * ModifyService (Eucalyptus 4, `euserv-modify-service -s STATE NAME`): a service named as
 * DescribeServices prints it (name or full name) and a Eucalyptus transition or state name.
 *
 * For a node, ENABLE/ENABLED and DISABLE/DISABLED are EnableService and DisableService exactly
 * (changeNodeState in clc/core/nodeState.ts: same gate kind, same HA hooks, the reply after the NC
 * persisted the state). Every other transition of a node, and any change of the CLC or of a
 * cluster, is UnsupportedOperation naming what Ferry does instead; nothing is changed.
 */
import { z } from 'zod';
import type { NodeState } from '../../../shared/protocol/common.js';
import { FerryError } from '../../../shared/errors/registry.js';
import { partitionNames } from '../../clusters/clusters.js';
import {
  EUCA_STATES, EUCA_TRANSITIONS, isEucaState, isEucaTransition, resolveServiceName,
  type EucaState, type EucaTransition, type ServiceRef,
} from '../../core/services.js';
import { defineAction, type ActionContext } from '../action.js';
import { parseActionParams } from '../actionParams.js';
import { ClcErrors } from '../../core/errors.js';
import { findNodePartition } from '../../core/nodeLookup.js';
import { changeNodeState } from '../../core/nodeState.js';
import { showKey } from '../../core/showKey.js';
import type { ParamMap } from '../queryParams.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { nodeChangeXml } from './modifyService.js';

/** The names under which a node's maintenance mode is switched; every other State is refused. */
const NODE_CHANGES: Readonly<Partial<Record<EucaTransition | EucaState, NodeState>>> = Object.freeze({
  ENABLE: 'enabled', ENABLED: 'enabled', DISABLE: 'disabled', DISABLED: 'disabled',
});

const stateParam = z.string()
  .transform((s) => s.toUpperCase())
  .refine((s): s is EucaTransition | EucaState => isEucaTransition(s) || isEucaState(s),
    `expected a transition (${EUCA_TRANSITIONS.join(', ')}) or a state (${EUCA_STATES.join(', ')})`);

const schema = z.strictObject({
  Name: z.string().min(1),
  State: stateParam,
}).transform((p) => ({ name: p.Name, state: p.State as EucaTransition | EucaState, change: NODE_CHANGES[p.State as EucaTransition | EucaState] }));

export type ModifyServiceByNameInput = Readonly<z.infer<typeof schema>>;

export function parseModifyServiceByName(params: ParamMap): ModifyServiceByNameInput {
  return parseActionParams(schema, params);
}

function notFound(name: string): FerryError {
  return ClcErrors.make('InvalidService.NotFound', { name: showKey(name) });
}

function unsupported(detail: string): FerryError {
  return ClcErrors.make('UnsupportedOperation', { detail });
}

/** What an admin should do instead of a transition Ferry does not carry out on a node. */
function nodeAlternative(state: EucaTransition | EucaState, host: string): string {
  const what = `Ferry does not carry out ${state} on node ${host}`;
  if (state === 'STOP' || state === 'STOPPED') return `${what}: use DISABLE to put it in maintenance mode (it keeps its instances and takes no new ones), and MigrateInstances to move its instances away`;
  if (state === 'START' || state === 'RESTART') return `${what}: a node serves while its NC runs; use ENABLE to take it out of maintenance mode`;
  return `${what}: a node's state changes only with ENABLE and DISABLE (maintenance mode)`;
}

function refusal(ref: Exclude<ServiceRef, { type: 'node' }>, state: string): FerryError {
  if (ref.type === 'eucalyptus') return unsupported(`Ferry does not carry out ${state} on the cloud controller: it is ENABLED while it answers; stop or start the CLC process instead`);
  return unsupported(`Ferry does not carry out ${state} on cluster ${ref.partition}: its state follows whether its CC answers; use DISABLE on its nodes to stop placement in partition ${ref.partition}, or stop its CC process`);
}

/** A node named by address that no answering CC reports is not a service of this cloud. */
async function asServiceLookup<T>(name: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    if (e instanceof FerryError && e.code === 'InvalidHost.NotFound') throw notFound(name);
    throw e;
  }
}

async function run(input: ModifyServiceByNameInput, ctx: ActionContext): Promise<XmlObject> {
  const candidates = partitionNames(ctx.clusters);
  const ref = resolveServiceName(input.name, candidates);
  if (ref === undefined) throw notFound(input.name);
  if (ref.type !== 'node') throw refusal(ref, input.state);
  const target = { host: ref.host, partition: ref.partition };
  if (input.change === undefined) {
    // Name first, as Eucalyptus does: an unknown node is NotFound whatever the State.
    await asServiceLookup(input.name, findNodePartition(ctx, ref.host, ref.partition !== undefined ? [ref.partition] : candidates, ref.partition));
    throw unsupported(nodeAlternative(input.state, ref.host));
  }
  const changed = await asServiceLookup(input.name, changeNodeState(ctx, target, input.change, `ModifyService ${input.state} of node ${ref.host}`));
  // EmpyreanMessage replies start with <return>.
  return { return: true, ...nodeChangeXml(changed) };
}

export const modifyServiceByName = defineAction({ namespace: EUCA_NAMESPACE, parse: parseModifyServiceByName, run });
