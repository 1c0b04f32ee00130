/**
 * The CC's view of its partition: per registered node, what the NC last reported plus reachability.
 * Every function here is pure (view in, view out); the keeper (viewKeeper.ts) owns the one current
 * view and is the only caller that replaces it. The NC is the source of truth: a report replaces
 * everything the view held for that node.
 */
import { isDeepStrictEqual } from 'node:util';
import type { CcInstance, CcNode } from '../shared/protocol/ccProtocol.js';
import type { Incoming, MigrationPlan } from '../shared/protocol/migrationProtocol.js';
import type { NcInstance, NcNode } from '../shared/protocol/ncProtocol.js';
import type { NcVolumeAttachment } from '../shared/protocol/volumes.js';
import { ZERO, add, sub, type Resources } from '../shared/model/resources.js';
import { resourceMatrix, type MatrixRow } from '../shared/model/resourceMatrix.js';
import type { VmType } from '../shared/model/vmTypes.js';
import { generationOf } from './moveRepair.js';
import { listInstancesWithMigrations, preferredHost } from './migration/listing.js';
import type { NodeMigrations } from './migration/plans.js';
import { reservationsOf, reservedOn, type Reservations } from './migration/reservations.js';

export interface NodeEntry {
  readonly node: CcNode;
  /** Epoch ms of the last refresh attempt that was applied, success or failure; null if none. */
  readonly checkedAt: number | null;
  /**
   * Bumped at the start and end of every change the CC makes on this node, so a poll that was in
   * flight across a change cannot overwrite the change's result with what the NC said before it.
   */
  readonly epoch: number;
  /** Migration plans this NC is the source of, as it last reported them (never from the cache). */
  readonly plans: readonly MigrationPlan[];
  /** Incoming migrations this NC holds as a destination, as it last reported them. */
  readonly incoming: readonly Incoming[];
  /** The NC has answered since the CC started: absent plans and records are really absent. */
  readonly migrationsKnown: boolean;
}

export interface ClusterView {
  readonly partition: string;
  /** In registration order (greedy scheduling and every listing follow it). */
  readonly entries: readonly NodeEntry[];
  /**
   * Host → position in `entries`, shared by every view derived from the first (the hosts never
   * change): a poll then replaces one entry in O(1) lookups instead of a search of the cluster.
   * A view whose entries were reordered still answers right (positionOf checks, then searches).
   */
  readonly index?: ReadonlyMap<string, number>;
}

function blankNode(host: string, partition: string): CcNode {
  return {
    host, partition, nodeState: 'unknown', reachable: false, healthy: false, lastSeen: 0,
    capacity: { ...ZERO }, used: { ...ZERO }, instances: [],
  };
}

/**
 * The view at start-up: one entry per registered host. Cached nodes (from cc.json) keep their
 * resources and instances so the CC can answer while an NC is down, but nothing the cache says is
 * trusted: every node starts unreachable and 'unknown' until its NC answers.
 */
export function initialView(partition: string, hosts: readonly string[], cached: readonly CcNode[] = []): ClusterView {
  return {
    partition,
    index: new Map(hosts.map((h, i) => [h, i])),
    entries: hosts.map((host) => {
      const c = cached.find((n) => n.host === host && n.partition === partition);
      const node = c ? { ...c, nodeState: 'unknown' as const, reachable: false } : blankNode(host, partition);
      return { node, checkedAt: null, epoch: 0, plans: [], incoming: [], migrationsKnown: false };
    }),
  };
}

/**
 * A replica taking up leadership (issue 21): `stored` is what the previous leader last wrote of the
 * node (the view cache in etcd). When it saw the node later than this replica did, its look is
 * adopted (resources, instances), untrusted as at start-up (unreachable, 'unknown' until the NC
 * answers): a follower's own older look could miss an instance started since, and host HA would
 * restart nothing of a dead host. A node this replica saw as late or later is left as it is.
 */
