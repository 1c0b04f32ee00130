/**
 * A hand-written fake of the CC's narrow NodeClient interface: a few in-memory NCs that keep
 * their own truth (node state, capacity, instances) and refuse the way real NCs do, already
 * translated into CcErrors codes as the real adapter would. No mocking library.
 */
import type { NodeCallOptions, NodeClient } from '../../cc/nodeClient.js';
import { CcErrors } from '../../cc/errors.js';
import type { FerryError } from '../../shared/errors/registry.js';
import { add, fits, sub, ZERO, type Resources } from '../../shared/model/resources.js';
import type { NodeState } from '../../shared/protocol/common.js';
import type { NcInstance, NcNode, NcRequest, NcResponse } from '../../shared/protocol/ncProtocol.js';

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
}

export interface Call {
  readonly host: string;
  readonly op: 'describe' | 'run' | 'terminate' | 'modify';
  readonly instanceId?: string;
}

export class FakeNodes implements NodeClient {
  readonly ncs = new Map<string, FakeNc>();
  readonly calls: Call[] = [];
  /** When set, awaited after an operation is carried out and before its answer returns (a slow reply). */
  gate: ((call: Call) => Promise<void>) | undefined;

  add(host: string, capacity: Resources, init: Partial<FakeNc> = {}): FakeNc {
    const nc: FakeNc = { host, nodeState: 'enabled', healthy: true, capacity, instances: [], link: 'up', dropReplies: 0, ...init };
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
    const created = { ...instance(req.instanceId, req.vmType), reservationId: req.reservationId, imageId: req.imageId, ownerId: req.ownerId, launchTime: req.launchTime };
    nc.instances.push(created);
    return this.leave(nc, call, created);
  }

  async terminateInstance(host: string, instanceId: string): Promise<NcResponse<'ncTerminateInstance'>> {
    const call: Call = { host, op: 'terminate', instanceId };
    const nc = await this.enter(call);
    const i = nc.instances.find((x) => x.instanceId === instanceId);
    if (!i) throw CcErrors.withMessage('InstanceNotFound', `instance ${instanceId} is not on node ${host}`, { host });
    const previousState = i.state;
    i.state = 'terminated';
    return this.leave(nc, call, { instanceId, previousState, currentState: 'terminated' as const });
  }

  async modifyNode(host: string, stateName: NodeState): Promise<NcResponse<'ncModifyNode'>> {
    const call: Call = { host, op: 'modify' };
    const nc = await this.enter(call);
    const previousState = nc.nodeState;
    nc.nodeState = stateName;
    return this.leave(nc, call, { previousState, node: report(nc) });
  }
}

function admit(nc: FakeNc, vmType: Resources): FerryError | undefined {
  if (nc.nodeState === 'disabled') return CcErrors.make('NodeDisabled', { host: nc.host });
  if (!nc.healthy) return CcErrors.make('NodeUnhealthy', { host: nc.host, detail: 'hypervisor down' });
  if (!fits(vmType, sub(nc.capacity, used(nc)))) return CcErrors.make('NodeFull', { host: nc.host, detail: 'no room' });
  return undefined;
}

function used(nc: FakeNc): Resources {
  return nc.instances.filter((i) => i.state !== 'terminated').reduce<Resources>((a, i) => add(a, i.vmType), ZERO);
}

function report(nc: FakeNc): NcNode {
  return {
    host: nc.host, nodeState: nc.nodeState, healthy: nc.healthy, hypervisor: 'sim', capacity: nc.capacity,
    used: used(nc), instances: nc.instances.map((i) => ({ ...i })),
  };
}

export function instance(instanceId: string, vmType: NcInstance['vmType'] = SMALL): NcInstance {
  return {
    instanceId, reservationId: 'r-00000000', imageId: 'emi-00000001', ownerId: 'alice', vmType, state: 'running',
    hypervisorState: 'running', launchTime: 0, migrationState: 'none',
  };
}
