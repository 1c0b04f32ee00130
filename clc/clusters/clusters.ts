/**
 * The CLC's narrow view of its cluster controllers (STYLE habit 4): which partitions exist and one
 * typed call into a partition's CC. The real adapter is ccClusters.ts; tests pass a hand-written fake.
 */
import type { FerryError } from '../../shared/errors/registry.js';
import type { ClcCcOp, ClcCcRequest, ClcCcResponse } from './ccContract.js';

/** One configured partition (= availability zone) and the CC that serves it. */
export interface PartitionInfo {
  readonly name: string;
  /** Its first CC URL (the one shown when no replica has answered yet). */
  readonly endpoint: string;
  /** Every CC replica's URL (issue 21), `endpoint` first; absent: `endpoint` alone. */
  readonly endpoints?: readonly string[];
}

export interface Clusters {
  /** Configured partitions, in configuration order (ties in placement go to the earlier one). */
  readonly partitions: readonly PartitionInfo[];
  /**
   * Calls `op` on the partition's CC. Rejects only with ClcErrors: ServiceUnavailable (field
   * `delivered`: 'no' when the CC cannot have acted, 'maybe' otherwise), or the CC's refusal
   * translated by ccFaults.ts (InvalidHost.NotFound, InvalidInstanceID.NotFound,
   * InsufficientInstanceCapacity, the live-migration refusals, InternalError).
   * NotLeader (issue 21): a change (CC_EPOCH_OPS) from a replica that does not lead is not sent
   * (`delivered` 'no'), and one the CC refused as a deposed leader's (StaleLeaderEpoch) did nothing.
   */
  call<O extends ClcCcOp>(partition: string, op: O, req: ClcCcRequest<O>): Promise<ClcCcResponse<O>>;
  /**
   * Asks each of the partition's CC replicas (issue 21) which it is and whether it leads
   * (ccDescribeReplica), in the order configured; a replica that does not answer comes back with its
   * failure. Absent: an adapter that knows no replicas (DescribeServices then shows the partition alone).
   */
  describeReplicas?(partition: string): Promise<readonly ReplicaAnswer[]>;
}

/** One CC replica's answer to ccDescribeReplica, or why it gave none. */
export type ReplicaAnswer =
  | { readonly url: string; readonly report: ClcCcResponse<'ccDescribeReplica'> }
  | { readonly url: string; readonly failure: FerryError };

export function partitionNames(clusters: Clusters): string[] {
  return clusters.partitions.map((p) => p.name);
}

export function hasPartition(clusters: Clusters, name: string): boolean {
  return clusters.partitions.some((p) => p.name === name);
}
