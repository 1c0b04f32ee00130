/**
 * What the migration item executors share: the node's identity, clock, log, hypervisor link, domain cache,
 * store access (through the node's persist, inside its mailbox) and the CC notifier.
 */
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { NcResponse } from '../shared/protocol/ncProtocol.js';
import type { CcNodeEvent, CcNotifier } from './ccNotifier.js';
import type { DomainCache } from './domainCache.js';
import type { HypervisorLink } from './hypervisorLink.js';
import type { NcSnapshot } from './ncStore.js';
import type { VolumeConnector } from './volumeConnector.js';

export type MigrateAnswer = NcResponse<'ncMigrateInstances'>;

export interface MigrationContext {
  readonly host: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly link: HypervisorLink;
  readonly domains: DomainCache;
  readonly notifier: CcNotifier;
  /** Runs a task in the node's mailbox. */
  readonly post: <T>(task: () => Promise<T>) => Promise<T>;
  /** A durable store update (StateWriteFailed on failure). */
  readonly persist: <R>(mutate: (draft: NcSnapshot) => R) => Promise<R>;
  readonly snapshot: () => NcSnapshot;
  /**
   * Per-migration credentials are required (the NC runs mutual TLS): a prepare or commit without one
   * is refused, and nothing is handed to the hypervisor without one (no plaintext fallback).
   */
  readonly requireCredentials: boolean;
  /** Connects a migrating instance's volumes to this host, and disconnects them (volumeConnector.ts). */
  readonly volumes: VolumeConnector;
}

/** A hint to the CC that something about this node changed. */
export function tell(ctx: MigrationContext, kind: CcNodeEvent['kind'], migrationId?: string, instanceId?: string): void {
  const event: CcNodeEvent = { host: ctx.host, kind };
  if (migrationId) event.migrationId = migrationId;
  if (instanceId) event.instanceId = instanceId;
  ctx.notifier.notify(event);
}
