/**
 * A hand-written fake of the CLC's narrow Clusters interface: partitions of nodes held in memory,
 * answering the CC contract (every answer is checked against CC_OPS), recording every call, and
 * able to play an unreachable CC. No mocking library.
 */
import { ClcErrors } from '../../clc/api/errors.js';
import type { Clusters, PartitionInfo } from '../../clc/clusters/clusters.js';
import { resourceMatrix } from '../../shared/model/resourceMatrix.js';
import { countFitting, sub, sum, type Resources } from '../../shared/model/resources.js';
import type { VmType } from '../../shared/model/vmTypes.js';
import { CC_OPS, type CcInstance, type CcNode, type CcOp, type CcRequest, type CcResponse } from '../../shared/protocol/ccProtocol.js';
import type { NodeState } from '../../shared/protocol/common.js';

export interface FakeNodeSpec {
  readonly host: string;
  readonly capacity?: Resources;
  readonly nodeState?: NodeState;
  readonly reachable?: boolean;
}

interface FakeNode {
  host: string;
  partition: string;
  capacity: Resources;
  nodeState: NodeState;
  reachable: boolean;
  instances: CcInstance[];
}

export interface RecordedCall {
  readonly partition: string;
  readonly op: CcOp;
  readonly req: unknown;
}

/** Operations that change something in a CC. */
export const MUTATING_OPS: readonly CcOp[] = ['ccRunInstances', 'ccTerminateInstances', 'ccModifyNode'];

export const DEFAULT_CAPACITY: Resources = { cores: 4, memoryMiB: 4096, diskGiB: 100 };

export class FakeClusters implements Clusters {
  readonly partitions: readonly PartitionInfo[];
  readonly calls: RecordedCall[] = [];
  /** Partitions whose CC plays unreachable (connection refused). */
  readonly down = new Set<string>();
  private readonly nodes: FakeNode[] = [];

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

  mutatingCalls(): RecordedCall[] {
    return this.calls.filter((c) => MUTATING_OPS.includes(c.op));
  }

  /** A snapshot of everything the fake CCs hold, to assert that nothing changed. */
  snapshot(): string {
    return JSON.stringify(this.nodes);
  }

  node(host: string): FakeNode | undefined {
    return this.nodes.find((n) => n.host === host);
  }

  /** Lets a test move an instance along (e.g. pending → running) as an NC would. */
  setInstanceState(instanceId: string, state: CcInstance['state']): void {
    for (const n of this.nodes) for (const i of n.instances) if (i.instanceId === instanceId) i.state = state;
  }

  /** Forgets an instance, as an NC that dropped its tombstone would. */
  dropInstance(instanceId: string): void {
    for (const n of this.nodes) n.instances = n.instances.filter((i) => i.instanceId !== instanceId);
  }

  async call<O extends CcOp>(partition: string, op: O, req: CcRequest<O>): Promise<CcResponse<O>> {
    this.calls.push({ partition, op, req: structuredClone(req) });
    CC_OPS[op].request.parse(req);
    if (!this.partitions.some((p) => p.name === partition)) throw new Error(`fake: unknown partition ${partition}`);
    if (this.down.has(partition)) {
      throw ClcErrors.make('ServiceUnavailable', {
        partition, delivered: 'no', detail: `the cluster controller of partition ${partition} is unreachable (ECONNREFUSED)`,
      });
    }
    const res = this.answer(partition, op, req as never);
    return CC_OPS[op].response.parse(res) as CcResponse<O>;
  }

  private inPartition(partition: string): FakeNode[] {
    return this.nodes.filter((n) => n.partition === partition);
  }

  private used(n: FakeNode): Resources {
    return sum(n.instances.filter((i) => i.state !== 'terminated').map((i) => i.vmType));
  }

  private ccNode(n: FakeNode): CcNode {
    return {
      host: n.host, partition: n.partition, nodeState: n.nodeState, reachable: n.reachable, healthy: true,
      lastSeen: 1_000, capacity: n.capacity, used: this.used(n), instances: structuredClone(n.instances).map(({ host: _h, partition: _p, ...i }) => i),
    };
  }

  private matrix(partition: string, vmTypes: readonly VmType[]) {
    return resourceMatrix(this.inPartition(partition).map((n) => ({
      capacity: n.capacity, used: this.used(n), schedulable: n.nodeState === 'enabled' && n.reachable,
    })), vmTypes);
  }

  private answer(partition: string, op: CcOp, req: never): unknown {
    switch (op) {
      case 'ccDescribeNodes':
        return { partition, nodes: this.inPartition(partition).map((n) => this.ccNode(n)) };
      case 'ccDescribeResources':
        return { partition, matrix: this.matrix(partition, (req as CcRequest<'ccDescribeResources'>).vmTypes) };
      case 'ccDescribeInstances':
        return { partition, instances: this.inPartition(partition).flatMap((n) => structuredClone(n.instances)) };
      case 'ccRunInstances':
        return this.run(partition, req as CcRequest<'ccRunInstances'>);
      case 'ccTerminateInstances':
        return this.terminate(partition, req as CcRequest<'ccTerminateInstances'>);
      case 'ccModifyNode':
        return this.modify(partition, req as CcRequest<'ccModifyNode'>);
      default:
        throw new Error(`fake: no ${String(op)}`);
    }
  }

  private run(partition: string, r: CcRequest<'ccRunInstances'>): unknown {
    const plan: FakeNode[] = [];
    const extra = new Map<FakeNode, number>();
    for (let k = 0; k < r.instanceIds.length; k++) {
      const n = this.inPartition(partition).find((x) => x.nodeState === 'enabled' && x.reachable
        && countFitting(r.vmType, sub(sub(x.capacity, this.used(x)), scale(r.vmType, extra.get(x) ?? 0))) > 0);
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
        host: n.host, partition,
      };
      n.instances.push(inst);
      return structuredClone(inst);
    });
    return { instances: started };
  }

  private terminate(partition: string, r: CcRequest<'ccTerminateInstances'>): unknown {
    const all = this.inPartition(partition).flatMap((n) => n.instances);
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

  private modify(partition: string, r: CcRequest<'ccModifyNode'>): unknown {
    const n = this.inPartition(partition).find((x) => x.host === r.host);
    if (!n) throw ClcErrors.withMessage('InvalidHost.NotFound', `node ${r.host} is not registered in partition ${partition}`, { partition, delivered: 'yes' });
    const previousState = n.nodeState;
    n.nodeState = r.stateName;
    return { previousState, node: this.ccNode(n), matrix: this.matrix(partition, r.vmTypes) };
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
