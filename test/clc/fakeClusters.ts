/**
 * A hand-written fake of the CLC's narrow Clusters interface: partitions of nodes held in memory,
 * answering the CC contract (every request and answer is checked against the CLC's CC contract),
 * recording every call, able to play an unreachable CC, to hold a call open until a test releases
 * it, and to plan and run live migrations in steps a test drives. Its migration refusals are the
 * CC's codes inside RemoteFault, translated by the real ccFaults.ts as the real adapter does.
 * No mocking library.
 */
import { CLC_CC_OPS, type ClcCcOp, type ClcCcRequest, type ClcCcResponse } from '../../clc/clusters/ccContract.js';
import { translateCcFailure } from '../../clc/clusters/ccFaults.js';
import type { Clusters, PartitionInfo } from '../../clc/clusters/clusters.js';
import { ClcErrors } from '../../clc/core/errors.js';
import { ManualClock } from '../../shared/clock.js';
import type { FerryError } from '../../shared/errors/registry.js';
import { resourceMatrix } from '../../shared/model/resourceMatrix.js';
import { ZERO, add, countFitting, fits, sub, sum, type Resources } from '../../shared/model/resources.js';
import type { VmType } from '../../shared/model/vmTypes.js';
import type { CcInstance, CcNode } from '../../shared/protocol/ccProtocol.js';
import type { MigrationState, NodeState } from '../../shared/protocol/common.js';
import { FINAL_ITEM_STATES, type ItemState, type MigrationPlan, type PlanItem } from '../../shared/protocol/migrationProtocol.js';
import { WireErrors } from '../../shared/wire/errors.js';

export interface FakeNodeSpec {
  readonly host: string;
  readonly capacity?: Resources;
  readonly nodeState?: NodeState;
  readonly reachable?: boolean;
}

export interface FakeNode {
  host: string;
  partition: string;
  capacity: Resources;
  nodeState: NodeState;
  reachable: boolean;
  /** False: the NC answers but has no connection to its hypervisor; absent: healthy. */
  healthy?: boolean;
  instances: CcInstance[];
  /** Issue 18: as the NC reports it. */
  quarantine?: { since: number; reason: string };
}

interface FakePlan {
  readonly partition: string;
  readonly plan: MigrationPlan;
  /** Destinations held whole (reserveDestinations). */
  readonly reservedHosts: readonly string[];
}

export interface RecordedCall {
  readonly partition: string;
  readonly op: ClcCcOp;
  readonly req: unknown;
}

/** A call held open: `reached` resolves when it arrives, the CC answers once `release()` is called. */
export interface HeldCall {
  readonly reached: Promise<void>;
  release(): void;
}

interface Hold {
  readonly op: ClcCcOp;
  arrived(): void;
  readonly released: Promise<void>;
}

/** Operations that change something in a CC. */
export const MUTATING_OPS: readonly ClcCcOp[] = [
  'ccRunInstances', 'ccTerminateInstances', 'ccStartInstances', 'ccModifyNode', 'ccQuarantineNode', 'ccMigrateInstances', 'ccCancelMigration',
  'ccPauseInstance', 'ccStopInstance', 'ccRebootInstance', 'ccStartInstance',
];

export const DEFAULT_CAPACITY: Resources = { cores: 4, memoryMiB: 4096, diskGiB: 100 };

/** What the fake's plans carry as limits and timeouts (the CC's settings; the CLC only shows them). */
const LIMITS = { perSource: 2, perDestination: 2, perCluster: 4 };
const TIMEOUTS = { prepareMs: 30_000, readyMs: 30_000, migratingBaseMs: 60_000, migratingPerGiBMs: 30_000, stallMs: 30_000 };
/** Each step of a migration moves the fake's clock by this much. */
const STEP_MS = 1_000;
const BYTES_PER_MIB = 1024 * 1024;

/** One step along the happy path; a failing instance rolls back instead of cleaning. */
const NEXT: Partial<Record<ItemState, ItemState>> = {
  queued: 'preparing', preparing: 'ready', ready: 'migrating', migrating: 'cleaning', cleaning: 'completed',
};

/** A CC's refusal as it arrives over the wire. */
function ccRefusal(remoteCode: string, remoteMessage: string): FerryError {
  return WireErrors.make('RemoteFault', { peer: 'fake-cc', operation: 'op', remoteCode, remoteMessage, remoteStatus: 409 });
}

