/**
 * Moving a stopped instance to another node (issue 18 part 5): StartInstances of one whose node takes
 * none (started there: cc/userStart.ts), and a drain's cold move of a user-stopped instance (defined
 * there, not started: the drain's live plan moves only running ones). Placed exactly as host HA's
 * restart elsewhere (ccRunInstances with restartFrom its old node, in the CC's placement queue: never
 * there nor on a fenced host), then forgotten on the old node (ncTerminateInstance of the stopped copy:
 * its domain undefined, its disk left on the shared storage), only once the new copy exists: a
 * failure half-way leaves the stopped copy, never no copy. Its attached volumes come along in the new
 * copy's definition, before its guest boots; the stopped old copy writes nothing meanwhile.
 *
 * Crash-safe: the new copy records where it came from and the move's generation (`moved`, persisted
 * by its NC with the record), so a CC that crashes (or loses an answer) between the two steps
 * leaves state the CC's move repair (moveRepair.ts) finishes: the older stopped copy is forgotten.
 */
import type { Logger } from 'pino';
import type { CcInstance, CcRequest } from '../shared/protocol/ccProtocol.js';
import type { NcInstance } from '../shared/protocol/ncProtocol.js';
import { CcErrors } from './errors.js';
import type { InstanceRouteDeps } from './instanceRoute.js';
import { generationOf, isReplaced } from './moveRepair.js';
import { applyInstanceState, findEntry, listNodes } from './view.js';

export interface RehomeDeps extends InstanceRouteDeps {
  readonly logger: Logger;
  /** Runs `work` once no other start or move of `instanceId` runs (the CC's per-instance lock); absent: at once. */
  readonly oneMoveAt?: <T>(instanceId: string, work: () => Promise<T>) => Promise<T>;
  /** ccRunInstances as the CC serves it (placement queue, fresh data first). */
  readonly runPlaced: (req: CcRequest<'ccRunInstances'>) => Promise<CcInstance[]>;
}

export interface RehomeOptions {
  /** Never placed on these (besides the old node and the fenced hosts). */
  readonly avoidHosts?: readonly string[];
  /** A drain's cold move: defined on the new node and left stopped (its user's stop kept), not started. */
  readonly cold: boolean;
}

/** Moves `instance` (stopped on `from`) to a node the scheduler picks; answers its new copy. */
export async function rehome(d: RehomeDeps, from: string, instance: NcInstance, opts: RehomeOptions): Promise<CcInstance> {
  const { keeper } = d;
  const { instanceId } = instance;
  if (keeper.fencedHosts().has(from)) throw CcErrors.make('NodeFenced', { host: from });
  if (!findEntry(keeper.get(), from)?.node.reachable) {
    throw CcErrors.make('NodeUnreachable', { host: from, detail: 'its NC must forget the stopped copy before it moves to another node' });
  }
  const volumes = instance.volumes ?? [];
  // Attached ones come along in the new copy's definition; one between steps would not be moved consistently.
  const moving = volumes.find((v) => v.status !== 'attached');
  if (moving) {
    throw CcErrors.make('InstanceStateConflict', { instanceId, host: from, action: 'moved to another node', detail: `its volume ${moving.volumeId} is ${moving.status}` });
  }
  const [placed] = await d.runPlaced({
    reservationId: instance.reservationId, imageId: instance.imageId, ownerId: instance.ownerId, vmType: instance.vmType,
    instanceIds: [instanceId], minCount: 1, launchTime: instance.launchTime, restartFrom: [from],
    ...(opts.avoidHosts && opts.avoidHosts.length > 0 ? { avoidHosts: [...opts.avoidHosts] } : {}),
    ...(opts.cold ? { stopped: true } : {}),
    ...(volumes.length > 0 ? { volumes: { [instanceId]: volumes.map((v) => ({ volumeId: v.volumeId, device: v.device, path: v.path })) } } : {}),
    // Durable on the new copy before this CC can forget it: a crash from here on is finished by moveRepair.ts.
    moved: { from, generation: generationOf(instance) + 1 },
  });
  if (!placed) throw CcErrors.make('InsufficientInstanceCapacity', { fit: 0, minCount: 1, vmType: instance.vmType.name, partition: keeper.get().partition });
  // Only now: the new copy exists, so the old one can go.
  await keeper.change(from, async () => {
    const r = await d.nodes.terminateInstance(from, instanceId, 'move');
    keeper.update(from, (v) => applyInstanceState(v, from, instanceId, r.currentState));
  });
  void keeper.refreshHosts([from, placed.host], d.quickTimeoutMs);
  d.logger.warn({ instanceId, from, to: placed.host, cold: opts.cold }, opts.cold
    ? 'stopped instance re-homed by a drain: defined on another node, not started, forgotten on its old one'
    : 'stopped instance re-homed: started on another node, forgotten on its old one');
  return placed;
}

export interface DrainRehoming {
  readonly rehomed: { readonly instanceId: string; readonly destination: string }[];
  readonly notRehomed: { readonly instanceId: string; readonly reason: string }[];
  /** The instances it tried, as they were on the source (what a record of the cold moves needs). */
  readonly tried: readonly NcInstance[];
}

/** An instance a drain moves cold: stopped by its user, not migrating. */
export function isColdMovable(i: Pick<NcInstance, 'userStopped' | 'state' | 'migrationState'>): boolean {
  return i.userStopped === true && i.state === 'stopped' && i.migrationState === 'none';
}

/**
 * A drain's cold moves: every instance its user stopped on `source` (not migrating) is re-homed, one
 * at a time, without starting it (its attached volumes with it); one that cannot be (no room, a volume
 * between steps) stays and is named.
 */
export async function rehomeStoppedOf(d: RehomeDeps, source: string, avoidHosts: readonly string[]): Promise<DrainRehoming> {
  const node = findEntry(d.keeper.get(), source)?.node;
  const nodes = listNodes(d.keeper.get());
  // One already re-homed whose old copy is not yet forgotten (moveRepair.ts) is not moved again.
  const stopped = (node?.instances ?? []).filter((i) => isColdMovable(i) && !isReplaced(nodes, source, i));
  const out: DrainRehoming = { rehomed: [], notRehomed: [], tried: stopped };
  const oneAtATime = d.oneMoveAt ?? (<T>(_id: string, work: () => Promise<T>): Promise<T> => work());
  for (const instance of stopped) {
    try {
      const placed = await oneAtATime(instance.instanceId, () => {
        // A start of it may have moved it while this waited its turn: only a copy still stopped here moves.
        const now = findEntry(d.keeper.get(), source)?.node.instances.find((i) => i.instanceId === instance.instanceId);
        if (!now || !isColdMovable(now)) throw CcErrors.make('InstanceStateConflict', { instanceId: instance.instanceId, host: source, action: 'moved to another node', detail: 'it was started or moved meanwhile' });
        return rehome(d, source, now, { avoidHosts, cold: true });
      });
      out.rehomed.push({ instanceId: instance.instanceId, destination: placed.host });
    } catch (e) {
      out.notRehomed.push({ instanceId: instance.instanceId, reason: (e as Error).message });
    }
  }
  return out;
}