export function adoptStored(view: ClusterView, stored: CcNode): ClusterView {
  const mine = findEntry(view, stored.host);
  if (mine === undefined || stored.partition !== view.partition || stored.lastSeen <= mine.node.lastSeen) return view;
  return mapEntry(view, stored.host, (e) => ({ ...e, node: { ...stored, nodeState: 'unknown', reachable: false } }));
}

/** Where `host` is in `view.entries`, -1 if it is not registered. */
export function positionOf(view: ClusterView, host: string): number {
  const i = view.index?.get(host);
  if (i !== undefined && view.entries[i]?.node.host === host) return i;
  return view.entries.findIndex((e) => e.node.host === host);
}

function mapEntry(view: ClusterView, host: string, fn: (e: NodeEntry) => NodeEntry): ClusterView {
  const i = positionOf(view, host);
  if (i < 0) return view;
  const entries = view.entries.slice();
  entries[i] = fn(view.entries[i]!);
  return { ...view, entries };
}

export function findEntry(view: ClusterView, host: string): NodeEntry | undefined {
  const i = positionOf(view, host);
  return i < 0 ? undefined : view.entries[i];
}

/** `prev` if `next` says the same, else `next`: a poll that changed nothing keeps the old object, so identity shows change. */
function keepIfSame<T>(prev: T, next: T): T {
  return isDeepStrictEqual(prev, next) ? prev : next;
}

/** A successful ncDescribeResource (or the node part of ncModifyNode's answer). */
export function applyReport(view: ClusterView, host: string, report: NcNode, now: number): ClusterView {
  return mapEntry(view, host, (e) => ({
    ...e,
    checkedAt: now,
    node: {
      host, partition: view.partition, nodeState: report.nodeState, reachable: true, healthy: report.healthy,
      lastSeen: now, capacity: report.capacity, used: report.used, instances: report.instances,
      ...(report.lostStore !== undefined ? { lostStore: report.lostStore } : {}),
      ...(report.quarantine !== undefined ? { quarantine: report.quarantine } : {}),
    },
    plans: keepIfSame(e.plans, report.plans ?? []),
    incoming: keepIfSame(e.incoming, report.incoming ?? []),
    migrationsKnown: true,
  }));
}

/**
 * The NC said its report is still the one this entry holds (the node watch, cc/nodeWatch.ts): seen
 * now, reachable, everything else as it was.
 */
export function applySeen(view: ClusterView, host: string, now: number): ClusterView {
  return mapEntry(view, host, (e) => ({ ...e, checkedAt: now, node: { ...e.node, reachable: true, lastSeen: now } }));
}

/** A plan as its source NC just answered it (prepare, commit, rollback, replan). */
export function applyPlan(view: ClusterView, host: string, plan: MigrationPlan): ClusterView {
  return mapEntry(view, host, (e) => ({
    ...e, plans: [...e.plans.filter((p) => p.migrationId !== plan.migrationId), plan],
  }));
}

/**
 * A destination's record for one item as it just answered (undefined: it holds none). Its `used`
 * moves with it, as the NC's does, so the scheduler counts the hold before the next poll.
 */
export function applyIncoming(view: ClusterView, host: string, migrationId: string, instanceId: string, record: Incoming | undefined): ClusterView {
  return mapEntry(view, host, (e) => {
    const same = (r: Incoming): boolean => r.migrationId === migrationId && r.instanceId === instanceId;
    const prior = e.incoming.find(same);
    let used = e.node.used;
    if (prior && prior.state !== 'none') used = sub(used, prior.vmType);
    if (record && record.state !== 'none') used = add(used, record.vmType);
    return {
      ...e,
      node: { ...e.node, used },
      incoming: [...e.incoming.filter((r) => !same(r)), ...(record ? [record] : [])],
    };
  });
}

/** What the migration logic reads of each node. */
export function migrationInputs(view: ClusterView): NodeMigrations[] {
  return view.entries.map((e) => ({ host: e.node.host, instances: e.node.instances, plans: e.plans, incoming: e.incoming }));
}