function isFinal(s: ItemState): boolean {
  return FINAL_ITEM_STATES.includes(s);
}

export class FakeClusters implements Clusters {
  readonly partitions: readonly PartitionInfo[];
  readonly calls: RecordedCall[] = [];
  /** Partitions whose CC plays unreachable (connection refused). */
  readonly down = new Set<string>();
  /** Each ccDescribeMigrations first moves every unfinished item of its partition one step (as a CC's migrations would). */
  autoAdvance = false;
  /** Instances whose migration rolls back when it would clean (the destination "stops answering"). */
  readonly failing = new Set<string>();
  /** The CC's clock for plan timestamps; the harness shares the CLC's ManualClock so both agree. */
  clock: ManualClock = new ManualClock(Date.UTC(2013, 5, 1, 12, 0, 0));
  /** What a neighbour would see of a suspect host's writes (ccCheckHostActivity); absent: 'unknown'. */
  readonly activity = new Map<string, 'active' | 'inactive'>();
  /**
   * Operations the fake CCs do not serve: refused UnknownOperation, as an older CC's wire server
   * refuses one it does not know (a rolling upgrade: ccDescribeNodeHealth).
   */
  readonly notServed = new Set<ClcCcOp>();
  /** Issue 21: set, the reads that carry `leading` say it (false: a standby replica answered); absent: a CC without replicas. */
  leading: boolean | undefined;
  /** ccDescribeNodeHealth's versions: the content each version named, per partition and kind (versions never repeat). */
  private readonly healthVersions = new Map<string, { content: string; version: string }>();
  private healthVersionSeq = 0;
  /** ccAttachVolume refusals still to serve (a volume backend or node that fails), first one first. */
  readonly attachRefusals: string[] = [];
  private readonly nodes: FakeNode[] = [];
  private readonly plans: FakePlan[] = [];
  private readonly holds: Hold[] = [];
  private migrationSeq = 0;

  constructor(layout: Readonly<Record<string, readonly FakeNodeSpec[]>>) {
    this.partitions = Object.keys(layout).map((name, i) => ({ name, endpoint: `http://127.0.12.${200 + i}:8774` }));
    for (const [partition, specs] of Object.entries(layout)) {
      for (const s of specs) {
        this.nodes.push({
          host: s.host, partition, capacity: s.capacity ?? DEFAULT_CAPACITY,
          nodeState: s.nodeState ?? 'enabled', reachable: s.reachable ?? true, instances: [],
        });
      }
    }
  }

  private now(): number {
    return this.clock.now();
  }

  mutatingCalls(): RecordedCall[] {
    return this.calls.filter((c) => MUTATING_OPS.includes(c.op));
  }

  /** A snapshot of everything the fake CCs hold (nodes, instances, plans, reservations), to assert that nothing changed. */
  snapshot(): string {
    return JSON.stringify({ nodes: this.nodes, plans: this.plans });
  }

  node(host: string): FakeNode | undefined {
    return this.nodes.find((n) => n.host === host);
  }

  instance(instanceId: string): CcInstance | undefined {
    return this.nodes.flatMap((n) => n.instances).find((i) => i.instanceId === instanceId);
  }

  plan(migrationId: string): MigrationPlan | undefined {
    return this.plans.find((p) => p.plan.migrationId === migrationId)?.plan;
  }

  /** Lets a test move an instance along (e.g. pending → running) as an NC would. */
  setInstanceState(instanceId: string, state: CcInstance['state']): void {
    for (const n of this.nodes) for (const i of n.instances) if (i.instanceId === instanceId) i.state = state;
  }

  /** Forgets an instance, as an NC that dropped its tombstone would. */
  dropInstance(instanceId: string): void {
    for (const n of this.nodes) n.instances = n.instances.filter((i) => i.instanceId !== instanceId);
  }

  /** Holds the next call of `op` open after it is recorded, until the test releases it. */
  hold(op: ClcCcOp): HeldCall {
    let arrived!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((r) => { arrived = r; });
    const released = new Promise<void>((r) => { release = r; });
    this.holds.push({ op, arrived, released });
    return { reached, release };
  }

  /** Moves every unfinished item one step (of one partition's plans, or all), as the CC's migrations would between two polls. */
  advanceMigrations(partition?: string): void {
    const plans = this.activePlans().filter((p) => partition === undefined || p.partition === partition);
    if (plans.length === 0) return;
    this.clock.advance(STEP_MS);
    for (const p of plans) for (const item of p.plan.items) this.advanceItem(p, item);
  }

