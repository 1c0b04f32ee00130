/**
 * A hand-written fake of the CC's narrow NodeClient interface: a few in-memory NCs that keep
 * their own truth (node state, capacity, instances) and refuse the way real NCs do, already
 * translated into CcErrors codes as the real adapter would. No mocking library.
 */
import type { NcMigrateResponse, NodeCallOptions, NodeClient } from '../../cc/nodeClient.js';
import { CcErrors } from '../../cc/errors.js';
import type { FerryError } from '../../shared/errors/registry.js';
import { fits, sub, type Resources } from '../../shared/model/resources.js';
import type { NodeState } from '../../shared/protocol/common.js';
import type { Incoming, MigrationPlan, NcMigrateRequest } from '../../shared/protocol/migrationProtocol.js';
import type { NcInstance, NcNode, NcRequest, NcResponse, Quarantine, TerminateReason } from '../../shared/protocol/ncProtocol.js';
import { finishCleaning, handleMigrate, switchOver, usedBy, type MigrationWorld } from './fakeMigrations.js';

export const SMALL = { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 } as const;
export const LARGE = { name: 'm1.large', cores: 2, memoryMiB: 512, diskGiB: 10 } as const;

/** Room for n m1.small instances. */
export function slots(n: number): Resources {
  return { cores: n, memoryMiB: 256 * n, diskGiB: 5 * n };
}

/** 'down': connection refused, the request never arrives. */
export type Link = 'up' | 'down';

export interface FakeNc {
  host: string;
  nodeState: NodeState;
  healthy: boolean;
  capacity: Resources;
  instances: NcInstance[];
  link: Link;
  /** The next this-many requests are carried out but their answers are lost (a timeout). */
  dropReplies: number;
  /** Migration plans this NC is the source of; incoming records it holds as a destination. */
  plans: MigrationPlan[];
  incoming: Incoming[];
  /** When set and returning an error, ncMigrateInstances is refused with it before anything is done. */
  refuseMigrate: ((req: NcMigrateRequest) => FerryError | undefined) | undefined;
  /** An administrator's quarantine (issue 18), as the NC reports it. */
  quarantine?: Quarantine;
}

export interface Call {
  readonly host: string;
  readonly op: 'describe' | 'run' | 'terminate' | 'start' | 'modify' | 'quarantine' | 'migrate' | 'activity' | 'attach' | 'detach' | 'pause' | 'stop' | 'reboot';
  readonly instanceId?: string;
  /** For migrate: the action, with the role when it has one (prepare-destination, rollback-source, …). */
  readonly action?: string;
  readonly migrationId?: string;
}

/** auto: a committed migration completes on its own shortly after; manual: the test drives it. */
export type MigrationMode = 'auto' | 'manual';

