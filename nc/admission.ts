/**
 * Whether the NC takes a run request, as a pure decision over its snapshot (STYLE habit 1). The
 * runner executes the decision: persist, call the hypervisor, persist again, reply.
 */
import { fits, sub, type Resources } from '../shared/model/resources.js';
import type { NcRequest } from '../shared/protocol/ncProtocol.js';
import type { ErrorFields } from '../shared/errors/registry.js';
import type { NcErrorCode } from './errors.js';
import type { Observation } from './instanceView.js';
import type { InstanceRecord, NcSnapshot } from './ncStore.js';
import { usedResources } from './usage.js';

export type RunRequest = NcRequest<'ncRunInstance'>;

export interface AdmissionInput {
  readonly host: string;
  readonly snapshot: NcSnapshot;
  readonly request: RunRequest;
  /** Host capacity from the last connect(); undefined when the hypervisor was never reached. */
  readonly capacity: Resources | undefined;
  readonly healthy: boolean;
  readonly observation: Observation | undefined;
  readonly now: number;
}

export type RunDecision =
  /** The instance exists with this spec and was acknowledged before: answer with it again. */
  | { readonly kind: 'existing'; readonly record: InstanceRecord }
  /** Create the domain for `record`; `fresh` when the pending record must be persisted first. */
  | { readonly kind: 'create'; readonly record: InstanceRecord; readonly fresh: boolean }
  | { readonly kind: 'refuse'; readonly code: NcErrorCode; readonly fields: ErrorFields; readonly message?: string };

/** A retry is the same request: every field the caller chose must match. */
export function sameSpec(rec: InstanceRecord, req: RunRequest): boolean {
  return rec.reservationId === req.reservationId
    && rec.imageId === req.imageId
    && rec.ownerId === req.ownerId
    && rec.launchTime === req.launchTime
    && rec.vmType.name === req.vmType.name
    && rec.vmType.cores === req.vmType.cores
    && rec.vmType.memoryMiB === req.vmType.memoryMiB
    && rec.vmType.diskGiB === req.vmType.diskGiB;
}

export function pendingRecord(req: RunRequest, now: number): InstanceRecord {
  return {
    instanceId: req.instanceId,
    reservationId: req.reservationId,
    imageId: req.imageId,
    ownerId: req.ownerId,
    vmType: { name: req.vmType.name, cores: req.vmType.cores, memoryMiB: req.vmType.memoryMiB, diskGiB: req.vmType.diskGiB },
    launchTime: req.launchTime,
    phase: 'pending',
    since: now,
    migrationState: 'none',
    // A drain's cold move (issue 18): it arrives as its user left it, stopped, holding nothing.
    ...(req.stopped === true ? { userStopped: true as const } : {}),
    // Its volumes come with it (issue 18), in the definition before it boots: attached once the domain exists.
    ...(req.volumes && req.volumes.length > 0 ? { volumes: req.volumes.map((v) => ({ ...v, status: 'attaching' as const })) } : {}),
    // A re-homed copy (cc/moveRepair.ts): where it came from, so the CC forgets the copy it replaces even after a crash.
    ...(req.moved !== undefined ? { moved: { ...req.moved } } : {}),
  };
}

export function show(r: Resources): string {
  return `${r.cores} cores/${r.memoryMiB} MiB/${r.diskGiB} GiB`;
}

/** Idempotency first (a retry is answered even on a disabled or full node), then state, health, capacity. */
export function decideRun(input: AdmissionInput): RunDecision {
  const { host, snapshot, request: req } = input;
  const stored = snapshot.instances[req.instanceId];
  // A restart (host HA) replaces a tombstone: the id's life here is over, a new one begins.
  const existing = stored && req.restart === true && stored.phase === 'terminated' ? undefined : stored;
  if (existing) {
    if (!sameSpec(existing, req)) return { kind: 'refuse', code: 'InstanceExists', fields: { host, instanceId: req.instanceId } };
    // A pending record is an earlier attempt whose create was never confirmed: carry it on.
    if (existing.phase === 'pending') return { kind: 'create', record: existing, fresh: false };
    return { kind: 'existing', record: existing };
  }
  // A terminate of this id found nothing here and said so: this run came too late to count.
  if (snapshot.fenced?.[req.instanceId] !== undefined) {
    return {
      kind: 'refuse', code: 'InstanceExists', fields: { host, instanceId: req.instanceId },
      message: `instance ${req.instanceId} was terminated on node ${host} before this run request arrived`,
    };
  }
  // The id is on its way here by live migration: it becomes this node's instance when it arrives.
  if (snapshot.incoming[req.instanceId]) return { kind: 'refuse', code: 'InstanceExists', fields: { host, instanceId: req.instanceId } };
  if (snapshot.nodeState === 'disabled') return { kind: 'refuse', code: 'NodeDisabled', fields: { host } };
  if (!input.healthy || !input.capacity) {
    return { kind: 'refuse', code: 'HypervisorUnavailable', fields: { host, detail: 'not connected' } };
  }
  const used = usedResources(snapshot.instances, withoutDomain(input.observation, req.instanceId), snapshot.incoming);
  const free = sub(input.capacity, used);
  if (!fits(req.vmType, free)) {
    return {
      kind: 'refuse', code: 'InsufficientCapacity',
      fields: { host, vmType: req.vmType.name, need: show(req.vmType), free: show(free) },
    };
  }
  return { kind: 'create', record: pendingRecord(req, input.now), fresh: true };
}

/** An orphan domain with the requested id is the one create() will return: do not count it twice. */
export function withoutDomain(obs: Observation | undefined, id: string): Observation | undefined {
  if (!obs || !obs.domains.has(id)) return obs;
  const domains = new Map(obs.domains);
  domains.delete(id);
  return { at: obs.at, domains };
}