  async call<O extends ClcCcOp>(partition: string, op: O, req: ClcCcRequest<O>): Promise<ClcCcResponse<O>> {
    this.calls.push({ partition, op, req: structuredClone(req) });
    CLC_CC_OPS[op].request.parse(req);
    if (!this.partitions.some((p) => p.name === partition)) throw new Error(`fake: unknown partition ${partition}`);
    const held = this.holds.findIndex((h) => h.op === op);
    if (held >= 0) {
      const [h] = this.holds.splice(held, 1);
      h?.arrived();
      await h?.released;
    }
    if (this.down.has(partition)) {
      throw ClcErrors.make('ServiceUnavailable', {
        partition, delivered: 'no', detail: `the cluster controller of partition ${partition} is unreachable (ECONNREFUSED)`,
      });
    }
    let res: unknown;
    try {
      if (this.notServed.has(op)) throw ccRefusal('UnknownOperation', `operation ${op} is not served here`);
      res = this.answer(partition, op, req as never);
    } catch (e) {
      // What the real adapter does with a CC's refusal (clc/clusters/ccClusters.ts).
      throw translateCcFailure(e, partition, op);
    }
    return CLC_CC_OPS[op].response.parse(res) as ClcCcResponse<O>;
  }

  private inPartition(partition: string): FakeNode[] {
    return this.nodes.filter((n) => n.partition === partition);
  }

  private used(n: FakeNode): Resources {
    return sum(n.instances.filter((i) => i.state !== 'terminated').map((i) => i.vmType));
  }

  private activePlans(): FakePlan[] {
    return this.plans.filter((p) => p.plan.items.some((i) => !isFinal(i.state)));
  }

  /** Room that unfinished items hold on `host` (a completed item's instance is counted in `used` instead). */
  private reserved(host: string): Resources {
    return sum(this.activePlans().flatMap((p) => p.plan.items).filter((i) => i.destination === host && !isFinal(i.state)).map((i) => i.vmType));
  }

  private wholeReserved(host: string): boolean {
    return this.activePlans().some((p) => p.reservedHosts.includes(host));
  }

  private free(n: FakeNode): Resources {
    return sub(sub(n.capacity, this.used(n)), this.reserved(n.host));
  }

  private ccNode(n: FakeNode): CcNode {
    return {
      host: n.host, partition: n.partition, nodeState: n.nodeState, reachable: n.reachable, healthy: n.healthy ?? true,
      lastSeen: 1_000, capacity: n.capacity, used: this.used(n),
      instances: structuredClone(n.instances).map(({ host: _h, partition: _p, migrationSource: _s, migrationDestination: _d, ...i }) => i),
      uri: `https://${n.host}:8775/axis2/services/EucalyptusNC`,
      ...(n.quarantine ? { quarantine: { ...n.quarantine } } : {}),
    };
  }

  private leadingField(): { leading?: boolean } {
    return this.leading !== undefined ? { leading: this.leading } : {};
  }

  /** What a CC answers to ccDescribeNodeHealth: versioned by content, per kind (as cc/nodeHealthListing.ts). */
  private nodeHealth(partition: string, r: ClcCcRequest<'ccDescribeNodeHealth'>): unknown {
    const hosts = this.inPartition(partition).map((n) => ({
      host: n.host, nodeState: n.nodeState, reachable: n.reachable, healthy: n.healthy ?? true, stale: !n.reachable, quarantined: n.quarantine !== undefined,
    }));
    const key = `${r.cached === true ? 'c' : 'f'}:${partition}`;
    const content = JSON.stringify(hosts);
    let v = this.healthVersions.get(key);
    if (v?.content !== content) {
      v = { content, version: `fake-${key}-${++this.healthVersionSeq}` };
      this.healthVersions.set(key, v);
    }
    if (r.knownVersion === v.version) return { partition, version: v.version, unchanged: true, ...this.leadingField() };
    return { partition, version: v.version, hosts, ...this.leadingField() };
  }

  private matrix(partition: string, vmTypes: readonly VmType[]) {
    return resourceMatrix(this.inPartition(partition).map((n) => ({
      capacity: n.capacity, used: add(this.used(n), this.reserved(n.host)),
      schedulable: n.nodeState === 'enabled' && n.reachable && !this.wholeReserved(n.host),
    })), vmTypes);
  }