export function reservationsOfView(view: ClusterView): Reservations {
  return reservationsOf(migrationInputs(view));
}

/** A failed contact: keep the last known data (it is all we have), flag it as not current. */
export function markUnreachable(view: ClusterView, host: string, now: number): ClusterView {
  return mapEntry(view, host, (e) => ({ ...e, checkedAt: now, node: e.node.reachable ? { ...e.node, reachable: false } : e.node }));
}

/** The NC answered but said its hypervisor is unavailable. */
export function markUnhealthy(view: ClusterView, host: string): ClusterView {
  return mapEntry(view, host, (e) => ({ ...e, node: { ...e.node, healthy: false } }));
}

export function bumpEpoch(view: ClusterView, host: string): ClusterView {
  return mapEntry(view, host, (e) => ({ ...e, epoch: e.epoch + 1 }));
}

/** A copy that stands for its instance: not terminated (a stopped one too). */
function holds(i: NcInstance): boolean {
  return i.state !== 'terminated';
}

/** What holds a node's resources: every copy not terminated, except one its user stopped (issue 18: as in EC2, it holds none; the NC counts so too). */
function holdsResources(i: NcInstance): boolean {
  return holds(i) && i.userStopped !== true;
}

/** An instance an NC just accepted: recorded at once so the scheduler counts it before the next poll. */
export function applyStarted(view: ClusterView, host: string, instance: NcInstance): ClusterView {
  return mapEntry(view, host, (e) => {
    const prior = e.node.instances.find((i) => i.instanceId === instance.instanceId);
    const others = e.node.instances.filter((i) => i.instanceId !== instance.instanceId);
    let used = e.node.used;
    if (prior && holdsResources(prior)) used = sub(used, prior.vmType);
    if (holdsResources(instance)) used = add(used, instance.vmType);
    return { ...e, node: { ...e.node, used, instances: [...others, instance] } };
  });
}

/**
 * An attachment an NC just answered (attached, or detached: then the record no longer holds it), into
 * the instance's volumes at once, as a stop is: a migration planned right after the answer carries the
 * volumes the NC holds (issue 18), whatever the next poll brings and whenever.
 */
export function applyAttachment(view: ClusterView, host: string, instanceId: string, attachment: NcVolumeAttachment): ClusterView {
  const prior = findEntry(view, host)?.node.instances.find((i) => i.instanceId === instanceId);
  if (!prior) return view;
  const others = (prior.volumes ?? []).filter((v) => v.volumeId !== attachment.volumeId);
  const volumes = attachment.status === 'detached' ? others : [...others, { ...attachment }];
  const { volumes: _old, ...rest } = prior;
  return applyStarted(view, host, volumes.length > 0 ? { ...rest, volumes } : rest);
}

/** An instance an NC just terminated (or began shutting down). */
export function applyInstanceState(view: ClusterView, host: string, instanceId: string, state: NcInstance['state']): ClusterView {
  const prior = findEntry(view, host)?.node.instances.find((i) => i.instanceId === instanceId);
  return prior ? applyStarted(view, host, { ...prior, state }) : view;
}

export interface Located {
  readonly host: string;
  readonly instance: NcInstance;
}

/**
 * Where an instance is, by the view. Should an id show up on two nodes: a live copy outside the
 * `fenced` hosts first (host HA restarted it there; the fenced host's copy is obsolete); then,
 * while it migrates, the copy it is listed from (the source until its item completes); otherwise a
 * live copy wins.
 */
