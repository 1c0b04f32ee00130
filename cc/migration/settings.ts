/**
 * The CC's live-migration settings: concurrency limits, timeouts and the hypervisor migration
 * endpoint. Defaults follow the clouds that do this at scale: KubeVirt runs 2 outbound migrations
 * per node and 5 per cluster, Nova 1 per compute host, vSphere up to 8 vMotions per host on 10 GbE;
 * KubeVirt allows 150 s per GiB of memory and 150 s without progress (completionTimeoutPerGiB,
 * progressTimeout). Tests pass small values.
 */
import type { z } from 'zod';
import type { IdSource } from '../../shared/model/ids.js';
import { randomHex8 } from '../../shared/model/ids.js';
import type { limitsSchema, timeoutsSchema } from '../../shared/protocol/migrationProtocol.js';

export type Limits = z.infer<typeof limitsSchema>;
export type Timeouts = z.infer<typeof timeoutsSchema>;

export interface MigrationSettings {
  readonly limits: Limits;
  readonly timeouts: Timeouts;
  /** The destination's hypervisor migration endpoint; `{host}` is replaced by the destination host. */
  readonly uriTemplate: string;
  /** Eight hex digits for a new migration id (seeded in tests). */
  readonly newHex: IdSource;
}

export const DEFAULT_LIMITS: Limits = Object.freeze({ perSource: 2, perDestination: 2, perCluster: 8 });

export const DEFAULT_TIMEOUTS: Timeouts = Object.freeze({
  prepareMs: 60_000,
  readyMs: 60_000,
  migratingBaseMs: 60_000,
  migratingPerGiBMs: 150_000,
  stallMs: 150_000,
});

/** The simulated hypervisor (simhv) listens for plaintext incoming migrations on libvirt's port... */
export const DEFAULT_URI_TEMPLATE = 'http://{host}:16509';
/** ...and for mutually authenticated ones (per-migration credentials) on libvirt's TLS port. */
export const DEFAULT_TLS_URI_TEMPLATE = 'https://{host}:16514';

export const DEFAULT_MIGRATION_SETTINGS: MigrationSettings = Object.freeze({
  limits: DEFAULT_LIMITS, timeouts: DEFAULT_TIMEOUTS, uriTemplate: DEFAULT_URI_TEMPLATE, newHex: randomHex8,
});

export function destinationUri(template: string, host: string): string {
  return template.replaceAll('{host}', host);
}
