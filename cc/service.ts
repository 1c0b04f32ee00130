/**
 * The CC's operations (CC_OPS), over the view keeper, the node client and the placement queue.
 * Requests arrive validated (typedHandlers); every refusal is a CcErrors or WireErrors code.
 */
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { isFerryError } from '../shared/errors/registry.js';
import { CC_OPS, type CcInstance, type CcRequest, type CcResponse } from '../shared/protocol/ccProtocol.js';
import type { TypedImpl } from '../shared/protocol/typedServer.js';
import type { SchedulePolicy } from './config.js';
import { CcErrors } from './errors.js';
import { MigrationOps } from './migration/operations.js';
import type { CredentialIssuer } from './migration/credentialIssuer.js';
import { PlanDriver } from './migration/planDriver.js';
import { MoveRepairDriver } from './moveRepairDriver.js';
import { DEFAULT_MIGRATION_SETTINGS, type MigrationSettings } from './migration/settings.js';
import type { NodeClient } from './nodeClient.js';
import { runInstances } from './runInstances.js';
import { Mailbox } from '../shared/mailbox.js';
import {
  applyInstanceState, applyReport, applyStarted, findEntry, isStale, listInstances, listNodes, locateInstance, markUnreachable, matrixOf,
  type ClusterView,
} from './view.js';
import type { ViewKeeper } from './viewKeeper.js';
import { replicaReport, SOLE_CC, type CcLeadership } from './replicas.js';
import { attachVolume, detachVolume, type VolumeOpsDeps } from './volumes.js';
import { pauseInstance } from './pauseInstance.js';
import { ListingVersions } from '../shared/listingVersions.js';
import { NodeHealthListing } from './nodeHealthListing.js';
import { rebootInstance, stopInstance } from './powerInstance.js';
import { userStart } from './userStart.js';
import { KeyedMutex } from '../shared/keyedMutex.js';
import { rehomeStoppedOf, type RehomeDeps } from './rehome.js';

/**
 * The default of CcServiceOptions.freshMs: a CC without a safety-net poll to lean on (unit tests)
 * asks again for data older than this.
 */
export const FRESH_MS = 1000;
/** A client is waiting on these refreshes, so they get at most this long. */
export const DESCRIBE_TIMEOUT_CAP_MS = 1000;
/**
 * A read (describe) waits for a node's refresh at most this long after the refresh went out; then it
 * answers with the node's last known state, marked stale, and the refresh carries on. Many times what
 * an NC takes to answer on loopback (milliseconds): a stopped, hung or swamped NC misses it, and a
 * node missing it keeps its state (stale is not NOTREADY), so a busy machine does not flip services.
 */
export const READ_GRACE_MS = 500;

/** Everything the CC serves at CC_PATH. */
export const SERVED_OPS = CC_OPS;

export interface CcServiceOptions {
  readonly keeper: ViewKeeper;
  readonly nodes: NodeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly policy: SchedulePolicy;
  /** Timeout of one call to an NC. */
  readonly ncTimeoutMs: number;
  /** The URL the CC calls a node's NC at, reported with the node (DescribeServices shows it). */
  readonly ncUri?: (host: string) => string;
  /** Per-migration credentials for prepare and commit (mutual-TLS clouds). */
  readonly credentials?: CredentialIssuer;
  /** Live-migration limits, timeouts and endpoint (defaults: migration/settings.ts). */
  readonly migration?: Partial<MigrationSettings>;
  /** Hold new migrations until the CLC has sent the fenced hosts (PlanDriverOptions.awaitFencedHosts); the daemon sets it. */
  readonly awaitFencedHosts?: boolean;
  /**
   * How old a node's data may be and still be used without asking its NC again (default FRESH_MS).
   * The NCs push every change (ccNodeEvent, sent again until the CC takes it: nc/ccNotifier.ts) and
   * the keeper re-reads a node on each, so its last report stays current until the safety-net poll
   * is overdue: the daemon gives its poll interval plus one NC timeout. Older data (a poll that
   * failed or never ran) is asked for again before a change, and marked stale in a read.
   */
  readonly freshMs?: number;
  /** Whether this replica leads (issue 21), for ccDescribeReplica; absent: the one CC, which always leads. */
  readonly leadership?: CcLeadership;
}

