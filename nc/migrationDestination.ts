/**
 * Destination side of live migration as pure decisions and store transitions: admission of an
 * incoming instance (like a run: disabled, health, capacity counting instances AND Incoming
 * records), what the hypervisor's word about the incoming domain means, and the one store update
 * that turns an arrived VM into this node's instance.
 *
 *   prepare ─persist─▶ preparing ─prepareIncoming─▶ ready ─the VM runs here─▶ (instance record, none)
 *                                                     ├─rollback─▶ rollingBack ─abortIncoming─▶ (gone)
 *                                                     └─prepare with a later credential generation (a
 *                                                       source re-joins)─prepareIncoming─▶ ready (that generation)
 * The incoming state stays ready during the transfer: no driver call or event tells a destination
 * that the stream has begun (see nc/README.md, open points).
 */
import { fits, sub, type Resources } from '../shared/model/resources.js';
import type { Incoming, NcMigrateRequest } from '../shared/protocol/migrationProtocol.js';
import { show, withoutDomain } from './admission.js';
import type { DomainSpec } from './hypervisor/driver.js';
import type { Observation, Observed } from './instanceView.js';
import type { InstanceRecord, NcSnapshot, StoredIncoming } from './ncStore.js';
import type { Refusal } from './migrationSource.js';
import { usedResources } from './usage.js';

export type DestinationPrepareRequest = Extract<NcMigrateRequest, { action: 'prepare'; role: 'destination' }>;
export type DestinationRollbackRequest = Extract<NcMigrateRequest, { action: 'rollback' }>;

export interface IncomingPrepareInput {
  readonly host: string;
  readonly snapshot: NcSnapshot;
  readonly request: DestinationPrepareRequest;
  readonly capacity: Resources | undefined;
  readonly healthy: boolean;
  readonly observation: Observation | undefined;
  readonly now: number;
  /** The generation the request's credential names (undefined: none, or not readable). */
  readonly generation?: number;
}

export type IncomingPrepareDecision =
  /** Already prepared for this (migrationId, instanceId): answer the record again. */
  | { readonly kind: 'answer'; readonly incoming: StoredIncoming }
  /** The VM already arrived by this migration and is this node's instance: answer without a record. */
  | { readonly kind: 'arrived' }
  /** Ask the hypervisor to prepare; `fresh` when the preparing record must be persisted first. */
  | {
    readonly kind: 'prepare'; readonly incoming: StoredIncoming; readonly fresh: boolean;
    /**
     * A ready record handed a re-join's credential: it was acknowledged, so a refusal keeps it (the
     * hypervisor may refuse because the VM already arrived there; the next look finalizes it).
     */
    readonly rejoin?: true;
  }
  | Refusal;

const refuse = (code: Refusal['code'], fields: Refusal['fields']): Refusal => ({ kind: 'refuse', code, fields });

function sameIncoming(rec: StoredIncoming, req: DestinationPrepareRequest['incoming']): boolean {
  return rec.source === req.source && rec.reservationId === req.reservationId && rec.imageId === req.imageId
    && rec.ownerId === req.ownerId && rec.launchTime === req.launchTime && rec.vmType.name === req.vmType.name
    && rec.vmType.cores === req.vmType.cores && rec.vmType.memoryMiB === req.vmType.memoryMiB
    && rec.vmType.diskGiB === req.vmType.diskGiB;
}