  private answer(partition: string, op: ClcCcOp, req: never): unknown {
    switch (op) {
      case 'ccDescribeNodes':
        return { partition, nodes: this.inPartition(partition).map((n) => this.ccNode(n)), ...this.leadingField() };
      case 'ccDescribeNodeHealth':
        return this.nodeHealth(partition, req as ClcCcRequest<'ccDescribeNodeHealth'>);
      case 'ccDescribeResources':
        return { partition, matrix: this.matrix(partition, (req as ClcCcRequest<'ccDescribeResources'>).vmTypes) };
      case 'ccDescribeInstances':
        return { partition, instances: this.inPartition(partition).flatMap((n) => structuredClone(n.instances)) };
      case 'ccRunInstances':
        return this.run(partition, req as ClcCcRequest<'ccRunInstances'>);
      case 'ccTerminateInstances':
        return this.terminate(partition, req as ClcCcRequest<'ccTerminateInstances'>);
      case 'ccStartInstances':
        return this.start(partition, req as ClcCcRequest<'ccStartInstances'>);
      case 'ccModifyNode':
        return this.modify(partition, req as ClcCcRequest<'ccModifyNode'>);
      case 'ccPauseInstance':
        return this.pause(partition, req as ClcCcRequest<'ccPauseInstance'>);
      case 'ccStopInstance':
        return this.power(partition, (req as ClcCcRequest<'ccStopInstance'>).instanceId, 'stop');
      case 'ccRebootInstance':
        return this.power(partition, (req as ClcCcRequest<'ccRebootInstance'>).instanceId, 'reboot');
      case 'ccStartInstance':
        return this.power(partition, (req as ClcCcRequest<'ccStartInstance'>).instanceId, 'start');
      case 'ccAttachVolume':
        return this.attach(partition, req as ClcCcRequest<'ccAttachVolume'>);
      case 'ccQuarantineNode':
        return this.quarantine(partition, req as ClcCcRequest<'ccQuarantineNode'>);
      case 'ccMigrateInstances':
        return this.migrate(partition, req as ClcCcRequest<'ccMigrateInstances'>);
      case 'ccDescribeMigrations':
        if (this.autoAdvance) this.advanceMigrations(partition);
        return {
          partition,
          migrations: this.plans.filter((p) => p.partition === partition && ((req as ClcCcRequest<'ccDescribeMigrations'>).migrationId ?? p.plan.migrationId) === p.plan.migrationId)
            .map((p) => this.described(p)),
        };
      case 'ccCancelMigration':
        return this.cancel(partition, req as ClcCcRequest<'ccCancelMigration'>);
      case 'ccCheckHostActivity': {
        const r = req as ClcCcRequest<'ccCheckHostActivity'>;
        const by = this.inPartition(partition).find((n) => n.host !== r.host && n.reachable);
        const outcome = by ? this.activity.get(r.host) ?? 'unknown' : 'unknown';
        return { host: r.host, outcome, detail: `fake: ${r.host} is ${outcome}`, checkedBy: by?.host ?? '', newestWriteAt: null };
      }
      default:
        throw new Error(`fake: no ${String(op)}`);
    }
  }

  private run(partition: string, r: ClcCcRequest<'ccRunInstances'>): unknown {
    const plan: FakeNode[] = [];
    const extra = new Map<FakeNode, number>();
    for (let k = 0; k < r.instanceIds.length; k++) {
      const n = this.inPartition(partition).find((x) => x.nodeState === 'enabled' && x.reachable && !this.wholeReserved(x.host) && !(r.restartFrom ?? []).includes(x.host)
        && countFitting(r.vmType, sub(this.free(x), scale(r.vmType, extra.get(x) ?? 0))) > 0);
      if (!n) break;
      plan.push(n);
      extra.set(n, (extra.get(n) ?? 0) + 1);
    }
    if (plan.length < r.minCount) {
      throw ClcErrors.withMessage('InsufficientInstanceCapacity', `only ${plan.length} of ${r.minCount} fit`, { partition, delivered: 'yes' });
    }
    const started = plan.map((n, k) => {
      const inst: CcInstance = {
        instanceId: r.instanceIds[k] as string, reservationId: r.reservationId, imageId: r.imageId, ownerId: r.ownerId,
        vmType: r.vmType, state: 'pending', hypervisorState: 'running', launchTime: r.launchTime, migrationState: 'none',
        host: n.host, partition, migrationSource: '', migrationDestination: '',
      };
      n.instances.push(inst);
      return structuredClone(inst);
    });
    return { instances: started };
  }