export class CcService {
  /** One ccRunInstances at a time per CC. */
  private readonly placement = new Mailbox();
  private readonly listingVersions = new ListingVersions();
  private readonly healthListing = new NodeHealthListing();
  /** One start or cold move per instance at a time (cc/rehome.ts). */
  private readonly instanceMoves = new KeyedMutex();
  private readonly quickTimeoutMs: number;
  private readonly freshMs: number;
  /** Drives every migration plan; built here, started by whoever runs the CC (daemon.ts). */
  readonly planDriver: PlanDriver;
  /** Finishes re-homes a crash or a lost answer interrupted (moveRepair.ts); started with the plan driver. */
  readonly moveRepair: MoveRepairDriver;
  private readonly migrations: MigrationOps;

  constructor(private readonly opts: CcServiceOptions) {
    this.quickTimeoutMs = Math.min(opts.ncTimeoutMs, DESCRIBE_TIMEOUT_CAP_MS);
    this.freshMs = opts.freshMs ?? FRESH_MS;
    const settings: MigrationSettings = { ...DEFAULT_MIGRATION_SETTINGS, ...opts.migration };
    const { keeper, nodes, clock, logger } = opts;
    this.planDriver = new PlanDriver({
      keeper, nodes, clock, logger, limits: settings.limits, uriTemplate: settings.uriTemplate, placement: this.placement, callTimeoutMs: opts.ncTimeoutMs,
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      ...(opts.awaitFencedHosts === true ? { awaitFencedHosts: true } : {}),
    });
    this.moveRepair = new MoveRepairDriver({
      keeper, nodes, clock, logger, refreshTimeoutMs: this.quickTimeoutMs,
      ...(opts.awaitFencedHosts === true ? { awaitFencedHosts: true } : {}),
    });
    this.migrations = new MigrationOps({
      keeper, nodes, clock, logger, settings, placement: this.placement, planDriver: this.planDriver,
      freshMs: this.freshMs, quickTimeoutMs: this.quickTimeoutMs, readGraceMs: READ_GRACE_MS, ncTimeoutMs: opts.ncTimeoutMs,
    });
  }

  /** The handlers typedHandlers(SERVED_OPS, …) serves. */
  readonly ops: TypedImpl<typeof SERVED_OPS> = {
    ccDescribeReplica: async () => replicaReport(this.opts.leadership ?? SOLE_CC, this.opts.keeper.get().partition),
    ccDescribeNodes: async (req) => {
      const maxAgeMs = req.maxAgeMs ?? Math.min(FRESH_MS, this.freshMs);
      const { view, stale } = req.cached === true ? this.cachedView()
        : req.freshHosts !== undefined ? await this.readView(maxAgeMs, req.freshHosts) : await this.readView(maxAgeMs);
      const uriOf = this.opts.ncUri;
      return {
        partition: view.partition,
        nodes: listNodes(view).map((n) => ({ ...n, ...(uriOf ? { uri: uriOf(n.host) } : {}), stale: stale.has(n.host) })),
        ...(this.opts.leadership !== undefined ? { leading: this.opts.leadership.leading() } : {}),
      };
    },
    // Host HA's read (issue 19): ccDescribeNodes' freshness, only the health tuple, `unchanged` while it stands.
    ccDescribeNodeHealth: async (req) => {
      const kind = req.cached === true ? 'cached' : 'fresh';
      const { view, stale } = kind === 'cached' ? this.cachedView() : await this.readView(req.maxAgeMs ?? Math.min(FRESH_MS, this.freshMs));
      const { version, hosts } = this.healthListing.read(kind, view, stale);
      const leading = this.opts.leadership !== undefined ? { leading: this.opts.leadership.leading() } : {};
      if (req.knownVersion === version) return { partition: view.partition, version, unchanged: true as const, ...leading };
      return { partition: view.partition, version, hosts: [...hosts], ...leading };
    },
    // Stale nodes count with their last known state (unreachable ones, as ever, do not): a RunInstances
    // that trusts this matrix is placed by ccRunInstances, which waits for fresh data first.
    ccDescribeResources: async (req) => {
      const { view } = await this.readView();
      return { partition: view.partition, matrix: matrixOf(view, req.vmTypes) };
    },
    ccDescribeInstances: async (req) => {
      const { view, stale } = await this.readView();
      const instances = listInstances(view, this.opts.keeper.fencedHosts());
      const complete = stale.size === 0;
      const version = this.listingVersions.versionOf({ instances, complete });
      if (req.knownVersion === version) return { partition: view.partition, instances: [], complete, version, unchanged: true as const };
      return { partition: view.partition, instances, complete, version };
    },
    ccRunInstances: async (req) => ({ instances: await this.runPlaced(req) }),
    ccTerminateInstances: (req) => this.terminate(req),
    ccStartInstances: (req) => this.startOnHost(req),
    ccModifyNode: (req) => this.modifyNode(req),
    ccAttachVolume: (req) => attachVolume(this.volumeDeps(), req),
    ccPauseInstance: (req) => pauseInstance(this.volumeDeps(), req),
    ccStopInstance: (req) => stopInstance(this.volumeDeps(), req),
    ccRebootInstance: (req) => rebootInstance(this.volumeDeps(), req),
    // One start or cold move of an instance at a time: two starts of a stopped instance on a disabled
    // node would otherwise both re-home it, two running copies of one guest.
    ccStartInstance: (req) => this.instanceMoves.run(req.instanceId, () => userStart(this.rehomeDeps(), req)),
    ccDetachVolume: (req) => detachVolume(this.volumeDeps(), req),
    ccQuarantineNode: (req) => this.quarantineNode(req),
    ccCheckHostActivity: (req) => this.checkActivity(req),
    ccSetFencedHosts: (req) => {
      this.opts.keeper.setFencedHosts(req.hosts);
      this.planDriver.poke();
      this.moveRepair.poke();
      return Promise.resolve({ hosts: [...this.opts.keeper.fencedHosts()].sort() });
    },
    ccMigrateInstances: (req) => this.migrate(req),
    ccDescribeMigrations: (req) => this.migrations.describe(req),
    ccCancelMigration: (req) => this.migrations.cancel(req),
    ccNodeEvent: (req) => this.migrations.nodeEvent(req),
  };

