/**
 * Terminate as a pure decision plus the record transitions it needs, and the tombstone policy that
 * lets a repeated terminate answer exactly as the first one did.
 */
import type { InstanceState, MigrationState } from '../shared/protocol/common.js';
import { deriveState, observedState, type Observation } from './instanceView.js';
import type { TerminateReason } from '../shared/protocol/ncProtocol.js';
import type { InstanceRecord, NcSnapshot } from './ncStore.js';

export interface TerminateAnswer {
  readonly instanceId: string;
  readonly previousState: InstanceState;
  readonly currentState: InstanceState;
}

export type TerminateDecision =
  | { readonly kind: 'notFound' }
  /** In a migration (source: ready/migrating/cleaning; destination: incoming): refused until it ends. */
  | { readonly kind: 'migrating'; readonly migrationState: MigrationState }
  /** Already terminated: replay the first answer. */
  | { readonly kind: 'answer'; readonly answer: TerminateAnswer }
  /** A move's forget (reason `move`) of a copy that is not stopped: a re-home never ends a running guest. */
  | { readonly kind: 'notStopped'; readonly state: InstanceState }
  /** Persist shutting-down (remembering `previousState`), destroy the domain, persist terminated. */
  | { readonly kind: 'destroy'; readonly previousState: InstanceState };

export function decideTerminate(snapshot: NcSnapshot, instanceId: string, obs: Observation | undefined, reason?: TerminateReason): TerminateDecision {
  const rec = snapshot.instances[instanceId];
  const incoming = snapshot.incoming[instanceId];
  if (!rec && incoming) return { kind: 'migrating', migrationState: incoming.state };
  if (!rec) return { kind: 'notFound' };
  // Destroying a VM in the middle of a migration would race the hypervisor's own hand-over.
  if (rec.migrationState !== 'none' && rec.phase !== 'terminated') return { kind: 'migrating', migrationState: rec.migrationState };
  if (rec.phase === 'terminated') {
    return { kind: 'answer', answer: { instanceId, previousState: rec.terminatedFrom ?? 'terminated', currentState: 'terminated' } };
  }
  // An earlier terminate got as far as shutting-down: finish it and answer as it would have.
  if (rec.phase === 'shutting-down') return { kind: 'destroy', previousState: rec.terminatedFrom ?? 'shutting-down' };
  const state = deriveState(rec.phase, observedState(obs, instanceId));
  // A re-home forgets only the stopped copy it replaced; one started meanwhile stays (cc/moveRepair.ts).
  if (reason === 'move' && state !== 'stopped') return { kind: 'notStopped', state };
  return { kind: 'destroy', previousState: state };
}

/** Record transitions, applied to a store draft. */
export function markShuttingDown(rec: InstanceRecord, from: InstanceState, now: number): void {
  if (rec.phase === 'shutting-down') return;
  rec.phase = 'shutting-down';
  rec.terminatedFrom = from;
  rec.since = now;
}

/**
 * Why it ended, kept on the record: a user's terminate wins over a move's (cc/moveRepair.ts then ends
 * every other copy of the instance), even one that reaches a tombstone the move left. Returns whether
 * the record changed.
 */
export function noteEndedBy(rec: InstanceRecord, reason: TerminateReason | undefined): boolean {
  if (reason === undefined || rec.endedBy === reason || rec.endedBy === 'user') return false;
  rec.endedBy = reason;
  return true;
}

/**
 * The domain is gone: the tombstone holds no volume (an obsolete copy on a host back from a fence
 * must not claim the volume its replacement holds; the CLC releases or re-attaches it).
 */
export function markTerminated(rec: InstanceRecord, now: number): void {
  delete rec.volumes;
  if (rec.phase === 'terminated') return;
  rec.phase = 'terminated';
  rec.since = now;
}

export interface TombstonePolicy {
  /** How long a terminated record is kept, ms of the injected clock. */
  readonly ttlMs: number;
  /** At most this many tombstones; the oldest go first. */
  readonly maxCount: number;
}

/** An hour covers the CC's retries and a few describe polls; the count bounds the store file. */
export const DEFAULT_TOMBSTONES: TombstonePolicy = Object.freeze({ ttlMs: 60 * 60 * 1000, maxCount: 1000 });

/** Drops tombstones older than the TTL or beyond the count; returns the ids dropped. */
export function pruneTombstones(instances: Record<string, InstanceRecord>, now: number, policy: TombstonePolicy): string[] {
  const tombs = Object.values(instances)
    .filter((r) => r.phase === 'terminated')
    .sort((a, b) => b.since - a.since || a.instanceId.localeCompare(b.instanceId));
  const dropped = tombs
    .filter((r, i) => now - r.since >= policy.ttlMs || i >= policy.maxCount)
    .map((r) => r.instanceId);
  for (const id of dropped) delete instances[id];
  return dropped;
}
