/**
 * ccRunInstances: place every instance with the pure scheduler, ask each chosen NC to start it,
 * and re-place an instance elsewhere when its NC refuses. Below minCount the request is
 * all-or-nothing: whatever did start is terminated again. Runs inside the CC's placement queue,
 * so the only placements in flight are this request's own, and the scheduler counts them.
 */
import type { Logger } from 'pino';
import { add, sub, ZERO, type Resources } from '../shared/model/resources.js';
import type { CcInstance, CcRequest } from '../shared/protocol/ccProtocol.js';
import type { NcInstance } from '../shared/protocol/ncProtocol.js';
import type { VolumeAttachmentSpec } from '../shared/protocol/volumes.js';
import { isFerryError, type FerryError } from '../shared/errors/registry.js';
import { WireErrors } from '../shared/wire/errors.js';
import type { SchedulePolicy } from './config.js';
import { CcErrors } from './errors.js';
import type { NodeClient } from './nodeClient.js';
import { schedule, type SchedulableNode } from './scheduler.js';
import { reservedOn } from './migration/reservations.js';
import {
  applyInstanceState, applyStarted, committed, findEntry, isSchedulable, locateInstance, locateOutside, reservationsOfView, type ClusterView, type Located,
} from './view.js';
import type { ViewKeeper } from './viewKeeper.js';

export interface RunContext {
  readonly keeper: ViewKeeper;
  readonly nodes: NodeClient;
  readonly policy: SchedulePolicy;
  readonly logger: Logger;
  /** Timeout of the refresh that follows a refusal. */
  readonly refreshTimeoutMs: number;
}

type RunRequest = CcRequest<'ccRunInstances'>;

type Outcome =
  | { readonly kind: 'started'; readonly at: Located }
  /** Placed nowhere (no room left anywhere, or its outcome on a node could not be settled). */
  | { readonly kind: 'unplaced' }
  | { readonly kind: 'fatal'; readonly error: unknown };

/** NC answers that prove the instance was not started there: try another node. */
function isRefusal(e: FerryError): boolean {
  if (e.code === 'NodeUnreachable') return e.fields.maybeDelivered === false;
  return e.code === 'NodeDisabled' || e.code === 'NodeFull' || e.code === 'NodeUnhealthy';
}

/**
 * Answers after which the NC may or may not have started it (timeout, garbled reply; a state write
 * that failed after the domain was created leaves it for the NC's re-adoption to settle).
 */
function isUncertain(e: FerryError): boolean {
  return e.code === 'NodeUnreachable' || e.code === 'NodeProtocolError' || e.code === 'NodeFault' || e.code === 'StateWriteFailed';
}

/**
 * The scheduler's input: the view minus excluded nodes, plus placements in flight, plus what
 * migration plans reserve (room on their destinations; whole destinations with reserveDestinations).
 */
export function schedulingNodes(view: ClusterView, excluded: ReadonlySet<string>, inFlight: ReadonlyMap<string, Resources>): SchedulableNode[] {
  const migrations = reservationsOfView(view);
  return view.entries.map(({ node }) => ({
    host: node.host,
    capacity: node.capacity,
    committed: add(add(committed(node), reservedOn(migrations, node.host)), inFlight.get(node.host) ?? ZERO),
    schedulable: isSchedulable(node) && !excluded.has(node.host) && !migrations.reservedHosts.has(node.host),
  }));
}

function sameLaunch(i: NcInstance, req: RunRequest): boolean {
  return i.state !== 'terminated' && i.reservationId === req.reservationId && i.imageId === req.imageId
    && i.ownerId === req.ownerId && i.vmType.name === req.vmType.name;
}

/**
 * Checks the request against itself and the view. Ids the view already holds from this same
 * launch are a retry and count as started; any other known id is a conflict.
 */