  /**
   * A live migration plan; a drain (sourceHost) then re-homes the instances its user stopped there by
   * cold moves (rehome.ts), which the live plan leaves out, onto the hosts the request allows. A
   * drain of a node holding only stopped instances has no live plan: its cold moves become its plan.
   */
  private async migrate(req: CcRequest<'ccMigrateInstances'>): Promise<CcResponse<'ccMigrateInstances'>> {
    const answer = await this.migrations.migrate(req);
    if (req.sourceHost === undefined && !('coldOnly' in answer)) return answer;
    const source = req.sourceHost ?? ('coldOnly' in answer ? answer.coldOnly : '');
    const hosts = this.opts.keeper.hosts();
    const avoid = req.allowHosts && req.destinations.length > 0 ? hosts.filter((h) => !req.destinations.includes(h)) : req.destinations;
    const moved = await rehomeStoppedOf(this.rehomeDeps(), source, avoid);
    // Nothing ran live there: the cold moves are the drain, recorded as its plan.
    if ('coldOnly' in answer) return this.migrations.recordColdMoves(req, source, moved);
    if (moved.tried.length === 0) return answer;
    return { ...answer, rehomed: moved.rehomed, notRehomed: moved.notRehomed };
  }

  private rehomeDeps(): RehomeDeps {
    return { ...this.volumeDeps(), logger: this.opts.logger, runPlaced: (r) => this.runPlaced(r), oneMoveAt: (id, work) => this.instanceMoves.run(id, work) };
  }

  /** ccRunInstances in the placement queue, after fresh data from every node it may place on. */
  private runPlaced(req: CcRequest<'ccRunInstances'>): Promise<CcInstance[]> {
    return this.placement.run(async () => {
      // A change: placement waits for data at most freshMs old from every node it may place on.
      const never = new Set([...(req.restartFrom ?? []), ...(req.avoidHosts ?? []), ...this.opts.keeper.fencedHosts()]);
      await this.opts.keeper.refreshStale(this.freshMs, this.quickTimeoutMs, this.opts.keeper.hosts().filter((h) => !never.has(h)));
      return runInstances({
        keeper: this.opts.keeper, nodes: this.opts.nodes, policy: this.opts.policy, logger: this.opts.logger,
        refreshTimeoutMs: this.quickTimeoutMs,
      }, req);
    });
  }

