/**
 * Destination side of live migration as pure decisions and store transitions: admission of an
 * incoming instance (like a run: disabled, health, capacity counting instances AND Incoming
 * records), what the hypervisor's word about the incoming domain means, and the one store update
 * that turns an arrived VM into this node's instance. Every change of an Incoming record is a row
 * of migrationDestinationTable.ts: the decide functions select rows, the apply functions run them.
 */
import { fits, sub, type Resources } from '../shared/model/resources.js';
import type { Incoming, NcMigrateRequest } from '../shared/protocol/migrationProtocol.js';
import { show, withoutDomain } from './admission.js';
import type { DomainSpec } from './hypervisor/driver.js';
import type { Observation, Observed } from './instanceView.js';
import type { InstanceRecord, NcSnapshot, StoredIncoming } from './ncStore.js';
import type { Refusal } from './migrationSource.js';
import { usedResources } from './usage.js';
import { selectIncomingRow, type IncomingPayloads, type IncomingTrigger } from './migrationDestinationTable.js';

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
  const rec = snapshot.instances[id];
  const used = usedResources(snapshot.instances, withoutDomain(input.observation, id), snapshot.incoming);
  const free = input.capacity ? sub(input.capacity, used) : undefined;
  const p: IncomingPayloads['prepare'] = {
    sameMigration: existing?.migrationId === migrationId,
    sameSpec: existing !== undefined && sameIncoming(existing, req.incoming),
    // A re-join's credential (a later generation than the hypervisor holds) must reach the hypervisor.
    laterGeneration: input.generation !== undefined && input.generation > (existing?.credentialGeneration ?? 0),
    // A tombstone does not count: its life here ended (the instance was re-homed or restarted
    // elsewhere, issue 18); arriving, the instance replaces it (applyArrival), as a restart's run does.
    instanceHere: rec !== undefined && rec.phase !== 'terminated',
    arrivedByThis: rec !== undefined && rec.arrivedBy === migrationId && rec.phase !== 'terminated',
    disabled: snapshot.nodeState === 'disabled' && !req.allowDisabled,
    quarantined: snapshot.quarantine !== undefined,
    connected: input.healthy && input.capacity !== undefined,
    fits: free !== undefined && fits(req.incoming.vmType, free),
    fresh: { ...structuredClone(req.incoming), state: 'preparing', since: now },
  };
  const row = selectIncomingRow('prepare', existing, p);
  switch (row?.decides) {
    case 'answer': return existing ? { kind: 'answer', incoming: existing } : { kind: 'arrived' };
    case 'arrived': return { kind: 'arrived' };
    case 'prepare': return existing ? { kind: 'prepare', incoming: existing, fresh: false } : { kind: 'prepare', incoming: p.fresh, fresh: true };
    case 'rejoin': return existing ? { kind: 'prepare', incoming: existing, fresh: false, rejoin: true } : { kind: 'prepare', incoming: p.fresh, fresh: true };
    case 'prepare-fresh': return { kind: 'prepare', incoming: p.fresh, fresh: true };
    default: return prepareRefusal(row?.refusal ?? 'InstanceExists', host, req, existing, free, snapshot.quarantine?.since);
  }
}

function prepareRefusal(
  code: Refusal['code'], host: string, req: DestinationPrepareRequest, existing: StoredIncoming | undefined, free: Resources | undefined, quarantinedSince: number | undefined,
): Refusal {
  const id = req.incoming.instanceId;
  switch (code) {
    case 'MigrationInProgress': return refuse(code, { host, subject: `instance ${id}`, migrationId: existing?.migrationId ?? req.migrationId });
    case 'NodeDisabled': return refuse(code, { host });
    case 'NodeQuarantined': return refuse(code, { host, since: new Date(quarantinedSince ?? 0).toISOString(), detail: 'a quarantined node is never a migration destination' });
    case 'HypervisorUnavailable': return refuse(code, { host, detail: 'not connected' });
    case 'InsufficientCapacity': return refuse(code, { host, vmType: req.incoming.vmType.name, need: show(req.incoming.vmType), free: free ? show(free) : 'unknown' });
    default: return refuse(code, { host, instanceId: id });
  }
}

/**
 * Store transition: runs the row `trigger` selects for the instance's Incoming record on the draft
 * (when `expect` is given, only if the row decides that). Returns the record afterwards.
 */
export function applyIncoming<K extends IncomingTrigger>(draft: NcSnapshot, instanceId: string, trigger: K, p: IncomingPayloads[K], expect?: string): StoredIncoming | undefined {
  const rec = draft.incoming[instanceId];
  const row = selectIncomingRow(trigger, rec, p);
  if (!row?.run || (expect !== undefined && row.decides !== expect)) return rec;
  const next = row.run(rec, p);
  if (next) draft.incoming[instanceId] = next;
  else delete draft.incoming[instanceId];
  return next;
}

export function incomingSpec(rec: StoredIncoming): DomainSpec {
  const { cores, memoryMiB, diskGiB } = rec.vmType;
  const volumes = (rec.volumes ?? []).map(({ volumeId, device, path }) => ({ volumeId, device, path }));
  return { id: rec.instanceId, resources: { cores, memoryMiB, diskGiB }, imageId: rec.imageId, ...(volumes.length > 0 ? { volumes } : {}) };
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
    // Suspended by its administrator: a guest that arrived suspended (a migration's own pause is 'paused').
    case 'suspended':
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
 * identity (a crash can leave the one or the other, never both or neither). `suspended`: the domain
 * arrived suspended (its administrator paused it on the source), so the instance is paused here too.
 */
export function applyArrival(draft: NcSnapshot, instanceId: string, now: number, suspended = false): InstanceRecord | undefined {
  const inc = draft.incoming[instanceId];
  if (!inc || selectIncomingRow('arrived', inc, {})?.decides !== 'instance') return undefined;
  const rec: InstanceRecord = {
    instanceId, reservationId: inc.reservationId, imageId: inc.imageId, ownerId: inc.ownerId,
    vmType: { ...inc.vmType }, launchTime: inc.launchTime, phase: 'running', since: now,
    migrationState: 'none', arrivedBy: inc.migrationId, ...(suspended ? { paused: true as const } : {}),
    // It arrives with the volumes it left with (the settle step reconciles any mid-change one with the domain).
    ...(inc.volumes !== undefined && inc.volumes.length > 0 ? { volumes: inc.volumes.map((v) => ({ ...v })) } : {}),
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
    ...(rec.volumes !== undefined ? { volumes: rec.volumes.map((v) => ({ ...v })) } : {}),
  };
}
