/** The node as ncDescribeResource reports it, built from the snapshot and the last observation. Pure. */
import { ZERO, type Resources } from '../shared/model/resources.js';
import type { Incoming, MigrationPlan } from '../shared/protocol/migrationProtocol.js';
import type { NcNode } from '../shared/protocol/ncProtocol.js';
import { instanceView, observedState, type Observation } from './instanceView.js';
import type { NcSnapshot } from './ncStore.js';
import { usedResources } from './usage.js';

export interface NodeViewInput {
  readonly host: string;
  readonly snapshot: NcSnapshot;
  readonly healthy: boolean;
  /** The hypervisor kind it reported, or the configured one before it was ever reached. */
  readonly hypervisor: string;
  readonly capacity: Resources | undefined;
  readonly observation: Observation | undefined;
  /** Plans this node is the source of, as the migration item executor shows them (live progress included). */
  readonly plans: readonly MigrationPlan[];
  readonly incoming: readonly Incoming[];
}

export function nodeView(v: NodeViewInput): NcNode {
  const records = Object.values(v.snapshot.instances).sort((a, b) => a.instanceId.localeCompare(b.instanceId));
  return {
    host: v.host,
    nodeState: v.snapshot.nodeState,
    healthy: v.healthy,
    hypervisor: v.hypervisor,
    capacity: { ...(v.capacity ?? ZERO) },
    used: usedResources(v.snapshot.instances, v.observation, v.snapshot.incoming),
    instances: records.map((r) => instanceView(r, observedState(v.observation, r.instanceId))),
    plans: [...v.plans],
    incoming: [...v.incoming],
    ...(v.snapshot.lostStore !== undefined ? { lostStore: structuredClone(v.snapshot.lostStore) } : {}),
    ...(v.snapshot.quarantine !== undefined ? { quarantine: { ...v.snapshot.quarantine } } : {}),
  };
}
