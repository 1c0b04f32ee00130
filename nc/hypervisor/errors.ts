/**
 * The hypervisor surface's error registry (STYLE habit 6). Every HypervisorDriver adapter translates
 * its own failures (connection refused, timeouts, daemon error bodies, libvirt codes) into these.
 * The simulated hypervisor's daemon also speaks them on its private HTTP protocol.
 */
import { client, defineErrors, server } from '../../shared/errors/registry.js';

export const HypervisorErrors = defineErrors({
  /** The hypervisor did not answer (refused, reset, timed out) or cannot serve now; try again. */
  HypervisorUnavailable: server(503, 'hypervisor at {uri} is unavailable: {detail}', true),
  DomainNotFound: client(404, 'domain {id} is not defined on host {host}'),
  /** Same id, different spec: creating it again would silently change a guest. */
  DomainExists: client(409, 'domain {id} already exists on host {host} with another spec: {detail}'),
  InsufficientHostResources: client(409, 'host {host} cannot hold domain {id}: it needs {need}, {free} free'),
  /** A volume attach that would reuse a device of the domain, or a volume another domain here holds. */
  VolumeConflict: client(409, 'domain {id} on host {host}: {detail}'),
  /**
   * The guest did not release a hot-unplugged volume in time (it ignores or is slow to acknowledge
   * the unplug): the volume stays attached, in the definition too; a retry may find it released.
   */
  VolumeDetachTimeout: server(504, 'domain {id} on host {host} did not release volume {volumeId} within {ms} ms; it stays attached', true),
  /** The domain exists but its current state forbids the operation (e.g. migrating a shut-off domain). */
  DomainStateConflict: client(409, 'domain {id} on host {host} is {state}; cannot {operation}'),
  /** Whether to retry is a planning decision (another destination, a larger downtime), not a blind retry. */
  MigrationFailed: server(500, 'migration {migrationId} of domain {id} failed: {detail}', false),
  MigrationAborted: client(409, 'migration {migrationId} of domain {id} was aborted'),
  IncomingNotPrepared: client(409, 'host {host} has no incoming migration {migrationId} prepared for domain {id}'),
  IncomingMismatch: client(409, 'host {host}: incoming domain {id} does not match migration {migrationId} ({detail})'),
  /**
   * A migration stream's peer failed the per-migration credential check (reason: no-certificate,
   * foreign-ca, not-yet-valid, expired, wrong-role, other-migration, other-host, replayed, handshake).
   * Nothing changed on the destination.
   */
  MigrationCredentialRejected: client(403, 'migration {migrationId} of domain {id}: peer credential refused ({reason}): {detail}'),
  /** A TLS migration was asked for without a credential, or a credential that does not fit it. */
  MigrationCredentialInvalid: client(400, 'migration {migrationId} of domain {id}: {detail}'),
  /** The peer answered, but not in the protocol we speak (bad JSON, unknown code, wrong shape). */
  HypervisorProtocolError: server(502, 'hypervisor at {uri} answered outside the protocol: {detail}', false),
  HypervisorBadRequest: client(400, 'bad request: {detail}'),
  HypervisorRequestTooLarge: client(413, 'request body exceeds {limit}'),
  HypervisorUnknownEndpoint: client(404, 'no endpoint {method} {path}'),
  /** An operation this adapter does not carry out (yet); nothing was changed. */
  HypervisorOperationUnsupported: client(501, 'the {kind} hypervisor cannot {operation}: {detail}'),
  HypervisorInternalError: server(500, 'hypervisor internal error: {detail}', false),
  /** The simulated hypervisor cannot open its owner-only control socket safely; it does not start. */
  HypervisorSocketUnusable: server(500, 'control socket {path} cannot be used: {detail}', false),
});

export type HypervisorErrorCode = keyof typeof HypervisorErrors.table & string;
