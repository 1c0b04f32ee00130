/**
 * What a core operation (nodeState.ts, planMigration.ts, the lookups) needs, and nothing of who
 * asked: the admin API's ActionContext extends it with the caller (principal, origin, ids), and
 * host HA opens one of its own per change (`inGatedOperation`). Both take their tickets from the
 * same change gate.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import type { Store } from '../../shared/store/store.js';
import type { Clusters } from '../clusters/clusters.js';
import type { EventSink } from '../events/eventSink.js';
import type { ClcState } from '../state/clcStore.js';
import type { HaNodeHooks } from './nodeHooks.js';
import type { PartitionGate } from './partitionGate.js';
import { gatedClusters, openRequestGate, type RequestGate } from './requestGate.js';

export interface OperationContext {
  /** Reads go through freely; a change only into a partition this operation holds through `gate`. */
  readonly clusters: Clusters;
  /** This operation's place in the change gate (gate.ts); left once it has answered. */
  readonly gate: RequestGate;
  readonly store: Store<ClcState>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Host HA's say in node changes; absent when the CLC runs without HA, and in HA's own changes. */
  readonly haHooks?: HaNodeHooks;
  /** The event stream (clc/events): a change is recorded there before the operation answers; absent in unit tests. */
  readonly events?: EventSink;
  /** Who asked, as the event stream names them: the caller's access key, or 'ha'. */
  readonly actor?: string;
}

/** What every operation of a running CLC shares: the CCs (ungated), the one change gate, the store. */
export interface OperationBase {
  readonly clusters: Clusters;
  readonly gate: PartitionGate;
  readonly store: Store<ClcState>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly events?: EventSink;
  readonly actor?: string;
}

/** Runs `work` with tickets of its own in `base.gate`, all left when it ends, as a request's are after its reply. */
export async function inGatedOperation<T>(base: OperationBase, work: (ctx: OperationContext) => Promise<T>): Promise<T> {
  const gate = openRequestGate(base.gate);
  const ctx: OperationContext = {
    clusters: gatedClusters(base.clusters, gate), gate, store: base.store, clock: base.clock, logger: base.logger,
    ...(base.events ? { events: base.events } : {}), ...(base.actor !== undefined ? { actor: base.actor } : {}),
  };
  try {
    return await work(ctx);
  } finally {
    gate.leaveAll();
  }
}
