/**
 * Who may call what, decided from the role (OU) in the caller's verified TLS certificate. The
 * check is a pure function of (operation, role, table); the server applies it to every request.
 */
import type { TLSSocket } from 'node:tls';
import type { Socket } from 'node:net';
import type { FerryError } from '../errors/registry.js';
import type { PeerRole } from '../pki/spec.js';
import { WireErrors } from './errors.js';

/** operation → roles allowed to call it. An operation missing from the table is refused to all. */
export type AllowedRoles = Readonly<Record<string, readonly PeerRole[]>>;

/** The error to answer with, or undefined when the caller may go on. */
export function authorizePeer(operation: string, role: string | undefined, allowed: AllowedRoles): FerryError | undefined {
  const roles = Object.prototype.hasOwnProperty.call(allowed, operation) ? allowed[operation] : undefined;
  if (role !== undefined && roles?.some((r) => r === role)) return undefined;
  return WireErrors.make('PeerNotAuthorized', { role: role ?? '(no certificate)', operation });
}

/** Every operation of `ops` allowed to `role`. */
export function allowAll(ops: Readonly<Record<string, unknown>>, roles: readonly PeerRole[]): AllowedRoles {
  return Object.freeze(Object.fromEntries(Object.keys(ops).map((op) => [op, roles])));
}

/**
 * The OU of a verified client certificate, or undefined (plain HTTP, no certificate, or one the
 * TLS layer did not verify: with rejectUnauthorized those never get this far anyway).
 */
export function peerRoleOf(socket: Socket): string | undefined {
  const tls = socket as Partial<TLSSocket>;
  if (typeof tls.getPeerCertificate !== 'function' || tls.authorized !== true) return undefined;
  const ou: unknown = tls.getPeerCertificate().subject?.OU;
  // Node gives an array when the subject repeats OU: ambiguous, so it names no role.
  return typeof ou === 'string' ? ou : undefined;
}