export function locateInstance(view: ClusterView, instanceId: string, fenced: ReadonlySet<string> = new Set()): Located | undefined {
  if (fenced.size > 0) {
    const outside = locateOutside(view, instanceId, fenced);
    if (outside) return outside;
  }
  const preferred = preferredHost(migrationInputs(view), instanceId);
  const there = preferred === undefined ? undefined : findEntry(view, preferred)?.node.instances.find((i) => i.instanceId === instanceId);
  if (preferred !== undefined && there && holds(there)) return { host: preferred, instance: there };
  let found: Located | undefined;
  for (const e of view.entries) {
    const instance = e.node.instances.find((i) => i.instanceId === instanceId);
    if (instance && (!found || better(instance, found.instance))) found = { host: e.node.host, instance };
  }
  return found;
}

/** A live copy over a dead one; of two live ones, the later re-home (cc/moveRepair.ts forgets the other). */
function better(a: NcInstance, b: NcInstance): boolean {
  if (holds(a) !== holds(b)) return holds(a);
  return holds(a) && generationOf(a) > generationOf(b);
}

/** A live copy on a host outside `fenced`, if any. */
export function locateOutside(view: ClusterView, instanceId: string, fenced: ReadonlySet<string>): Located | undefined {
  let found: Located | undefined;
  for (const e of view.entries) {
    if (fenced.has(e.node.host)) continue;
    const instance = e.node.instances.find((i) => i.instanceId === instanceId && holds(i));
    if (instance && (!found || better(instance, found.instance))) found = { host: e.node.host, instance };
  }
  return found;
}

/**
 * New instances may go here: enabled by its NC, reachable now, its hypervisor working, and not
 * quarantined (a quarantined NC is disabled too; this holds even against a report that says otherwise).
 */
export function isSchedulable(node: CcNode): boolean {
  return node.nodeState === 'enabled' && node.reachable && node.healthy && node.quarantine === undefined;
}

/**
 * What a node has committed: the larger of what its NC reported and what its live instances add up
 * to, per dimension, so an instance the view knows of is counted even if a report lagged behind it.
 */
export function committed(node: CcNode): Resources {
  const live = node.instances.filter(holdsResources).reduce<Resources>((acc, i) => add(acc, i.vmType), ZERO);
  return {
    cores: Math.max(node.used.cores, live.cores),
    memoryMiB: Math.max(node.used.memoryMiB, live.memoryMiB),
    diskGiB: Math.max(node.used.diskGiB, live.diskGiB),
  };
}

export function isStale(entry: NodeEntry, now: number, maxAgeMs: number): boolean {
  return entry.checkedAt === null || now - entry.checkedAt >= maxAgeMs;
}

/**
 * Whether two reports of a node say the same but for when it was seen: what a steady poll brings.
 * Such a change needs no reconcile and may wait for the cache's slow write.
 */
export function onlySeenLater(prev: CcNode, next: CcNode): boolean {
  return prev.lastSeen !== next.lastSeen && isDeepStrictEqual({ ...prev, lastSeen: 0 }, { ...next, lastSeen: 0 });
}

export function listNodes(view: ClusterView): CcNode[] {
  return view.entries.map((e) => e.node);
}

/**
 * Every instance once (a migrating one from the node it is listed from), with its migration; a
 * copy on a `fenced` host only when no other host holds the instance.
 */
export function listInstances(view: ClusterView, fenced: ReadonlySet<string> = new Set()): CcInstance[] {
  return listInstancesWithMigrations(migrationInputs(view), fenced).map((l) => ({
    ...l.instance, migrationState: l.migrationState, host: l.host, partition: view.partition,
    migrationSource: l.migrationSource, migrationDestination: l.migrationDestination,
  }));
}

/**
 * The resource matrix of the partition, counting only schedulable nodes as available, and what
 * migrations reserve as taken: their destinations' room, and all of a reserved destination.
 */
export function matrixOf(view: ClusterView, vmTypes: readonly VmType[]): MatrixRow[] {
  const r = reservationsOfView(view);
  return resourceMatrix(view.entries.map(({ node }) => ({
    capacity: node.capacity,
    used: add(committed(node), reservedOn(r, node.host)),
    schedulable: isSchedulable(node) && !r.reservedHosts.has(node.host),
  })), vmTypes);
}
