/**
 * The gate as one request sees it (an admin request, or one change host HA makes): the tickets it
 * took (all left once its reply is written, by clc/api/app.ts; once its work ends, for HA) and a
 * Clusters that sends a change only into a partition the request holds. So no change can skip the
 * gate, and one that tries is our bug (InternalError), caught by the tests.
 */
import { CHANGE_OPS, type ClcCcOp, type ClcCcRequest, type ClcCcResponse } from '../clusters/ccContract.js';
import type { Clusters } from '../clusters/clusters.js';
import { ClcErrors } from './errors.js';
import type { GateKind } from './gate.js';
import type { PartitionGate, Ticket } from './partitionGate.js';

export interface RequestGate {
  /** Enters the gate for this request, claiming `partitions` (narrow them once known). */
  enter(kind: GateKind, label: string, partitions: readonly string[]): Ticket;
  /** Whether one of this request's tickets is granted and claims `partition`. */
  holds(partition: string): boolean;
  /** Leaves every ticket of this request: called once its reply (or error) has been written. */
  leaveAll(): void;
  /** Waits for this request's turn to send a change into `partition` (Ticket.sendTurn). */
  sendTurn(partition: string): Promise<void>;
}

export function openRequestGate(gate: PartitionGate): RequestGate {
  const tickets: Ticket[] = [];
  return {
    enter(kind, label, partitions) {
      const t = gate.enter(kind, label, partitions);
      tickets.push(t);
      return t;
    },
    holds: (p) => tickets.some((t) => t.holds(p)),
    sendTurn: async (p) => {
      await tickets.find((t) => t.holds(p))?.sendTurn(p);
    },
    leaveAll() {
      for (const t of tickets.splice(0)) t.leave();
    },
  };
}

/** `clusters` for one request: reads pass; a change needs a granted ticket for its partition. */
export function gatedClusters(clusters: Clusters, gate: RequestGate): Clusters {
  return {
    partitions: clusters.partitions,
    call<O extends ClcCcOp>(partition: string, op: O, req: ClcCcRequest<O>): Promise<ClcCcResponse<O>> {
      if (!CHANGE_OPS.has(op)) return clusters.call(partition, op, req);
      if (!gate.holds(partition)) {
        return Promise.reject(ClcErrors.make('InternalError', { detail: `${op} to partition ${partition} was about to be sent without holding its gate` }));
      }
      // Queued changes go out in the order they queued (PartitionGate.sendTurn).
      return gate.sendTurn(partition).then(() => clusters.call(partition, op, req));
    },
    // A read of each replica: never gated.
    ...(clusters.describeReplicas !== undefined ? { describeReplicas: clusters.describeReplicas.bind(clusters) } : {}),
  };
}
