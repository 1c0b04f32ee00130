/**
 * HaServiceActions over the CLC's own core operations (issue 6), the ones the admin API runs too, so
 * HA changes nothing an operator could not:
 *  - disableHost runs changeNodeState (clc/core/nodeState.ts; exclusive in the partition's change gate);
 *  - drain (one attempt at the drain HA owes a DEGRADED host) disables the node unless it is
 *    disabled, then runs planMigration (clc/core/planMigration.ts: a drain of the host; per instance
 *    when the repair policy leaves some out), only for instances whose auto-repair allows `migrate`;
 *    it is done once the node is disabled and holds nothing but what the policy leaves;
 *  - evacuate restarts the fenced host's instances elsewhere (ccRunInstances with restartFrom: same
 *    instance id and VM type, from the CLC's records), only while HA holds the host FENCED and only
 *    for instances whose auto-repair allows `failover`;
 *  - neither drains nor restarts the instances of a node an administrator quarantined (issue 18):
 *    they move only when an administrator names them; lifting the quarantine lets an owed restart go on;
 *  - clearObsolete destroys, on a fenced host that came back, the copies restarted elsewhere and the
 *    copies of instances terminated meanwhile;
 *  - powerOn (owed once EnableService unfenced the host) starts there, from their own disks, its own
 *    instances the power cycle left shut off (ccStartInstances), once the node is enabled.
 * Each call takes its own place in the gate, like a request, and leaves it when done
 * (inGatedOperation). HA never goes through the admin API.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../../shared/clock.js';
import type { CcNode } from '../../../shared/protocol/ccProtocol.js';
import type { NcInstance } from '../../../shared/protocol/ncProtocol.js';
import type { Store } from '../../../shared/store/store.js';
import type { Clusters } from '../../clusters/clusters.js';
import { changeNodeState, type NodeTarget } from '../../core/nodeState.js';
import type { EventSink } from '../../events/eventSink.js';
import { inGatedOperation, type OperationContext } from '../../core/operationContext.js';
import type { PartitionGate } from '../../core/partitionGate.js';
import { planMigration } from '../../core/planMigration.js';
import type { VolumeBackend } from '../../core/volumeBackend.js';
import type { ClcState } from '../../state/clcStore.js';
import { HaErrors } from '../errors.js';
import type { HaHostRef, HaServiceActions, RepairOutcome } from '../haProvider.js';
import { FENCE_STATES, fencedHostsOf } from '../hostHaState.js';
import { planRepairs, type AutoRepair, type RepairAction, type RepairPlan } from '../repairPolicy.js';
import { awaitingReattach, fenceVolumesFrom, reattachVolumes, volumesToBringAlong, type VolumeFencingDeps } from './volumeFencing.js';

/** Where auto-repair levels are set (unset everywhere: `failover`, HA's default). */
export interface RepairPolicies {
  instance(instanceId: string): AutoRepair | undefined;
  cluster(partition: string): AutoRepair | undefined;
}

/** The levels in the CLC store: ConfigureHAForInstance's per instance, ConfigureHAForCluster's per partition. */
export function storedRepairPolicies(store: Store<ClcState>): RepairPolicies {
  return {
    instance: (id) => store.read().ha.instanceAutoRepair[id],
    cluster: (partition) => store.read().ha.partitions[partition]?.autoRepair,
  };
}

export interface CloudActionsOptions {
  readonly clusters: Clusters;
  readonly gate: PartitionGate;
  readonly store: Store<ClcState>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly policies?: RepairPolicies;
  /** The event stream: HA's node changes and drains are recorded there as the admin's are, with actor 'ha'. */
  readonly events?: EventSink;
  /** Where volumes live: a restart elsewhere fences the dead host from them first (volumeFencing.ts). */
  readonly volumes?: VolumeBackend;
}