  private volumeDeps(): VolumeOpsDeps {
    return { keeper: this.opts.keeper, nodes: this.opts.nodes, freshMs: this.freshMs, quickTimeoutMs: this.quickTimeoutMs };
  }

  /** The view as it is, no NC asked: what is older than freshMs is stale. */
  private cachedView(): { view: ClusterView; stale: ReadonlySet<string> } {
    const view = this.opts.keeper.get();
    const now = this.opts.clock.now();
    return { view, stale: new Set(view.entries.filter((e) => isStale(e, now, this.freshMs)).map((e) => e.node.host)) };
  }

  /**
   * What the describes answer from: data older than `maxAgeMs` refreshed where nodes answer within
   * READ_GRACE_MS, never waiting on a node that does not (viewKeeper.refreshForRead); `stale` names
   * the nodes shown as last known. Reads of instances and capacity trust pushed data (freshMs); a
   * live look at the nodes themselves (ccDescribeNodes: euca-describe-nodes) asks every node not heard
   * from within FRESH_MS, since a dead NC pushes nothing; host HA's health checks, within their interval.
   */
  private async readView(maxAgeMs = this.freshMs, only?: readonly string[]): Promise<{ view: ClusterView; stale: ReadonlySet<string> }> {
    const silent = await this.opts.keeper.refreshForRead(maxAgeMs, READ_GRACE_MS, this.quickTimeoutMs, only);
    if (only === undefined) return { view: this.opts.keeper.get(), stale: silent };
    // The nodes not asked are as the view holds them: stale as a cached answer says.
    const { view, stale } = this.cachedView();
    const asked = new Set(only);
    return { view, stale: new Set([...silent, ...[...stale].filter((h) => !asked.has(h))]) };
  }