  private terminate(partition: string, r: ClcCcRequest<'ccTerminateInstances'>): unknown {
    const all = this.inPartition(partition).filter((n) => r.onHost === undefined || n.host === r.onHost).flatMap((n) => n.instances);
    const missing = r.instanceIds.find((id) => !all.some((i) => i.instanceId === id));
    if (missing) throw ClcErrors.withMessage('InvalidInstanceID.NotFound', `instance ${missing} is not known`, { partition, delivered: 'yes' });
    return {
      instances: r.instanceIds.map((id) => {
        const i = all.find((x) => x.instanceId === id) as CcInstance;
        const previousState = i.state;
        i.state = 'terminated';
        return { instanceId: id, previousState, currentState: 'terminated' };
      }),
    };
  }

  /** Stop, reboot or start one instance on its own node, as the CC does (cc/powerInstance.ts, cc/userStart.ts; no re-homing here). */
  private power(partition: string, instanceId: string, op: 'stop' | 'reboot' | 'start'): unknown {
    const n = this.inPartition(partition).find((x) => x.instances.some((i) => i.instanceId === instanceId && i.state !== 'terminated'));
    const i = n?.instances.find((x) => x.instanceId === instanceId);
    if (!n || !i) throw ccRefusal('InstanceNotFound', `instance ${instanceId} is not known`);
    const previousState = i.state;
    const allowed = op === 'reboot' ? i.state === 'running' : i.state === 'running' || i.state === 'stopped';
    if (!allowed) {
      throw ccRefusal('InstanceStateConflict', `instance ${instanceId} on node ${n.host} cannot be ${op === 'stop' ? 'stopped' : op === 'start' ? 'started' : 'rebooted'}: it is ${i.state}`);
    }
    if (op === 'reboot') return { instanceId, host: n.host, state: i.state };
    if (op === 'stop') {
      i.state = 'stopped';
      i.hypervisorState = 'shutoff';
      i.userStopped = true;
    } else {
      i.state = 'running';
      i.hypervisorState = 'running';
      delete i.userStopped;
    }
    return { instanceId, host: n.host, previousState, currentState: i.state };
  }

  /** Attach to the live copy on a reachable node, as the CC routes it (cc/volumes.ts): the NC's answer. */
  private attach(partition: string, r: ClcCcRequest<'ccAttachVolume'>): unknown {
    const refusal = this.attachRefusals.shift();
    if (refusal !== undefined) throw ccRefusal('HypervisorRefused', refusal);
    const n = this.inPartition(partition).find((x) => x.reachable && x.instances.some((i) => i.instanceId === r.instanceId && i.state !== 'terminated'));
    const i = n?.instances.find((x) => x.instanceId === r.instanceId && x.state !== 'terminated');
    if (!n || !i) throw ccRefusal('InstanceNotFound', `instance ${r.instanceId} is not known`);
    const attachment = { volumeId: r.volumeId, device: r.device, path: r.path, status: 'attached' as const };
    i.volumes = [...(i.volumes ?? []).filter((v) => v.volumeId !== r.volumeId), attachment];
    return { instanceId: i.instanceId, host: n.host, attachment };
  }

  /** Pause or resume one running instance, as the CC does (cc/pauseInstance.ts): the NC's answer. */
  private pause(partition: string, r: ClcCcRequest<'ccPauseInstance'>): unknown {
    const n = this.inPartition(partition).find((x) => x.instances.some((i) => i.instanceId === r.instanceId && i.state !== 'terminated'));
    const i = n?.instances.find((x) => x.instanceId === r.instanceId);
    if (!n || !i) throw ccRefusal('InstanceNotFound', `instance ${r.instanceId} is not known`);
    if (i.state !== 'running') throw ccRefusal('InstanceNotPausable', `instance ${r.instanceId} on node ${n.host} cannot be paused: it is ${i.state}`);
    const previouslyPaused = i.paused === true;
    if (r.paused) {
      i.paused = true;
      i.hypervisorState = 'suspended';
    } else {
      delete i.paused;
      i.hypervisorState = 'running';
    }
    return { instanceId: i.instanceId, host: n.host, state: i.state, paused: r.paused, previouslyPaused };
  }