/** What HA did to a host's instances, for the log and the tests. */
export interface RepairReport {
  readonly repaired: readonly string[];
  readonly skipped: RepairPlan['skipped'];
  readonly failed: readonly { readonly instanceId: string; readonly reason: string }[];
  /** Restarts only: instances left alone because they were in a live migration (the migration decides where they end). */
  readonly inMigration?: readonly string[];
  /** Restarts only: other nodes the CC could not see, so nothing was restarted (an instance may run there). */
  readonly unseen?: readonly string[];
  /** Restarts only: the host is quarantined (issue 18), so nothing was restarted; why, for the log. */
  readonly quarantined?: string;
  /** Restarts only: a CC replica that does not lead answered (its leader unreachable), so nothing was restarted. */
  readonly followerView?: boolean;
}

export interface CloudHaActions extends HaServiceActions {
  /** Restarts; resolves with what was done (evacuate is this without the report). */
  restartElsewhere(ref: HaHostRef, fencedBy: 'agent' | 'operator'): Promise<RepairReport>;
  /** Live-migrates; resolves with what was planned. */
  drainPlanned(ref: HaHostRef): Promise<RepairReport>;
  /**
   * On a fenced host whose NC answers again: terminates its copies of instances that run elsewhere or were terminated.
   * Resolves with how many obsolete copies remain (0: the host may be unfenced); undefined when its NC does not answer.
   */
  clearObsolete(ref: HaHostRef): Promise<number | undefined>;
  /**
   * A fenced host whose NC answers again goes back into maintenance (ccModifyNode disabled), under an
   * exclusive ticket of its partition and only if `stillFenced()` holds once granted, so an
   * EnableService that unfenced it meanwhile wins. Resolves true when it changed the node.
   */
  keepInMaintenance(ref: HaHostRef, stillFenced: () => boolean): Promise<boolean>;
}

const live = (i: NcInstance): boolean => i.state !== 'terminated' && i.state !== 'shutting-down';

/** Stopped by its user (StopInstances, issue 18), by the CLC's record or the NC's: host HA never starts it, here or elsewhere. */
const stoppedByUser = (i: NcInstance, records: Readonly<Record<string, { readonly stoppedAt?: number | undefined }>>): boolean =>
  i.userStopped === true || records[i.instanceId]?.stoppedAt !== undefined;

