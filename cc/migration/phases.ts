/**
 * Where an item really is, from both sides. Pure. The source NC keeps an item `queued` until commit
 * (it is not told about the destination), so preparing and ready are read off the destination's
 * Incoming record; from commit on the source's own state leads.
 */
import type { Incoming, PlanItem } from '../../shared/protocol/migrationProtocol.js';
import type { MigrationState } from '../../shared/protocol/common.js';
import { isFinal } from './plans.js';

/** An item's phase as the coordinator sees it. */
export type Phase =
  /** Waiting for a slot (or for its source to confirm a new destination). */
  | 'queued'
  /** The destination is being prepared: its record says preparing, or the CC asked and has no answer yet. */
  | 'preparing'
  /** The destination is ready; commit is due. */
  | 'ready'
  /** The source is pushing the VM (or the destination already receives it while the source's report lags). */
  | 'migrating'
  /** The VM runs on the destination; the source removes what is left. Committed. */
  | 'cleaning'
  /** completed, rolled-back, cancelled or failed: the source's word is final. */
  | 'final';

/** In flight: holds a concurrency slot. */
export function inFlight(p: Phase): boolean {
  return p === 'preparing' || p === 'ready' || p === 'migrating' || p === 'cleaning';
}

/** The phase the NCs report, before the CC adds what only it knows (a prepare it has sent). */
export function observedPhase(item: PlanItem, atDestination: Incoming | undefined): Phase {
  if (isFinal(item.state)) return 'final';
  if (item.state === 'migrating' || item.state === 'cleaning') return item.state;
  switch (atDestination?.state) {
    case 'preparing': return 'preparing';
    case 'ready': return 'ready';
    // The destination receives (or received) it: the source accepted commit; its report lags.
    case 'migrating':
    case 'cleaning': return 'migrating';
    default: return 'queued';
  }
}

/** The instance's migrationState as listed: the NC's own word, unless it says none while the item moves. */
export function listedMigrationState(reported: MigrationState, phase: Phase): MigrationState {
  if (reported !== 'none' || phase === 'queued' || phase === 'final') return reported;
  return phase;
}
