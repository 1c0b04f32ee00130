/**
 * Start-up (and reconnect) re-adoption: compare the NC's records with what the hypervisor holds and
 * compute the corrected records plus the effects left to run. Level-based: it acts on what it sees
 * now, so it is safe to run at any time and as often as wanted. Pure.
 */
import type { DomainInfo } from './hypervisor/driver.js';
import type { InstanceRecord } from './ncStore.js';

/**
 * What a record re-adopted after a lost store says where the domain cannot tell: the CLC's record of
 * the instance has the real reservation, owner, launch time and VM type name (the CLC prefers it).
 */
export const ADOPTED_PLACEHOLDERS = Object.freeze({
  reservationId: 'r-00000000',
  ownerId: 'unknown',
  vmTypeName: 'adopted.unknown',
});

/**
 * A running record for a domain the NC has no record of, built from what the hypervisor knows of it,
 * its volumes included: a record without them would answer a detach "not attached" while the domain
 * still holds the volume, which the CLC could then attach elsewhere (sim seed 429, a lost nc.json).
 */
export function adoptedRecord(d: DomainInfo, now: number): InstanceRecord {
  const { cores, memoryMiB, diskGiB } = d.resources;
  const volumes = (d.volumes ?? []).map(({ volumeId, device, path }) => ({ volumeId, device, path, status: 'attached' as const }));
  return {
    instanceId: d.id,
    reservationId: ADOPTED_PLACEHOLDERS.reservationId,
    imageId: d.imageId,
    ownerId: ADOPTED_PLACEHOLDERS.ownerId,
    vmType: { name: ADOPTED_PLACEHOLDERS.vmTypeName, cores, memoryMiB, diskGiB },
    launchTime: d.startedAt,
    phase: 'running',
    since: now,
    migrationState: 'none',
    adopted: true,
    ...(volumes.length > 0 ? { volumes } : {}),
  };
}

export type ReconcileEffect =
  /** Destroy a domain the NC has promised is going or gone; then mark its record terminated. */
  { readonly kind: 'destroy'; readonly id: string };

export type ReconcileNote =
  /** A pending record has its domain: the create went through before the NC died. */
  | { readonly kind: 'adopted'; readonly id: string }
  /** A pending record without a domain was never acknowledged: forgotten. */
  | { readonly kind: 'dropped-unacknowledged'; readonly id: string }
  /** A terminate stopped half-way and the domain is already gone. */
  | { readonly kind: 'termination-completed'; readonly id: string }
  /** A terminated instance's domain came back: destroy it again. */
  | { readonly kind: 'terminated-domain-present'; readonly id: string }
  /** A domain with no record (store lost): kept, counted as used, never destroyed by the NC. */
  | { readonly kind: 'orphan-domain'; readonly id: string; readonly state: string }
  /** After a lost store: a domain with no record got a running record again (its resources and image from the domain). */
  | { readonly kind: 'adopted-orphan'; readonly id: string; readonly state: string };

export interface ReconcileOptions {
  /** Prepared incoming domains belong to Incoming records (migrationRecovery.ts), not orphans. */
  readonly incomingIds?: ReadonlySet<string>;
  /**
   * The store was lost (storeOrigin.ts): give orphan domains records again. A paused one is left an
   * orphan: it may be the incoming copy of a migration whose source still runs the VM.
   */
  readonly adoptOrphans?: boolean;
}

export interface ReconcileResult {
  readonly instances: Record<string, InstanceRecord>;
  readonly effects: readonly ReconcileEffect[];
  readonly notes: readonly ReconcileNote[];
  /** True when `instances` differs from the input and must be persisted. */
  readonly changed: boolean;
}

export function reconcile(
  records: Readonly<Record<string, InstanceRecord>>, domains: readonly DomainInfo[], now: number, opts: ReconcileOptions = {},
): ReconcileResult {
  const incomingIds = opts.incomingIds ?? new Set<string>();
  const byId = new Map(domains.map((d) => [d.id, d]));
  const instances: Record<string, InstanceRecord> = {};
  const effects: ReconcileEffect[] = [];
  const notes: ReconcileNote[] = [];
  let changed = false;

  for (const [id, rec] of Object.entries(records)) {
    const domain = byId.get(id);
    switch (rec.phase) {
      case 'pending':
        if (domain) {
          instances[id] = { ...rec, phase: 'running', since: now };
          notes.push({ kind: 'adopted', id });
        } else {
          notes.push({ kind: 'dropped-unacknowledged', id });
        }
        changed = true;
        break;
      case 'running':
        // A running record whose domain is gone stays: describe reports it stopped/missing.
        instances[id] = rec;
        break;
      case 'shutting-down':
        if (domain) {
          instances[id] = rec;
          effects.push({ kind: 'destroy', id });
        } else {
          instances[id] = { ...rec, phase: 'terminated', since: now };
          notes.push({ kind: 'termination-completed', id });
          changed = true;
        }
        break;
      case 'terminated':
        instances[id] = rec;
        if (domain) {
          effects.push({ kind: 'destroy', id });
          notes.push({ kind: 'terminated-domain-present', id });
        }
        break;
    }
  }
  for (const d of domains) {
    if (Object.prototype.hasOwnProperty.call(records, d.id) || incomingIds.has(d.id)) continue;
    if (opts.adoptOrphans === true && d.state !== 'paused') {
      instances[d.id] = adoptedRecord(d, now);
      notes.push({ kind: 'adopted-orphan', id: d.id, state: d.state });
      changed = true;
    } else {
      notes.push({ kind: 'orphan-domain', id: d.id, state: d.state });
    }
  }
  return { instances, effects, notes, changed };
}