  private async terminate(req: CcRequest<'ccTerminateInstances'>): Promise<CcResponse<'ccTerminateInstances'>> {
    const { keeper, nodes } = this.opts;
    const ids = [...new Set(req.instanceIds)];
    if (req.onHost !== undefined) return this.terminateOnHost(req.onHost, ids);
    const fenced = keeper.fencedHosts();
    const before = keeper.get();
    // Route by the view; an id it does not know may have appeared since the last poll, and one
    // it knows only as terminated may run on a node it has not heard from lately.
    const held = (v: ClusterView, id: string): boolean => {
      const state = locateInstance(v, id, fenced)?.instance.state;
      return state !== undefined && state !== 'terminated';
    };
    const unknown = ids.some((id) => !held(before, id));
    const hosts = unknown ? keeper.hosts() : ids.map((id) => locateInstance(before, id, fenced)?.host ?? '');
    await keeper.refreshStale(unknown ? 0 : this.freshMs, this.quickTimeoutMs, [...new Set(hosts)]);
    if (!unknown && ids.some((id) => !held(keeper.get(), id))) await keeper.refreshStale(0, this.quickTimeoutMs);

    // Validate everything before touching anything: one bad id and nothing is terminated.
    const view = keeper.get();
    const targets = ids.map((instanceId) => {
      const at = locateInstance(view, instanceId, fenced);
      if (!at) throw CcErrors.make('InstanceNotFound', { instanceId, partition: view.partition });
      return { instanceId, host: at.host };
    });
    for (const host of new Set(targets.map((t) => t.host))) {
      if (!findEntry(view, host)?.node.reachable) throw CcErrors.make('NodeUnreachable', { host, detail: 'its NC did not answer the last poll' });
    }
    // Only a tombstone is known: a node that did not answer may still run it (a re-placed run, a
    // finished migration). Answering "terminated" from the tombstone would be a lie then.
    const silent = listNodes(view).find((n) => !n.reachable);
    const tombstoned = targets.find((t) => locateInstance(view, t.instanceId, fenced)?.instance.state === 'terminated');
    if (silent && tombstoned) {
      throw CcErrors.make('NodeUnreachable', { host: silent.host, detail: `${tombstoned.instanceId} is known only as terminated and may still run there` });
    }

    // 'user': kept on the tombstone, so any other copy of it (a re-home's, moveRepair.ts) ends too.
    const results = await Promise.allSettled(targets.map(({ instanceId, host }) => keeper.change(host, async () => {
      const r = await nodes.terminateInstance(host, instanceId, 'user');
      keeper.update(host, (v) => applyInstanceState(v, host, instanceId, r.currentState));
      return r;
    })));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      this.noteFailures(results.map((r, i) => [targets[i]?.host ?? '', r] as const));
      throw failed.reason;
    }
    void keeper.refreshHosts([...new Set(targets.map((t) => t.host))], this.quickTimeoutMs);
    return { instances: results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])) };
  }

  /**
   * Terminates the copies of `ids` that `host` holds, wherever else the view places the same ids
   * (host HA: a fenced host that came back still holds instances restarted elsewhere).
   */
  private async terminateOnHost(host: string, ids: readonly string[]): Promise<CcResponse<'ccTerminateInstances'>> {
    const { keeper, nodes } = this.opts;
    if (!findEntry(keeper.get(), host)) throw CcErrors.make('NodeNotFound', { host, partition: keeper.get().partition });
    await keeper.refreshStale(0, this.quickTimeoutMs, [host]);
    const entry = findEntry(keeper.get(), host);
    if (!entry?.node.reachable) throw CcErrors.make('NodeUnreachable', { host, detail: 'its NC did not answer the last poll' });
    for (const instanceId of ids) {
      if (!entry.node.instances.some((i) => i.instanceId === instanceId)) throw CcErrors.make('InstanceNotFound', { instanceId, partition: keeper.get().partition });
    }
    const instances = [];
    for (const instanceId of ids) {
      instances.push(await keeper.change(host, async () => {
        const r = await nodes.terminateInstance(host, instanceId);
        keeper.update(host, (v) => applyInstanceState(v, host, instanceId, r.currentState));
        return r;
      }));
    }
    void keeper.refreshHosts([host], this.quickTimeoutMs);
    return { instances };
  }

  /**
   * Powers on, on `onHost` only, instances it holds whose domains are shut off (host HA: a fenced host
   * back in service). Never on a host the CLC says it fences; each id is tried in turn (one NC, one
   * guest start at a time), and a refusal of one does not stop the others.
   */
  private async startOnHost(req: CcRequest<'ccStartInstances'>): Promise<CcResponse<'ccStartInstances'>> {
    const { keeper, nodes } = this.opts;
    const host = req.onHost;
    const partition = keeper.get().partition;
    if (!findEntry(keeper.get(), host)) throw CcErrors.make('NodeNotFound', { host, partition });
    if (keeper.fencedHosts().has(host)) throw CcErrors.make('NodeFenced', { host });
    await keeper.refreshStale(0, this.quickTimeoutMs, [host]);
    if (!findEntry(keeper.get(), host)?.node.reachable) throw CcErrors.make('NodeUnreachable', { host, detail: 'its NC did not answer the last poll' });
    const started: CcResponse<'ccStartInstances'>['started'] = [];
    const failed: CcResponse<'ccStartInstances'>['failed'] = [];
    for (const instanceId of new Set(req.instanceIds)) {
      // Checked again per start: the CLC may have begun fencing it meanwhile.
      if (keeper.fencedHosts().has(host)) {
        failed.push({ instanceId, code: 'NodeFenced', message: CcErrors.make('NodeFenced', { host }).message });
        continue;
      }
      try {
        const instance = await keeper.change(host, async () => {
          const i = await nodes.startInstance(host, instanceId);
          keeper.update(host, (v) => applyStarted(v, host, i));
          return i;
        });
        started.push({ ...instance, host, partition, migrationSource: '', migrationDestination: '' });
      } catch (e) {
        this.noteFailures([[host, { status: 'rejected', reason: e }]]);
        if (!isFerryError(e)) throw e;
        failed.push({ instanceId, code: e.code, message: e.message });
      }
    }
    this.opts.logger.info({ host, started: started.map((i) => i.instanceId), failed }, 'instances powered on');
    void keeper.refreshHosts([host], this.quickTimeoutMs);
    return { started, failed };
  }

  /**
   * ccCheckHostActivity: the first reachable, healthy neighbour (registration order) looks; one that
   * fails or times out hands over to the next while time is left. Never asks the suspect itself.
   */
  private async checkActivity(req: CcRequest<'ccCheckHostActivity'>): Promise<CcResponse<'ccCheckHostActivity'>> {
    const { keeper, nodes, clock } = this.opts;
    const view = keeper.get();
    if (!findEntry(view, req.host)) throw CcErrors.make('NodeNotFound', { host: req.host, partition: view.partition });
    const deadline = clock.now() + req.timeoutMs;
    // Who can look: the neighbours, as of now. Not the suspect itself: its NC may be the very thing
    // that hangs, and waiting for it would turn every check into a timeout (an inconclusive sample).
    await keeper.refreshStale(this.freshMs, Math.min(this.quickTimeoutMs, req.timeoutMs), listNodes(view).map((n) => n.host).filter((h) => h !== req.host));
    const neighbours = listNodes(keeper.get()).filter((n) => n.host !== req.host && n.reachable && n.healthy).map((n) => n.host);
    const tried: string[] = [];
    for (const by of neighbours) {
      const left = deadline - clock.now();
      if (left <= 0) break;
      try {
        const r = await nodes.checkActivity(by, { host: req.host, since: req.since }, { timeoutMs: left });
        return { host: req.host, outcome: r.outcome, detail: `${r.detail} (seen by ${by})`, checkedBy: by, newestWriteAt: r.newestWriteAt };
      } catch (e) {
        tried.push(`${by}: ${(e as Error).message}`);
      }
    }
    const why = neighbours.length === 0 ? 'no reachable, healthy neighbour in the cluster' : `no neighbour answered in time (${tried.join('; ') || 'time ran out'})`;
    return { host: req.host, outcome: 'unknown', detail: why, checkedBy: '', newestWriteAt: null };
  }

  private async modifyNode(req: CcRequest<'ccModifyNode'>): Promise<CcResponse<'ccModifyNode'>> {
    const { keeper, nodes, clock } = this.opts;
    const { host, stateName } = req;
    if (!findEntry(keeper.get(), host)) throw CcErrors.make('NodeNotFound', { host, partition: keeper.get().partition });
    let previousState;
    try {
      // The NC persists the new state before it answers; its answer is the node's new truth.
      previousState = await keeper.change(host, async () => {
        const r = await nodes.modifyNode(host, stateName);
        keeper.update(host, (v) => applyReport(v, host, r.node, clock.now()));
        return r.previousState;
      });
    } catch (e) {
      this.noteFailures([[host, { status: 'rejected', reason: e }]]);
      throw e;
    }
    this.opts.logger.info({ host, previousState, stateName }, 'node state changed');
    const view = keeper.get();
    const node = findEntry(view, host)?.node;
    if (!node) throw CcErrors.make('NodeNotFound', { host, partition: view.partition });
    return { previousState, node, matrix: matrixOf(view, req.vmTypes) };
  }

  /** Quarantine or release (issue 18): the NC decides and persists; its answer is the node's new truth. */
  private async quarantineNode(req: CcRequest<'ccQuarantineNode'>): Promise<CcResponse<'ccQuarantineNode'>> {
    const { keeper, nodes, clock } = this.opts;
    const { host, quarantined, reason } = req;
    if (!findEntry(keeper.get(), host)) throw CcErrors.make('NodeNotFound', { host, partition: keeper.get().partition });
    let answer;
    try {
      answer = await keeper.change(host, async () => {
        const r = await nodes.quarantineNode(host, { quarantined, reason });
        keeper.update(host, (v) => applyReport(v, host, r.node, clock.now()));
        return r;
      });
    } catch (e) {
      this.noteFailures([[host, { status: 'rejected', reason: e }]]);
      throw e;
    }
    this.opts.logger.warn({ host, quarantined, reason }, quarantined ? 'node quarantined' : 'node quarantine lifted');
    // Items queued towards it are re-planned at once, and nothing new is planned onto it.
    this.planDriver.poke();
    const view = keeper.get();
    const node = findEntry(view, host)?.node;
    if (!node) throw CcErrors.make('NodeNotFound', { host, partition: view.partition });
    return {
      previousState: answer.previousState, ...(answer.previousQuarantine ? { previousQuarantine: answer.previousQuarantine } : {}),
      node, matrix: matrixOf(view, req.vmTypes),
    };
  }

  /** Records NCs that turned out to be unreachable, so the scheduler avoids them at once. */
  private noteFailures(results: readonly (readonly [string, PromiseSettledResult<unknown>])[]): void {
    const now = this.opts.clock.now();
    for (const [host, r] of results) {
      if (r.status === 'rejected' && isFerryError(r.reason) && r.reason.code === 'NodeUnreachable') {
        this.opts.keeper.update(host, (v) => markUnreachable(v, host, now));
      }
    }
  }
}
