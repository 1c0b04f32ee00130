/**
 * What the coordinator asks for, as data (STYLE habit 1): each effect is one ncMigrateInstances call
 * on one NC, idempotent there and keyed by (migrationId, instanceId), so sending it twice, late, or
 * after a CC restart is harmless. The plan driver (planDriver.ts) executes them; nothing here does I/O.
 */
import type { Incoming, NcMigrateRequest } from '../../shared/protocol/migrationProtocol.js';
import { destinationUri } from './settings.js';

/** What a destination needs to set up for an incoming instance. */
export type IncomingSpec = Omit<Incoming, 'state' | 'since' | 'credentialGeneration'>;

export type Effect =
  /** Destination: hold resources and set up for the instance (a slot is taken from here on). */
  | {
    readonly kind: 'prepareDestination'; readonly migrationId: string; readonly instanceId: string;
    readonly source: string; readonly destination: string; readonly incoming: IncomingSpec; readonly allowDisabled: boolean;
    /** How long the credential issued with it stays valid (credentialLifetimeMs). */
    readonly credentialLifetimeMs: number;
    /** A re-join's re-prepare: the generation of the credential to issue (absent: 0, the first). */
    readonly credentialGeneration?: number;
  }
  /** Source: start the live migration to the ready destination (or re-join it with a re-issued credential). */
  | {
    readonly kind: 'commit'; readonly migrationId: string; readonly instanceId: string; readonly source: string; readonly destination: string;
    readonly credentialLifetimeMs: number;
    readonly credentialGeneration?: number;
  }
  /** Undo: on the source (instanceId absent: the whole plan; cancel marks items cancelled) or on one destination. */
  | {
    readonly kind: 'rollback'; readonly side: 'source' | 'destination'; readonly host: string; readonly migrationId: string;
    readonly instanceId?: string; readonly reason: string; readonly cancel: boolean;
  }
  /** Source: a queued item gets a new destination (its own became unusable before it started). */
  | { readonly kind: 'replan'; readonly migrationId: string; readonly instanceId: string; readonly source: string; readonly destination: string; readonly reason: string }
  /** Source: a queued item fails with a reason (nowhere to go, or its instance stopped running). */
  | { readonly kind: 'failItem'; readonly migrationId: string; readonly instanceId: string; readonly source: string; readonly error: string };

export type EffectKind = Effect['kind'];

/** The NC the effect is sent to. */
export function effectHost(e: Effect): string {
  switch (e.kind) {
    case 'prepareDestination': return e.destination;
    case 'rollback': return e.host;
    default: return e.source;
  }
}

/** One key per distinct call: the plan driver never has two of the same in flight. */
export function effectKey(e: Effect): string {
  const what = e.kind === 'rollback' ? `rollback-${e.side}${e.cancel ? '-cancel' : ''}` : e.kind;
  return `${what}:${e.migrationId}/${'instanceId' in e && e.instanceId !== undefined ? e.instanceId : '*'}@${effectHost(e)}`;
}

/** The ncMigrateInstances request that carries out an effect. */
export function toNcRequest(e: Effect, uriTemplate: string): NcMigrateRequest {
  switch (e.kind) {
    case 'prepareDestination':
      return { action: 'prepare', role: 'destination', migrationId: e.migrationId, incoming: e.incoming, allowDisabled: e.allowDisabled };
    case 'commit':
      return {
        action: 'commit', migrationId: e.migrationId, instanceId: e.instanceId, destination: e.destination,
        destinationUri: destinationUri(uriTemplate, e.destination),
      };
    case 'rollback':
      return {
        action: 'rollback', role: e.side, migrationId: e.migrationId, reason: e.reason.slice(0, 500), cancel: e.cancel,
        ...(e.instanceId !== undefined ? { instanceId: e.instanceId } : {}),
      };
    case 'replan':
      return { action: 'replan', migrationId: e.migrationId, instanceId: e.instanceId, destination: e.destination };
    case 'failItem':
      return { action: 'replan', migrationId: e.migrationId, instanceId: e.instanceId, destination: '', error: e.error };
  }
}