export function cloudHaActions(opts: CloudActionsOptions): CloudHaActions {
  const policies = opts.policies ?? storedRepairPolicies(opts.store);
  const log = opts.logger;
  const volumeFencing: VolumeFencingDeps = { store: opts.store, clusters: opts.clusters, backend: opts.volumes, clock: opts.clock, logger: opts.logger };
  /** Re-attaches what a restart fenced; throws (after the restart) naming what stays attaching. */
  const reattach = async (ref: HaHostRef, instanceId: string): Promise<void> => {
    const { failed } = await reattachVolumes(volumeFencing, ref.partition, instanceId, ref.host);
    if (failed.length > 0) {
      throw HaErrors.make('RestartsFailed', { detail: `restarted, but volume(s) not re-attached yet: ${failed.map((f) => `${f.volumeId} (${f.reason})`).join(', ')}` });
    }
  };
  /** Re-attaches, to the copies that run again on `ref.host`, the volumes fenced from it; answers what failed. */
  const reattachAll = async (ref: HaHostRef, instanceIds: readonly string[]): Promise<string[]> => {
    const failures: string[] = [];
    for (const id of instanceIds.filter((x) => awaitingReattach(opts.store.read(), x, ref.host).length > 0)) {
      try {
        await reattach(ref, id);
      } catch (e) {
        failures.push(`${id} (${(e as Error).message})`);
      }
    }
    return failures;
  };
  /** One change of HA's, like one request: its own gate tickets, left when it ends. */
  const inRequest = <T>(work: (ctx: OperationContext) => Promise<T>): Promise<T> => inGatedOperation({ ...opts, actor: 'ha' }, work);
  /** The same change (and gate label) as the admin's DisableService of the node. */
  const disableNode = (ref: HaHostRef, reason = 'host HA takes a failing host out of service'): Promise<unknown> => {
    const target: NodeTarget = { host: ref.host, partition: ref.partition, reason };
    return inRequest((ctx) => changeNodeState(ctx, target, 'disabled', `DisableService of node ${ref.host}`));
  };

  /** Per node, not the merged instance list: a fenced host that came back may hold copies of ids that run elsewhere. */
  const instancesOn = async (ref: HaHostRef): Promise<{
    mine: NcInstance[]; elsewhere: Set<string>; reachable: boolean; unseen: string[]; quarantine: CcNode['quarantine']; nodeState?: string; followerView: boolean;
  }> => {
    const answer = await opts.clusters.call(ref.partition, 'ccDescribeNodes', { freshHosts: [ref.host] });
    const nodes = answer.nodes;
    const node = nodes.find((n) => n.host === ref.host);
    // A FENCED host runs nothing: what the CC last heard from it (copies restarted elsewhere since) is obsolete, not a
    // running copy (issue 21, fenceFailover.test.ts: an instance restarted from one fenced host was lost with the next).
    const elsewhere = new Set(nodes.filter((n) => n.host !== ref.host && haState(n.host)?.state !== 'FENCED').flatMap((n) => n.instances.filter(live).map((i) => i.instanceId)));
    // Other nodes the CC cannot see now (a CC just restarted, a partition) may run what looks missing; a FENCED one runs nothing.
    const unseen = nodes.filter((n) => n.host !== ref.host && !n.reachable && haState(n.host)?.state !== 'FENCED').map((n) => n.host).sort();
    return {
      mine: (node?.instances ?? []).filter(live), elsewhere, reachable: node?.reachable ?? false, unseen, quarantine: node?.quarantine, followerView: answer.leading === false,
      ...(node ? { nodeState: node.nodeState } : {}),
    };
  };

  const quarantineNote = (q: { since: number; reason: string }): string =>
    `quarantined by an administrator since ${new Date(q.since).toISOString()}${q.reason === '' ? '' : ` (${q.reason})`}: its instances move only when an administrator names them`;

  /** Instances the CC shows in an unfinished migration plan from the host (its view may be newer than the node's records). */
  const migratingFrom = async (ref: HaHostRef): Promise<Set<string>> => {
    const { instances } = await opts.clusters.call(ref.partition, 'ccDescribeInstances', {});
    return new Set(instances.filter((i) => i.host === ref.host && (i.migrationDestination ?? '') !== '').map((i) => i.instanceId));
  };

  const plan = (ref: HaHostRef, ids: readonly string[], action: RepairAction): RepairPlan =>
    planRepairs(ids.map((instanceId) => ({ instanceId, policy: policies.instance(instanceId) })), policies.cluster(ref.partition), action);

  const haState = (host: string) => opts.store.read().ha.hosts[host];
  /** Every other host HA is fencing or has fenced: a restart must not land there either. */
  const avoiding = (self: string): { avoidHosts?: string[] } => {
    const hosts = fencedHostsOf(opts.store.read().ha.hosts).filter((h) => h !== self);
    return hosts.length > 0 ? { avoidHosts: hosts } : {};
  };

  const drainPlanned = async (ref: HaHostRef): Promise<RepairReport> => {
    const { mine } = await instancesOn(ref);
    const p = plan(ref, mine.map((i) => i.instanceId), 'drain');
    if (p.repair.length === 0) return { repaired: [], skipped: p.skipped, failed: [] };
    const failed: { instanceId: string; reason: string }[] = [];
    if (p.skipped.length === 0) {
      await inRequest((ctx) => planMigration(ctx, { sourceHost: ref.host, instanceId: undefined, destinations: [], allowHosts: true, reserveDestinations: false, partial: true }));
    } else {
      for (const instanceId of p.repair) {
        try {
          await inRequest((ctx) => planMigration(ctx, { sourceHost: undefined, instanceId, destinations: [], allowHosts: true, reserveDestinations: false, partial: false }));
        } catch (e) {
          failed.push({ instanceId, reason: (e as Error).message });
        }
      }
    }
    log.info({ host: ref.host, migrated: p.repair, skipped: p.skipped, failed }, 'host HA: drain of a degraded host planned');
    return { repaired: p.repair.filter((id) => !failed.some((f) => f.instanceId === id)), skipped: p.skipped, failed };
  };

  /** One attempt at an owed drain: out of service first, then emptied; done when both hold. */
  const drainAttempt = async (ref: HaHostRef): Promise<RepairOutcome> => {
    const node = (await opts.clusters.call(ref.partition, 'ccDescribeNodes', { freshHosts: [ref.host] })).nodes.find((n) => n.host === ref.host);
    // The administrator's quarantine decides where its instances go: HA forgives the drain it owed.
    if (node?.quarantine !== undefined) return { done: true, detail: `not drained: ${quarantineNote(node.quarantine)}` };
    if (!node?.reachable) return { done: false, detail: `the NC of ${ref.host} does not answer: DisableService and MigrateInstances wait for it` };
    if (node.nodeState !== 'disabled') {
      log.warn({ host: ref.host }, 'host HA: DisableService of a host that lost control while its VMs ran');
      await disableNode(ref);
    }
    const { mine } = await instancesOn(ref);
    // Migrations already under way are left to finish: asking again would be refused as a second plan.
    if (mine.some((i) => i.migrationState !== 'none')) {
      return { done: false, detail: `disabled; ${mine.length} instance(s) still on it, migrations under way` };
    }
    const report = await drainPlanned(ref);
    const skipped = new Set(report.skipped.map((s) => s.instanceId));
    const left = mine.filter((i) => !skipped.has(i.instanceId)).map((i) => i.instanceId);
    const policyNote = skipped.size > 0 ? `; ${skipped.size} instance(s) left by auto-repair policy` : '';
    if (left.length === 0) return { done: true, detail: `disabled and empty${policyNote}` };
    const failures = report.failed.length > 0 ? `; failed: ${report.failed.map((f) => `${f.instanceId} (${f.reason})`).join(', ')}` : '';
    return { done: false, detail: `disabled; migrating ${left.join(', ')}${failures}${policyNote}` };
  };

  const restartElsewhere = async (ref: HaHostRef, fencedBy: 'agent' | 'operator'): Promise<RepairReport> => {
    // Fence before evacuate, always: checked here again, whoever calls.
    const requireFenced = (): void => {
      const rec = haState(ref.host);
      if (rec?.state !== 'FENCED') {
        throw HaErrors.make('HostNotFenced', { action: 'Restarting instances elsewhere', detail: `host ${ref.host}: it is ${rec?.state ?? 'unknown to HA'}, not FENCED` });
      }
    };
    requireFenced();
    const { mine, elsewhere, unseen, quarantine, followerView } = await instancesOn(ref);
    if (followerView) {
      // Issue 21: the CC leader is unreachable (killed, an election under way) and a follower answered: what it holds
      // of the dead host is its own older look, which may miss an instance started since. Nothing is concluded from it.
      log.warn({ host: ref.host }, 'host HA: restart elsewhere waits for the CC leader (a follower answered)');
      return { repaired: [], skipped: [], failed: [], inMigration: [], followerView: true };
    }
    if (quarantine !== undefined) {
      // A quarantined host that was fenced keeps its instances down until an administrator acts (issue 18).
      log.warn({ host: ref.host, quarantinedSince: quarantine.since }, 'host HA: a quarantined host\'s instances are not restarted elsewhere');
      return { repaired: [], skipped: [], failed: [], inMigration: [], quarantined: quarantineNote(quarantine) };
    }
    if (unseen.length > 0) {
      // Restarting now could start a second copy of one running there (sim seed 933: a CC restarted after a CLC restart).
      log.warn({ host: ref.host, unseen }, 'host HA: restart elsewhere waits until the CC sees every other node');
      return { repaired: [], skipped: [], failed: [], inMigration: [], unseen };
    }
    const moving = await migratingFrom(ref);
    const records = opts.store.read().instances;
    // An instance terminated meanwhile stays terminated: its copy on the fenced host is obsolete, not lost.
    // One in a live migration may already run at its destination (the switch-over needs no source
    // afterwards): restarting it could make two (sim seed 973); it is left to the migration's outcome.
    // One its user stopped (issue 18) lost nothing: it stays stopped where it is, as the user left it.
    const known = mine.filter((i) => records[i.instanceId] !== undefined && records[i.instanceId]?.terminatedAt === undefined
      && !stoppedByUser(i, records) && !elsewhere.has(i.instanceId) && i.migrationState === 'none' && !moving.has(i.instanceId));
    const inFlight = mine.filter((i) => i.migrationState !== 'none' || moving.has(i.instanceId)).map((i) => i.instanceId);
    if (inFlight.length > 0) log.warn({ host: ref.host, instanceIds: inFlight }, 'host HA: instances of a fenced host in a live migration are not restarted');
    const p = plan(ref, known.map((i) => i.instanceId), 'evacuate');
    const failed: { instanceId: string; reason: string }[] = [];
    const repaired: string[] = [];
    // Restarted by an earlier attempt whose re-attach did not finish: their volumes are attached now.
    for (const i of mine.filter((x) => elsewhere.has(x.instanceId) && awaitingReattach(opts.store.read(), x.instanceId, ref.host).length > 0)) {
      try {
        await inRequest(async (ctx) => {
          await ctx.gate.enter('change', `host HA: re-attaching the volumes of ${i.instanceId}, restarted from fenced ${ref.host}`, [ref.partition]).ready([ref.partition]);
          await reattach(ref, i.instanceId);
        });
      } catch (e) {
        failed.push({ instanceId: i.instanceId, reason: (e as Error).message });
      }
    }
    for (const instanceId of p.repair) {
      const r = records[instanceId];
      const vmType = opts.store.read().vmTypes.find((t) => t.name === r?.vmType);
      if (!r || !vmType) {
        failed.push({ instanceId, reason: `no record or VM type ${r?.vmType ?? '?'} for it in the CLC` });
        continue;
      }
      try {
        await inRequest(async (ctx) => {
          const ticket = ctx.gate.enter('change', `host HA restart of ${instanceId} from fenced ${ref.host}`, [ref.partition]);
          await ticket.ready([ref.partition]);
          // Checked again per restart: HA may have let go of the host (DisableHAForHost, unfenced) meanwhile.
          requireFenced();
          // Fence from storage first: the dead host loses the volumes before a new copy may get them.
          await fenceVolumesFrom(volumeFencing, instanceId, ref.host);
          // Its volumes are in the new copy's definition before its guest boots; the re-attach then only confirms them.
          const volumes = volumesToBringAlong(opts.store.read(), instanceId, ref.host);
          await ctx.clusters.call(ref.partition, 'ccRunInstances', {
            reservationId: r.reservationId, imageId: r.imageId, ownerId: r.ownerId, vmType, instanceIds: [instanceId], minCount: 1,
            launchTime: r.launchTime, restartFrom: [ref.host], ...avoiding(ref.host),
            ...(volumes.length > 0 ? { volumes: { [instanceId]: volumes } } : {}),
          });
          await reattach(ref, instanceId);
        });
        repaired.push(instanceId);
      } catch (e) {
        failed.push({ instanceId, reason: (e as Error).message });
      }
    }
    log.warn({ host: ref.host, fencedBy, restarted: repaired, skipped: p.skipped, failed }, 'host HA: instances of a fenced host restarted elsewhere');
    if (failed.length > 0) throw HaErrors.make('RestartsFailed', { detail: failed.map((f) => `${f.instanceId} (${f.reason})`).join(', ') });
    return { repaired, skipped: p.skipped, failed, inMigration: inFlight };
  };

  const clearObsolete = async (ref: HaHostRef): Promise<number | undefined> => {
    const { mine, elsewhere, reachable } = await instancesOn(ref);
    if (!reachable) return undefined;
    const records = opts.store.read().instances;
    const obsolete = mine.filter((i) => elsewhere.has(i.instanceId) || records[i.instanceId]?.terminatedAt !== undefined).map((i) => i.instanceId);
    if (obsolete.length === 0) return 0;
    await inRequest(async (ctx) => {
      const ticket = ctx.gate.enter('change', `host HA: destroying obsolete instances on fenced ${ref.host}`, [ref.partition]);
      await ticket.ready([ref.partition]);
      await ctx.clusters.call(ref.partition, 'ccTerminateInstances', { instanceIds: obsolete, onHost: ref.host });
    });
    log.warn({ host: ref.host, destroyed: obsolete }, 'host HA: obsolete copies on a fenced host that came back destroyed');
    return 0;
  };

  /**
   * A fenced host returned to service: its own instances (a live CLC record, shown by the CC on this
   * host only, in no migration) whose domains the power cycle left shut off are started there, from
   * their own disks, once the node is enabled. Level-based: each attempt looks again, so an instance
   * terminated, restarted elsewhere or already running meanwhile is simply not a candidate.
   */
  const powerOnOwned = async (ref: HaHostRef): Promise<RepairOutcome> => {
    const fencedAgain = (): boolean => FENCE_STATES.has(haState(ref.host)?.state ?? 'AVAILABLE');
    if (fencedAgain()) return { done: false, detail: `${ref.host} is being fenced again: nothing is started there` };
    const { mine, elsewhere, reachable, unseen, nodeState } = await instancesOn(ref);
    if (!reachable) return { done: false, detail: `the NC of ${ref.host} does not answer: its instances are powered on once it does` };
    const records = opts.store.read().instances;
    const own = mine.filter((i) => i.state === 'stopped' && !stoppedByUser(i, records) && i.migrationState === 'none' && !elsewhere.has(i.instanceId)
      && records[i.instanceId] !== undefined && records[i.instanceId]?.terminatedAt === undefined && records[i.instanceId]?.partition === ref.partition);
    // Nothing to start from: the domain (and the disk the NC knows) is gone. An operator decides.
    const lost = own.filter((i) => i.hypervisorState === 'missing').map((i) => i.instanceId);
    if (lost.length > 0) log.warn({ host: ref.host, instanceIds: lost }, 'host HA: instances of a host returned from fencing have no domain left there; not powered on');
    const ids = own.filter((i) => i.hypervisorState !== 'missing').map((i) => i.instanceId);
    const lostNote = lost.length > 0 ? `; no domain left for ${lost.join(', ')}` : '';
    // Level-based too: one started by an earlier attempt whose volumes were not re-attached then.
    const unattached = mine.filter((i) => i.state === 'running' && !elsewhere.has(i.instanceId) && awaitingReattach(opts.store.read(), i.instanceId, ref.host).length > 0);
    if (ids.length === 0 && unattached.length > 0) {
      const failures = await inRequest(async (ctx) => {
        await ctx.gate.enter('change', `host HA: re-attaching the volumes of instances of ${ref.host}, returned from fencing`, [ref.partition]).ready([ref.partition]);
        return reattachAll(ref, unattached.map((i) => i.instanceId));
      });
      return { done: failures.length === 0, detail: failures.length > 0 ? `volumes not re-attached yet: ${failures.join(', ')}` : `volumes re-attached to ${unattached.map((i) => i.instanceId).join(', ')}` };
    }
    if (ids.length === 0) return { done: true, detail: `none of its own instances is shut off${lostNote}` };
    if (unseen.length > 0) return { done: false, detail: `the CC cannot see ${unseen.join(', ')}, which may run ${ids.join(', ')}; looked at again next attempt` };
    if (nodeState !== 'enabled') return { done: false, detail: `${ref.host} is in maintenance (${nodeState ?? 'unknown'}): ${ids.join(', ')} are powered on once it is enabled` };
    const result = await inRequest(async (ctx) => {
      const ticket = ctx.gate.enter('change', `host HA: powering on the instances of ${ref.host}, returned from fencing`, [ref.partition]);
      await ticket.ready([ref.partition]);
      // Checked again inside the ticket: a fence that began meanwhile wins.
      if (fencedAgain()) return undefined;
      const started = await ctx.clusters.call(ref.partition, 'ccStartInstances', { instanceIds: ids, onHost: ref.host });
      // Volumes fenced from this host for a restart elsewhere that never happened: the copy that runs
      // again here is the one they belong to (its NC connected them before the start; sim seed 135).
      return { ...started, volumeFailures: await reattachAll(ref, started.started.map((i) => i.instanceId)) };
    });
    if (!result) return { done: false, detail: `${ref.host} is being fenced again: nothing is started there` };
    const poweredOn = result.started.map((i) => i.instanceId);
    log.warn({ host: ref.host, poweredOn, failed: result.failed }, 'host HA: instances of a host returned from fencing powered on there');
    const failed = result.failed.map((f) => `${f.instanceId} (${f.code}: ${f.message})`);
    const volumesNote = result.volumeFailures.length > 0 ? `; volumes not re-attached yet: ${result.volumeFailures.join(', ')}` : '';
    const detail = `${poweredOn.length} powered on${poweredOn.length > 0 ? ` (${poweredOn.join(', ')})` : ''}${failed.length > 0 ? `; not: ${failed.join(', ')}` : ''}${lostNote}${volumesNote}`;
    return { done: failed.length === 0 && result.volumeFailures.length === 0, detail };
  };

  const keepInMaintenance = (ref: HaHostRef, stillFenced: () => boolean): Promise<boolean> => inRequest(async (ctx) => {
    const ticket = ctx.gate.enter('exclusive', `host HA: keeping fenced ${ref.host} in maintenance`, [ref.partition]);
    await ticket.ready([ref.partition]);
    if (!stillFenced()) return false;
    const node = (await ctx.clusters.call(ref.partition, 'ccDescribeNodes', { freshHosts: [ref.host] })).nodes.find((n) => n.host === ref.host);
    if (!node?.reachable || node.nodeState !== 'enabled') return false;
    await ctx.clusters.call(ref.partition, 'ccModifyNode', { host: ref.host, stateName: 'disabled', vmTypes: ctx.store.read().vmTypes });
    log.warn({ host: ref.host }, 'host HA: a fenced host came back; it is in maintenance again');
    return true;
  });

  return {
    keepInMaintenance,
    async disableHost(ref, reason) {
      log.warn({ host: ref.host, reason }, 'host HA: DisableService');
      await disableNode(ref, `host HA: ${reason}`);
    },
    drain: drainAttempt,
    async evacuate(ref, fencedBy) {
      const r = await restartElsewhere(ref, fencedBy);
      const policyNote = r.skipped.length > 0 ? `; ${r.skipped.length} left by auto-repair policy` : '';
      // One caught in a live migration is judged again next pass, once its migration has ended (rolled back: restart it).
      const waiting = r.inMigration ?? [];
      const unseen = r.unseen ?? [];
      if (unseen.length > 0) return { done: false, detail: `nothing restarted: the CC cannot see ${unseen.join(', ')}, which may run them; looked at again next pass` };
      if (r.followerView === true) return { done: false, detail: 'nothing restarted: the CC leader did not answer (a standby replica did, whose view of the host may be older); looked at again next pass' };
      // Still owed: once the quarantine is lifted (an administrator's say), the next attempt restarts them.
      if (r.quarantined !== undefined) return { done: false, detail: `nothing restarted: ${r.quarantined}` };
      const waitNote = waiting.length > 0 ? `; ${waiting.length} in a live migration, looked at again next pass (${waiting.join(', ')})` : '';
      return { done: waiting.length === 0, detail: `${r.repaired.length} restarted elsewhere${policyNote}${waitNote}` };
    },
    powerOn: powerOnOwned,
    restartElsewhere,
    drainPlanned,
    clearObsolete,
  };
}