  /** Powers on shut-off instances on one node, as the CC does (cc/service.ts startOnHost); per-instance results. */
  private start(partition: string, r: ClcCcRequest<'ccStartInstances'>): unknown {
    const n = this.inPartition(partition).find((x) => x.host === r.onHost);
    if (!n) throw ccRefusal('NodeNotFound', `node ${r.onHost} is not registered in partition ${partition}`);
    if (!n.reachable) throw ccRefusal('NodeUnreachable', `node ${n.host} is unreachable: ECONNREFUSED`);
    const started: CcInstance[] = [];
    const failed: { instanceId: string; code: string; message: string }[] = [];
    for (const instanceId of r.instanceIds) {
      const i = n.instances.find((x) => x.instanceId === instanceId && x.state !== 'terminated');
      if (!i) failed.push({ instanceId, code: 'InstanceNotFound', message: `instance ${instanceId} is not on node ${n.host}` });
      else if (i.state !== 'stopped' && i.state !== 'running') failed.push({ instanceId, code: 'InstanceNotStartable', message: `it is ${i.state}` });
      else if (i.state === 'stopped' && n.nodeState === 'disabled') failed.push({ instanceId, code: 'NodeDisabled', message: `node ${n.host} is disabled` });
      else {
        i.state = 'running';
        i.hypervisorState = 'running';
        started.push(structuredClone(i));
      }
    }
    return { started, failed };
  }

  private modify(partition: string, r: ClcCcRequest<'ccModifyNode'>): unknown {
    const n = this.inPartition(partition).find((x) => x.host === r.host);
    if (!n) throw ClcErrors.withMessage('InvalidHost.NotFound', `node ${r.host} is not registered in partition ${partition}`, { partition, delivered: 'yes' });
    const previousState = n.nodeState;
    n.nodeState = r.stateName;
    return { previousState, node: this.ccNode(n), matrix: this.matrix(partition, r.vmTypes) };
  }

  /** As the NC decides (nc/quarantine.ts), its refusals as the CLC's adapter translates them. */
  private quarantine(partition: string, r: ClcCcRequest<'ccQuarantineNode'>): unknown {
    const n = this.inPartition(partition).find((x) => x.host === r.host);
    if (!n) throw ClcErrors.withMessage('InvalidHost.NotFound', `node ${r.host} is not registered in partition ${partition}`, { partition, delivered: 'yes' });
    if (!n.reachable) throw ClcErrors.make('ServiceUnavailable', { partition, delivered: 'no', detail: `node ${n.host} is unreachable` });
    const previousState = n.nodeState;
    const previousQuarantine = n.quarantine;
    if (r.quarantined && previousQuarantine) throw ClcErrors.withMessage('NodeQuarantined', `node ${n.host} is quarantined since ${previousQuarantine.since}: already`, { partition, delivered: 'yes' });
    if (!r.quarantined && !previousQuarantine) throw ClcErrors.withMessage('NodeNotQuarantined', `node ${n.host} is not quarantined`, { partition, delivered: 'yes' });
    if (r.quarantined) {
      n.quarantine = { since: this.now(), reason: r.reason };
      n.nodeState = 'disabled';
    } else {
      delete n.quarantine;
    }
    return { previousState, ...(previousQuarantine ? { previousQuarantine } : {}), node: this.ccNode(n), matrix: this.matrix(partition, r.vmTypes) };
  }

  // ---- live migration, as the CC answers it (cc/README.md's codes) ----

  private activeItemOf(instanceId: string): string | undefined {
    return this.activePlans().find((p) => p.plan.items.some((i) => i.instanceId === instanceId && !isFinal(i.state)))?.plan.migrationId;
  }