export class FakeNodes implements NodeClient {
  readonly ncs = new Map<string, FakeNc>();
  readonly calls: Call[] = [];
  /** When set, awaited after an operation is carried out and before its answer returns (a slow reply). */
  gate: ((call: Call) => Promise<void>) | undefined;
  /** The NCs' clock (the harness sets it to its ManualClock). */
  now: () => number = () => 0;
  migrationMode: MigrationMode = 'auto';
  /** A destination's record while the VM streams in: the real NC keeps 'ready' (it is not told); 'migrating' is legal too. */
  receivingState: 'ready' | 'migrating' = 'ready';
  /** The NCs' ccNodeEvent notices go here (the harness wires it to the CC). */
  onEvent: ((ev: { host: string; migrationId: string; instanceId: string; kind: 'migration' }) => Promise<unknown>) | undefined;
  /** Every commit the fake accepted, with the endpoint it was given. */
  readonly commits: { migrationId: string; instanceId: string; destination: string; destinationUri: string }[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  /** What any neighbour sees of a suspect host on shared storage (host HA); absent: 'unknown'. */
  readonly activity = new Map<string, 'active' | 'inactive'>();

  /** The hypervisors and NCs as the migration handlers see them. */
  readonly world: MigrationWorld = {
    nc: (host) => this.nc(host),
    now: () => this.now(),
    started: (source, migrationId, instanceId) => {
      const item = this.nc(source).plans.find((p) => p.migrationId === migrationId)?.items.find((i) => i.instanceId === instanceId);
      const record = item ? this.ncs.get(item.destination)?.incoming.find((r) => r.migrationId === migrationId && r.instanceId === instanceId) : undefined;
      if (record) record.state = this.receivingState;
      if (this.migrationMode === 'auto') {
        this.later(() => {
          if (switchOver(this.world, source, migrationId, instanceId)) this.later(() => finishCleaning(this.world, source, migrationId, instanceId));
        });
      }
    },
    notify: (host, migrationId, instanceId) => {
      const sent = this.onEvent?.({ host, migrationId, instanceId, kind: 'migration' });
      if (sent) this.track(sent.catch(() => undefined));
    },
  };

  add(host: string, capacity: Resources, init: Partial<FakeNc> = {}): FakeNc {
    const nc: FakeNc = {
      host, nodeState: 'enabled', healthy: true, capacity, instances: [], link: 'up', dropReplies: 0, plans: [], incoming: [], refuseMigrate: undefined, ...init,
    };
    this.ncs.set(host, nc);
    return nc;
  }

  nc(host: string): FakeNc {
    const nc = this.ncs.get(host);
    if (!nc) throw new Error(`no fake NC ${host}`);
    return nc;
  }

  /** Starts an instance on an NC behind the CC's back (another actor, or since the last poll). */
  sneak(host: string, instanceId: string, vmType: NcInstance['vmType'] = SMALL): void {
    this.nc(host).instances.push(instance(instanceId, vmType));
  }

  live(host: string): NcInstance[] {
    return this.nc(host).instances.filter((i) => i.state !== 'terminated');
  }

  callsOf(op: Call['op']): Call[] {
    return this.calls.filter((c) => c.op === op);
  }

  /** Migrate calls as `action@host` (optionally only those of one instance). */
  migrateCalls(instanceId?: string): string[] {
    return this.callsOf('migrate').filter((c) => instanceId === undefined || c.instanceId === instanceId).map((c) => `${c.action}@${c.host}`);
  }

  /** The item as its source NC holds it. */
  item(migrationId: string, instanceId: string): MigrationPlan['items'][number] | undefined {
    for (const nc of this.ncs.values()) {
      const item = nc.plans.find((p) => p.migrationId === migrationId)?.items.find((i) => i.instanceId === instanceId);
      if (item) return item;
    }
    return undefined;
  }

  /** Resolves once every background step (auto migrations, NC notices) has run. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private later(fn: () => void): void {
    this.track(new Promise<void>((resolve) => setImmediate(() => { fn(); resolve(); })));
  }

  private track(p: Promise<unknown>): void {
    const t = p.finally(() => this.pending.delete(t));
    this.pending.add(t);
  }

  private async enter(call: Call): Promise<FakeNc> {
    this.calls.push(call);
    await Promise.resolve(); // a real call never answers synchronously
    const nc = this.nc(call.host);
    if (nc.link === 'down') throw CcErrors.make('NodeUnreachable', { host: nc.host, detail: 'ECONNREFUSED', maybeDelivered: false });
    return nc;
  }

  private async leave<T>(nc: FakeNc, call: Call, result: T): Promise<T> {
    if (this.gate) await this.gate(call);
    if (nc.dropReplies > 0) {
      nc.dropReplies--;
      throw CcErrors.make('NodeUnreachable', { host: nc.host, detail: 'timed out', maybeDelivered: true });
    }
    return result;
  }

  async describe(host: string, _opts?: NodeCallOptions): Promise<NcNode> {
    const call: Call = { host, op: 'describe' };
    const nc = await this.enter(call);
    return this.leave(nc, call, report(nc));
  }

  async runInstance(host: string, req: NcRequest<'ncRunInstance'>): Promise<NcInstance> {
    const call: Call = { host, op: 'run', instanceId: req.instanceId };
    const nc = await this.enter(call);
    const existing = nc.instances.find((i) => i.instanceId === req.instanceId);
    if (existing) {
      if (existing.reservationId !== req.reservationId) throw CcErrors.make('InstanceExists', { instanceId: req.instanceId, host });
      return this.leave(nc, call, existing);
    }
    const refusal = admit(nc, req.vmType);
    if (refusal) throw refusal;
    const created: NcInstance = { ...instance(req.instanceId, req.vmType), reservationId: req.reservationId, imageId: req.imageId, ownerId: req.ownerId, launchTime: req.launchTime };
    // A drain's cold move (issue 18): defined, stopped as its user left it.
    if (req.stopped === true) Object.assign(created, { state: 'stopped', hypervisorState: 'shutoff', userStopped: true });
    // Its volumes come in its definition (issue 18), attached as the NC reports them once the domain exists.
    if (req.volumes && req.volumes.length > 0) created.volumes = req.volumes.map((v) => ({ ...v, status: 'attached' as const }));
    if (req.moved !== undefined) created.moved = { ...req.moved };
    nc.instances.push(created);
    return this.leave(nc, call, created);
  }

  async terminateInstance(host: string, instanceId: string, reason?: TerminateReason): Promise<NcResponse<'ncTerminateInstance'>> {
    const call: Call = { host, op: 'terminate', instanceId };
    const nc = await this.enter(call);
    const i = nc.instances.find((x) => x.instanceId === instanceId);
    if (!i) throw CcErrors.withMessage('InstanceNotFound', `instance ${instanceId} is not on node ${host}`, { host });
    // As the NC decides (termination.ts): a move forgets only a stopped copy.
    if (reason === 'move' && i.state !== 'stopped' && i.state !== 'terminated') {
      throw CcErrors.withMessage('InstanceStateConflict', `instance ${instanceId} on node ${host} cannot be forgotten by a move: it is ${i.state}`, { host });
    }
    const previousState = i.state;
    i.state = 'terminated';
    // As the NC keeps it (termination.ts noteEndedBy): a user's reason wins.
    if (reason !== undefined && i.endedBy !== 'user') i.endedBy = reason;
    return this.leave(nc, call, { instanceId, previousState, currentState: 'terminated' as const });
  }

  /** Stop as the NC does (stopDecision.ts): running → stopped by its user; a stopped one answers as is. */
  async stopInstance(host: string, req: NcRequest<'ncStopInstance'>): Promise<NcResponse<'ncStopInstance'>> {
    const call: Call = { host, op: 'stop', instanceId: req.instanceId };
    const nc = await this.enter(call);
    const i = nc.instances.find((x) => x.instanceId === req.instanceId && x.state !== 'terminated');
    if (!i) throw CcErrors.withMessage('InstanceNotFound', `instance ${req.instanceId} is not on node ${host}`, { host });
    const previousState = i.state;
    if (i.state !== 'running' && i.state !== 'stopped') {
      throw CcErrors.withMessage('InstanceStateConflict', `instance ${req.instanceId} on node ${host} cannot be stopped: it is ${i.state}`, { host });
    }
    i.state = 'stopped';
    i.hypervisorState = 'shutoff';
    i.userStopped = true;
    return this.leave(nc, call, { instance: { ...i }, previousState });
  }

  async rebootInstance(host: string, instanceId: string): Promise<NcResponse<'ncRebootInstance'>> {
    const call: Call = { host, op: 'reboot', instanceId };
    const nc = await this.enter(call);
    const i = nc.instances.find((x) => x.instanceId === instanceId && x.state !== 'terminated');
    if (!i) throw CcErrors.withMessage('InstanceNotFound', `instance ${instanceId} is not on node ${host}`, { host });
    if (i.state !== 'running') throw CcErrors.withMessage('InstanceStateConflict', `instance ${instanceId} on node ${host} cannot be rebooted: it is ${i.state}`, { host });
    return this.leave(nc, call, { instance: { ...i } });
  }

  async startInstance(host: string, instanceId: string, userStart = false): Promise<NcInstance> {
    const call: Call = { host, op: 'start', instanceId };
    const nc = await this.enter(call);
    const i = nc.instances.find((x) => x.instanceId === instanceId);
    if (!i) throw CcErrors.withMessage('InstanceNotFound', `instance ${instanceId} is not on node ${host}`, { host });
    if (i.state === 'running') {
      // As decideStart: a user's start of one whose stop never reached its domain clears the stop's mark.
      if (userStart) delete i.userStopped;
      return this.leave(nc, call, { ...i });
    }
    if (i.state !== 'stopped') throw CcErrors.withMessage('InstanceNotStartable', `instance ${instanceId} on node ${host} cannot be started: it is ${i.state}`, { host });
    if (i.userStopped === true && !userStart) throw CcErrors.withMessage('InstanceNotStartable', `instance ${instanceId} on node ${host} cannot be started: its user stopped it`, { host });
    if (nc.nodeState === 'disabled') throw CcErrors.make('NodeDisabled', { host });
    if (!nc.healthy) throw CcErrors.make('NodeUnhealthy', { host, detail: 'hypervisor down' });
    i.state = 'running';
    i.hypervisorState = 'running';
    delete i.userStopped;
    return this.leave(nc, call, { ...i });
  }

  async migrate(host: string, req: NcMigrateRequest, _opts?: NodeCallOptions): Promise<NcMigrateResponse> {
    const role = 'role' in req ? `-${req.role}` : '';
    const instanceId = req.action === 'prepare' ? (req.role === 'destination' ? req.incoming.instanceId : undefined) : req.instanceId;
    const call: Call = {
      host, op: 'migrate', action: `${req.action}${role}`, migrationId: req.action === 'prepare' && req.role === 'source' ? req.plan.migrationId : req.migrationId,
      ...(instanceId !== undefined ? { instanceId } : {}),
    };
    const nc = await this.enter(call);
    const refusal = nc.refuseMigrate?.(req);
    if (refusal) throw refusal;
    const res = handleMigrate(this.world, host, req);
    if (req.action === 'commit') this.commits.push({ migrationId: req.migrationId, instanceId: req.instanceId, destination: req.destination, destinationUri: req.destinationUri });
    return this.leave(nc, call, res);
  }

  async checkActivity(host: string, req: NcRequest<'ncCheckActivity'>, _opts?: NodeCallOptions): Promise<NcResponse<'ncCheckActivity'>> {
    const call: Call = { host, op: 'activity' };
    const nc = await this.enter(call);
    const outcome = this.activity.get(req.host) ?? 'unknown';
    return this.leave(nc, call, { host: req.host, outcome, detail: `${req.host} is ${outcome}`, newestWriteAt: null });
  }

  /** The NC's rules in short: a running instance here takes the volume; a device or volume taken is VolumeConflict. */
  async attachVolume(host: string, req: NcRequest<'ncAttachVolume'>): Promise<NcResponse<'ncAttachVolume'>> {
    const call: Call = { host, op: 'attach', instanceId: req.instanceId };
    const nc = await this.enter(call);
    const i = nc.instances.find((x) => x.instanceId === req.instanceId && x.state !== 'terminated');
    if (!i) throw CcErrors.withMessage('InstanceNotFound', `instance ${req.instanceId} is not on node ${host}`, { host });
    const taken = (i.volumes ?? []).find((v) => v.device === req.device && v.volumeId !== req.volumeId);
    if (taken) throw CcErrors.withMessage('VolumeConflict', `device ${req.device} holds volume ${taken.volumeId}`, { host });
    const attachment = { volumeId: req.volumeId, device: req.device, path: req.path, status: 'attached' as const };
    i.volumes = [...(i.volumes ?? []).filter((v) => v.volumeId !== req.volumeId), attachment];
    return this.leave(nc, call, { instanceId: req.instanceId, attachment });
  }

  async pauseInstance(host: string, req: NcRequest<'ncPauseInstance'>): Promise<NcResponse<'ncPauseInstance'>> {
    const call: Call = { host, op: 'pause', instanceId: req.instanceId };
    const nc = await this.enter(call);
    const i = nc.instances.find((x) => x.instanceId === req.instanceId && x.state !== 'terminated');
    if (!i) throw CcErrors.withMessage('InstanceNotFound', `instance ${req.instanceId} is not on node ${host}`, { host });
    const previouslyPaused = i.paused === true;
    if (req.paused) i.paused = true;
    else delete i.paused;
    return this.leave(nc, call, { instance: { ...i }, previouslyPaused });
  }

  async detachVolume(host: string, req: NcRequest<'ncDetachVolume'>): Promise<NcResponse<'ncDetachVolume'>> {
    const call: Call = { host, op: 'detach', instanceId: req.instanceId };
    const nc = await this.enter(call);
    const i = nc.instances.find((x) => x.instanceId === req.instanceId && x.state !== 'terminated');
    if (!i) throw CcErrors.withMessage('InstanceNotFound', `instance ${req.instanceId} is not on node ${host}`, { host });
    const v = (i.volumes ?? []).find((x) => x.volumeId === req.volumeId);
    if (!v) throw CcErrors.make('VolumeNotAttached', { volumeId: req.volumeId, instanceId: req.instanceId });
    i.volumes = (i.volumes ?? []).filter((x) => x.volumeId !== req.volumeId);
    return this.leave(nc, call, { instanceId: req.instanceId, attachment: { ...v, status: 'detached' as const } });
  }

  async modifyNode(host: string, stateName: NodeState): Promise<NcResponse<'ncModifyNode'>> {
    const call: Call = { host, op: 'modify' };
    const nc = await this.enter(call);
    const previousState = nc.nodeState;
    if (stateName === 'enabled' && nc.quarantine) throw CcErrors.make('NodeQuarantined', { host, since: String(nc.quarantine.since), detail: 'a quarantined node cannot be enabled' });
    nc.nodeState = stateName;
    return this.leave(nc, call, { previousState, node: report(nc) });
  }

  /** As the real NC decides (nc/quarantine.ts), without its migration check. */
  async quarantineNode(host: string, req: NcRequest<'ncQuarantineNode'>): Promise<NcResponse<'ncQuarantineNode'>> {
    const call: Call = { host, op: 'quarantine' };
    const nc = await this.enter(call);
    const previousState = nc.nodeState;
    const previousQuarantine = nc.quarantine;
    if (req.quarantined && previousQuarantine) throw CcErrors.make('NodeQuarantined', { host, since: String(previousQuarantine.since), detail: 'already quarantined' });
    if (!req.quarantined && !previousQuarantine) throw CcErrors.make('NodeNotQuarantined', { host, detail: 'nothing to lift' });
    if (req.quarantined) {
      nc.quarantine = { since: this.now(), reason: req.reason };
      nc.nodeState = 'disabled';
    } else {
      delete nc.quarantine;
    }
    return this.leave(nc, call, { previousState, ...(previousQuarantine ? { previousQuarantine } : {}), node: report(nc) });
  }
}

function admit(nc: FakeNc, vmType: Resources): FerryError | undefined {
  if (nc.nodeState === 'disabled') return CcErrors.make('NodeDisabled', { host: nc.host });
  if (!nc.healthy) return CcErrors.make('NodeUnhealthy', { host: nc.host, detail: 'hypervisor down' });
  if (!fits(vmType, sub(nc.capacity, usedBy(nc)))) return CcErrors.make('NodeFull', { host: nc.host, detail: 'no room' });
  return undefined;
}

function report(nc: FakeNc): NcNode {
  return {
    host: nc.host, nodeState: nc.nodeState, healthy: nc.healthy, hypervisor: 'sim', capacity: nc.capacity,
    used: usedBy(nc), instances: nc.instances.map((i) => ({ ...i })),
    plans: structuredClone(nc.plans), incoming: nc.incoming.map((r) => ({ ...r })),
    ...(nc.quarantine ? { quarantine: { ...nc.quarantine } } : {}),
  };
}

export function instance(instanceId: string, vmType: NcInstance['vmType'] = SMALL): NcInstance {
  return {
    instanceId, reservationId: 'r-00000000', imageId: 'emi-00000001', ownerId: 'alice', vmType, state: 'running',
    hypervisorState: 'running', launchTime: 0, migrationState: 'none',
  };
}