function validate(view: ClusterView, req: RunRequest, fencedHosts: ReadonlySet<string>): Located[] {
  // A restart ignores copies on every host HA fenced, not only the one it restarts from: an obsolete
  // copy left on a host fenced earlier is no earlier attempt of this restart (issue 21). The request's
  // avoidHosts names them too, for a CC that took up leadership and has not heard the fenced list yet.
  const fenced = new Set((req.restartFrom ?? []).length > 0 ? [...(req.restartFrom ?? []), ...(req.avoidHosts ?? []), ...fencedHosts] : []);
  if (new Set(req.instanceIds).size !== req.instanceIds.length) {
    throw WireErrors.make('InvalidParameter', { field: 'instanceIds', detail: 'an instance id appears twice' });
  }
  if (req.minCount > req.instanceIds.length) {
    throw WireErrors.make('InvalidParameter', { field: 'minCount', detail: `${req.minCount} is more than the ${req.instanceIds.length} instance ids given` });
  }
  const adopted: Located[] = [];
  for (const id of req.instanceIds) {
    const at = fenced.size > 0 ? locateOutside(view, id, fenced) : locateInstance(view, id);
    if (!at) continue;
    if (!sameLaunch(at.instance, req)) throw CcErrors.make('InstanceExists', { instanceId: id, host: at.host });
    adopted.push(at);
  }
  return adopted;
}

/**
 * A restart's view of an id: copies on the fenced hosts do not count (they died behind the fence);
 * a live copy elsewhere is an earlier attempt of this same restart.
 */
export async function runInstances(ctx: RunContext, req: RunRequest): Promise<CcInstance[]> {
  const { keeper, logger } = ctx;
  await settleEarlierRuns(ctx, req);
  // An id still unsettled is neither adopted nor placed: the view may still show the copy a settling
  // terminate has already reached (sim seed 2954: acknowledged from a stale view, gone on the node).
  const adopted = validate(keeper.get(), req, keeper.fencedHosts()).filter((a) => keeper.unsettledRun(a.instance.instanceId) === undefined);
  // An id whose earlier run may still be on a host the CC cannot settle is not placed again (sim seed 859).
  const pending = req.instanceIds.filter((id) => !adopted.some((a) => a.instance.instanceId === id) && keeper.unsettledRun(id) === undefined);
  // A restart never lands on the hosts it restarts from, and nothing lands on a host HA fences.
  const excluded = new Set<string>([...(req.restartFrom ?? []), ...(req.avoidHosts ?? []), ...keeper.fencedHosts()]);
  const restart = (req.restartFrom ?? []).length > 0;
  const inFlight = new Map<string, Resources>();
  const touched = new Set<string>();

  const pick = (count: number): readonly string[] => schedule({
    nodes: schedulingNodes(keeper.get(), excluded, inFlight), vmType: req.vmType, count, policy: ctx.policy,
  }).placements;

  const firstPlan = pick(pending.length);
  if (adopted.length + firstPlan.length < req.minCount) {
    throw capacityError(keeper.get(), req, adopted.length + firstPlan.length);
  }

  const reserve = (host: string, delta: 1 | -1): void => {
    const r = inFlight.get(host) ?? ZERO;
    inFlight.set(host, delta > 0 ? add(r, req.vmType) : sub(r, req.vmType));
  };

  // One task per placed instance; a refused instance is re-placed against the view plus the
  // siblings still in flight, so two of them cannot both take a node's last slot.
  const place = async (instanceId: string, firstHost: string): Promise<Outcome> => {
    let host: string | undefined = firstHost;
    while (host !== undefined) {
      const target: string = host;
      touched.add(target);
      reserve(target, 1);
      try {
        const instance = await keeper.change(target, async () => {
          const started = await ctx.nodes.runInstance(target, {
            instanceId, reservationId: req.reservationId, imageId: req.imageId, ownerId: req.ownerId,
            vmType: req.vmType, launchTime: req.launchTime, ...(restart ? { restart: true } : {}), ...(req.stopped === true ? { stopped: true } : {}),
            ...volumesFor(req, instanceId), ...(req.moved !== undefined ? { moved: req.moved } : {}),
          });
          keeper.update(target, (v) => applyStarted(v, target, started));
          return started;
        });
        return { kind: 'started', at: { host: target, instance } };
      } catch (e) {
        if (!isFerryError(e) || !(isRefusal(e) || isUncertain(e))) return { kind: 'fatal', error: e };
        logger.info({ host: target, instanceId, code: e.code, msg: e.message }, 'node did not start instance; re-placing');
        excluded.add(target);
        if (e.code === 'NodeUnhealthy') keeper.noteUnhealthy(target);
        if (!isRefusal(e) && !(await settledAbsent(ctx, target, instanceId))) {
          keeper.markUnsettledRun(instanceId, target);
          return { kind: 'unplaced' };
        }
        await keeper.refresh(target, ctx.refreshTimeoutMs);
      } finally {
        reserve(target, -1);
      }
      host = pick(1)[0];
    }
    return { kind: 'unplaced' };
  };

  const outcomes = await Promise.all(firstPlan.map((host, i) => place(pending[i] as string, host)));
  const started = [...adopted, ...outcomes.flatMap((o) => (o.kind === 'started' ? [o.at] : []))];
  const fatal = outcomes.find((o) => o.kind === 'fatal');
  try {
    if (fatal) {
      await rollback(ctx, started.filter((s) => !adopted.includes(s)));
      throw fatal.error;
    }
    if (started.length < req.minCount) {
      await rollback(ctx, started);
      throw capacityError(keeper.get(), req, started.length);
    }
  } finally {
    // After every change, ask the NCs touched what they now hold (the view already has our part).
    void keeper.refreshHosts([...touched], ctx.refreshTimeoutMs);
  }
  const order = new Map(req.instanceIds.map((id, i) => [id, i]));
  started.sort((a, b) => (order.get(a.instance.instanceId) ?? 0) - (order.get(b.instance.instanceId) ?? 0));
  const partition = keeper.get().partition;
  return started.map(({ host, instance }) => ({ ...instance, host, partition, migrationSource: '', migrationDestination: '' }));
}