  private migrate(partition: string, r: ClcCcRequest<'ccMigrateInstances'>): unknown {
    if ((r.sourceHost === undefined) === (r.instanceId === undefined)) throw ccRefusal('InvalidParameterCombination', 'give sourceHost or instanceId');
    const nodes = this.inPartition(partition);
    const unknownDest = r.destinations.find((d) => !nodes.some((n) => n.host === d));
    if (unknownDest !== undefined) throw ccRefusal('NodeNotFound', `node ${unknownDest} is not registered in partition ${partition}`);
    let source: FakeNode;
    let candidates: CcInstance[];
    if (r.sourceHost !== undefined) {
      const found = nodes.find((n) => n.host === r.sourceHost);
      if (!found) throw ccRefusal('NodeNotFound', `node ${r.sourceHost} is not registered in partition ${partition}`);
      source = found;
      if (!source.reachable) throw ccRefusal('NodeUnreachable', `node ${source.host} is unreachable: ECONNREFUSED`);
      const draining = this.activePlans().find((p) => p.plan.source === source.host && p.plan.request.kind === 'drain');
      if (draining) throw ccRefusal('MigrationInProgress', `node ${source.host} is already being migrated by ${draining.plan.migrationId}`);
      candidates = source.instances.filter((i) => i.state === 'running' && this.activeItemOf(i.instanceId) === undefined);
      if (candidates.length === 0) throw ccRefusal('NothingToMigrate', `node ${source.host} runs no instance that could be migrated`);
    } else {
      const holder = nodes.find((n) => n.instances.some((i) => i.instanceId === r.instanceId));
      const inst = holder?.instances.find((i) => i.instanceId === r.instanceId);
      if (!holder || !inst) throw ccRefusal('InstanceNotFound', `instance ${r.instanceId} is not known in partition ${partition}`);
      if (inst.state !== 'running') throw ccRefusal('InstanceNotRunning', `instance ${inst.instanceId} is ${inst.state}; only running instances can be migrated`);
      const busy = this.activeItemOf(inst.instanceId);
      if (busy) throw ccRefusal('MigrationInProgress', `instance ${inst.instanceId} is already being migrated by ${busy}`);
      source = holder;
      candidates = [inst];
    }
    const named = new Set(r.destinations);
    if (r.allowHosts && named.has(source.host)) {
      throw ccRefusal('DestinationIsSource', `destination ${source.host} is the source of the migration`);
    }
    const eligible = nodes.filter((n) => n.host !== source.host && n.reachable && (
      named.size === 0 ? n.nodeState === 'enabled' : r.allowHosts ? named.has(n.host) : n.nodeState === 'enabled' && !named.has(n.host)));
    if (eligible.length === 0) {
      throw ccRefusal('NoEligibleDestination', `no destination is eligible for instances of node ${source.host}: every allowed node is disabled, unreachable or the source`);
    }
    const extra = new Map<string, Resources>();
    const placed: { inst: CcInstance; dest: string }[] = [];
    const unplaced: { instanceId: string; reason: 'too-large' | 'insufficient-capacity' }[] = [];
    for (const inst of candidates) {
      const dest = eligible.find((n) => !this.wholeReserved(n.host) && fits(inst.vmType, sub(this.free(n), extra.get(n.host) ?? ZERO)));
      if (dest) {
        placed.push({ inst, dest: dest.host });
        extra.set(dest.host, add(extra.get(dest.host) ?? ZERO, inst.vmType));
      } else {
        unplaced.push({ instanceId: inst.instanceId, reason: eligible.some((n) => fits(inst.vmType, n.capacity)) ? 'insufficient-capacity' : 'too-large' });
      }
    }
    if (unplaced.length > 0 && (!r.partial || placed.length === 0)) {
      throw ccRefusal('InsufficientCapacityForMigration',
        `${unplaced.length} of ${candidates.length} instances cannot be placed: ${unplaced.map((u) => `${u.instanceId} (${u.reason})`).join(', ')}; nothing was changed (partial migration places what fits)`);
    }
    const migrationId = `mig-${(++this.migrationSeq).toString(16).padStart(8, '0')}`;
    const item = (inst: CcInstance, destination: string, state: ItemState, error?: string): PlanItem => ({
      instanceId: inst.instanceId, vmType: inst.vmType, destination, state, attempts: destination === '' ? 0 : 1,
      queuedAt: this.now(), ...(error !== undefined ? { error, endedAt: this.now() } : {}),
    });
    const plan: MigrationPlan = {
      migrationId, source: source.host, createdAt: this.now(),
      request: { kind: r.sourceHost !== undefined ? 'drain' : 'instance', destinations: [...r.destinations], allowHosts: r.allowHosts, reserveDestinations: r.reserveDestinations },
      limits: LIMITS, timeouts: TIMEOUTS, cancelRequested: false,
      items: [
        ...placed.map((p) => item(p.inst, p.dest, 'queued')),
        ...unplaced.map((u) => item(candidates.find((c) => c.instanceId === u.instanceId) as CcInstance, '', 'failed', `not placed: ${u.reason}`)),
      ],
    };
    this.plans.push({ partition, plan, reservedHosts: r.reserveDestinations ? [...new Set(placed.map((p) => p.dest))] : [] });
    for (const p of placed) {
      p.inst.migrationSource = source.host;
      p.inst.migrationDestination = p.dest;
    }
    return { migrationId, plan: structuredClone(plan), unplaced, matrix: this.matrix(partition, r.vmTypes) };
  }