/** Idempotency first (a repeat is answered even on a disabled or full node), then state, health, capacity. */
export function decideIncomingPrepare(input: IncomingPrepareInput): IncomingPrepareDecision {
  const { host, snapshot, request: req, now } = input;
  const { migrationId } = req;
  const id = req.incoming.instanceId;
  if (req.incoming.migrationId !== migrationId) {
    return refuse('MigrationPlanInvalid', { host, migrationId, detail: `the incoming record names migration ${req.incoming.migrationId}` });
  }
  if (req.incoming.source === host) return refuse('MigrationPlanInvalid', { host, migrationId, detail: 'the source is this node' });
  // These become the instance record on arrival, which requires them (ncRunInstance does too).
  if (!req.incoming.imageId || !req.incoming.ownerId) return refuse('MigrationPlanInvalid', { host, migrationId, detail: 'imageId and ownerId are required' });
  const existing = snapshot.incoming[id];
  if (existing) {
    if (existing.migrationId !== migrationId) return refuse('MigrationInProgress', { host, subject: `instance ${id}`, migrationId: existing.migrationId });
    if (!sameIncoming(existing, req.incoming)) return refuse('InstanceExists', { host, instanceId: id });
    // A preparing record is an earlier attempt whose prepareIncoming was never confirmed: carry it on.
    if (existing.state === 'preparing' || existing.rollingBack) return { kind: 'prepare', incoming: existing, fresh: false };
    // A re-join's credential (a later generation than the hypervisor holds) must reach the hypervisor.
    if (input.generation !== undefined && input.generation > (existing.credentialGeneration ?? 0)) return { kind: 'prepare', incoming: existing, fresh: false, rejoin: true };
    return { kind: 'answer', incoming: existing };
  }
  const rec = snapshot.instances[id];
  if (rec && rec.arrivedBy === migrationId && rec.phase !== 'terminated') return { kind: 'arrived' };
  if (rec) return refuse('InstanceExists', { host, instanceId: id });
  if (snapshot.nodeState === 'disabled' && !req.allowDisabled) return refuse('NodeDisabled', { host });
  if (!input.healthy || !input.capacity) return refuse('HypervisorUnavailable', { host, detail: 'not connected' });
  const used = usedResources(snapshot.instances, withoutDomain(input.observation, id), snapshot.incoming);
  const free = sub(input.capacity, used);
  if (!fits(req.incoming.vmType, free)) {
    return refuse('InsufficientCapacity', { host, vmType: req.incoming.vmType.name, need: show(req.incoming.vmType), free: show(free) });
  }
  return { kind: 'prepare', incoming: { ...structuredClone(req.incoming), state: 'preparing', since: now }, fresh: true };
}

export function incomingSpec(rec: StoredIncoming): DomainSpec {
  const { cores, memoryMiB, diskGiB } = rec.vmType;
  return { id: rec.instanceId, resources: { cores, memoryMiB, diskGiB }, imageId: rec.imageId };
}

/** What the hypervisor's word about an incoming domain means. */
export type IncomingDomain =
  /** Running (or stopped after a power cycle): the migration completed, the VM is ours now. */
  | 'arrived'
  /** Paused: prepared, or the stream is arriving. */
  | 'waiting'
  /** Not defined: never prepared, dropped after a broken stream, or lost with a hypervisor restart. */
  | 'absent'
  /** The NC has not seen its hypervisor. */
  | 'unknown';

/** Only a finished incoming migration leaves a non-paused domain: the hypervisor starts it last. */
export function classifyIncomingDomain(observed: Observed): IncomingDomain {
  switch (observed) {
    case 'paused': return 'waiting';
    case 'missing': return 'absent';
    case 'unknown': return 'unknown';
    case 'running':
    case 'shutoff':
    case 'crashed':
      return 'arrived';
  }
}

/** Incoming records a destination rollback removes: one item, or every one of the migration. */
export function incomingToRollBack(snapshot: NcSnapshot, req: DestinationRollbackRequest): string[] {
  return Object.values(snapshot.incoming)
    .filter((r) => r.migrationId === req.migrationId && (!req.instanceId || r.instanceId === req.instanceId))
    .map((r) => r.instanceId)
    .sort();
}

/**
 * Store transition, ONE update: the Incoming record becomes a running instance record with the same
 * identity (a crash can leave the one or the other, never both or neither).
 */
export function applyArrival(draft: NcSnapshot, instanceId: string, now: number): InstanceRecord | undefined {
  const inc = draft.incoming[instanceId];
  if (!inc) return undefined;
  const rec: InstanceRecord = {
    instanceId, reservationId: inc.reservationId, imageId: inc.imageId, ownerId: inc.ownerId,
    vmType: { ...inc.vmType }, launchTime: inc.launchTime, phase: 'running', since: now,
    migrationState: 'none', arrivedBy: inc.migrationId,
  };
  delete draft.incoming[instanceId];
  draft.instances[instanceId] = rec;
  return rec;
}

/** The record as the contract shows it (private fields dropped). */
export function incomingView(rec: StoredIncoming): Incoming {
  return {
    migrationId: rec.migrationId, instanceId: rec.instanceId, source: rec.source, reservationId: rec.reservationId,
    imageId: rec.imageId, ownerId: rec.ownerId, launchTime: rec.launchTime, vmType: { ...rec.vmType },
    state: rec.state, since: rec.since, ...(rec.credentialGeneration !== undefined ? { credentialGeneration: rec.credentialGeneration } : {}),
  };
}