/**
 * A request repeated (a retry, a duplicate) for ids whose earlier run had an uncertain answer the CC
 * could not settle: look at that host again first. If it holds the id, validate() adopts it; if it
 * answers without it, settle it (the NC then refuses a late copy) and the id may be placed; if it
 * still does not answer, the id stays unplaced rather than risk a second copy elsewhere.
 */
async function settleEarlierRuns(ctx: RunContext, req: RunRequest): Promise<void> {
  const { keeper } = ctx;
  const restartFrom = new Set(req.restartFrom ?? []);
  for (const id of req.instanceIds) {
    const host = keeper.unsettledRun(id);
    if (host === undefined) continue;
    // A restart from that very host: it is fenced, its copy died behind the fence.
    if (restartFrom.has(host)) {
      keeper.markUnsettledRun(id, undefined);
      continue;
    }
    await keeper.refresh(host, ctx.refreshTimeoutMs);
    const entry = findEntry(keeper.get(), host);
    if (!entry?.node.reachable) continue;
    if (entry.node.instances.some((i) => i.instanceId === id && i.state !== 'terminated') || await settledAbsent(ctx, host, id)) {
      keeper.markUnsettledRun(id, undefined);
    }
  }
}

/**
 * After an uncertain answer the NC may hold the instance after all; re-placing it would start a
 * second copy with the same id. Only an NC that confirms it holds no such instance frees it.
 */
async function settledAbsent(ctx: RunContext, host: string, instanceId: string): Promise<boolean> {
  try {
    await terminateOn(ctx, host, instanceId);
    return true;
  } catch (e) {
    if (isFerryError(e) && e.code === 'InstanceNotFound') return true;
    ctx.logger.warn({ host, instanceId, err: e }, 'could not settle whether the node started the instance; not re-placing it');
    return false;
  }
}

/** Terminates what a failed request started; best effort, each failure logged. */
async function rollback(ctx: RunContext, started: readonly Located[]): Promise<void> {
  await Promise.all(started.map(async ({ host, instance }) => {
    try {
      await terminateOn(ctx, host, instance.instanceId);
    } catch (e) {
      ctx.logger.error({ host, instanceId: instance.instanceId, err: e }, 'could not terminate an instance of a failed request');
    }
  }));
}

async function terminateOn(ctx: RunContext, host: string, instanceId: string): Promise<void> {
  await ctx.keeper.change(host, async () => {
    const r = await ctx.nodes.terminateInstance(host, instanceId);
    ctx.keeper.update(host, (v) => applyInstanceState(v, host, instanceId, r.currentState));
  });
}

function capacityError(view: ClusterView, req: RunRequest, fit: number): FerryError {
  return CcErrors.make('InsufficientInstanceCapacity', { fit, minCount: req.minCount, vmType: req.vmType.name, partition: view.partition });
}

/** The volumes `instanceId` is defined with (issue 18: a restart elsewhere, a re-homed stopped instance). */
function volumesFor(req: CcRequest<'ccRunInstances'>, instanceId: string): { volumes?: VolumeAttachmentSpec[] } {
  const volumes = req.volumes !== undefined && Object.prototype.hasOwnProperty.call(req.volumes, instanceId) ? req.volumes[instanceId] : undefined;
  return volumes !== undefined && volumes.length > 0 ? { volumes } : {};
}