  private described(p: FakePlan): unknown {
    return { ...structuredClone(p.plan), finished: p.plan.items.every((i) => isFinal(i.state)), sourceReachable: this.node(p.plan.source)?.reachable ?? false };
  }

  private cancel(partition: string, r: ClcCcRequest<'ccCancelMigration'>): unknown {
    const p = this.plans.find((x) => x.partition === partition && x.plan.migrationId === r.migrationId);
    if (!p) throw ccRefusal('MigrationNotFound', `migration ${r.migrationId} is not known in partition ${partition}`);
    if (p.plan.items.every((i) => isFinal(i.state))) throw ccRefusal('MigrationAlreadyFinished', `migration ${r.migrationId} has already finished`);
    const plan = p.plan as { -readonly [K in keyof MigrationPlan]: MigrationPlan[K] };
    plan.cancelRequested = true;
    for (const item of plan.items) {
      if (isFinal(item.state) || item.state === 'cleaning') continue;
      this.settle(p, item, 'cancelled', 'cancelled by CancelMigration');
    }
    return { plan: this.described(p) };
  }

  private itemInstance(p: FakePlan, item: PlanItem): CcInstance | undefined {
    return this.node(p.plan.source)?.instances.find((i) => i.instanceId === item.instanceId);
  }

  /** Ends an item that did not move: the instance stays on its source, no longer migrating. */
  private settle(p: FakePlan, item: PlanItem, state: ItemState, error: string): void {
    const m = item as { -readonly [K in keyof PlanItem]: PlanItem[K] };
    m.state = state;
    m.error = error;
    m.endedAt = this.now();
    const inst = this.itemInstance(p, item);
    if (inst) {
      inst.migrationState = 'none';
      inst.migrationSource = '';
      inst.migrationDestination = '';
    }
  }

  private advanceItem(p: FakePlan, item: PlanItem): void {
    const m = item as { -readonly [K in keyof PlanItem]: PlanItem[K] };
    if (isFinal(m.state)) return;
    const inst = this.itemInstance(p, item);
    const total = m.vmType.memoryMiB * BYTES_PER_MIB;
    if (m.state === 'migrating' && this.failing.has(m.instanceId)) {
      this.settle(p, item, 'rolled-back', `destination ${m.destination} stopped answering; rolled back`);
      return;
    }
    const next = NEXT[m.state];
    if (!next) return;
    m.state = next;
    if (next === 'preparing') m.startedAt = this.now();
    if (next === 'migrating') m.progress = { bytesTotal: total, bytesTransferred: total / 2, bytesRemaining: total / 2, iteration: 1 };
    if (next === 'cleaning') m.progress = { bytesTotal: total, bytesTransferred: total, bytesRemaining: 0, iteration: 2 };
    if (inst && next !== 'completed') inst.migrationState = next as MigrationState;
    if (next === 'completed') {
      m.endedAt = this.now();
      m.stats = { elapsedMs: this.now() - (m.startedAt ?? this.now()), downtimeMs: 42, bytesTransferred: total, iterations: 2 };
      const source = this.node(p.plan.source);
      const dest = this.node(m.destination);
      if (source && dest && inst) {
        source.instances = source.instances.filter((i) => i.instanceId !== inst.instanceId);
        dest.instances.push({ ...inst, host: dest.host, migrationState: 'none', migrationSource: '', migrationDestination: '' });
      }
    }
  }
}

function scale(r: Resources, k: number): Resources {
  return { cores: r.cores * k, memoryMiB: r.memoryMiB * k, diskGiB: r.diskGiB * k };
}

/** Two partitions of two nodes each; every test gets its own. */
export function twoZoneCloud(): FakeClusters {
  return new FakeClusters({
    cluster01: [{ host: '127.0.12.11' }, { host: '127.0.12.12' }],
    cluster02: [{ host: '127.0.12.21' }, { host: '127.0.12.22' }],
  });
}
