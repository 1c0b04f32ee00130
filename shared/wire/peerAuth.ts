/**
 * Who may call what, and with how much, decided from the caller's verified TLS certificate: its role
 * (OU) and its host (CN, which must be its one IP subjectAltName). An access table gives, per
 * operation, the roles that may call it, what each may send (the body's bytes and the decoder's
 * bounds) and whether the message speaks for the caller's own host. Every decision here is a pure
 * function of (operation, identity, table); the wire server applies them before reading a body.
 */
import type { Socket } from 'node:net';
import type { FerryError } from '../errors/registry.js';
import { verifiedPeerCertificate } from '../net/peerName.js';
import { PEER_ROLES, type PeerRole } from '../pki/spec.js';
import { WireErrors } from './errors.js';
import type { DecodeLimits } from './wireDecoder.js';
import type { WireObject } from './wireValue.js';

/** What one role may send to one operation. */
export interface Grant {
  /** The request's bounds: maxBytes is the body, the rest the decoder's. */
  readonly limits: DecodeLimits;
  /**
   * The request field naming the host the caller speaks for (e.g. ccNodeEvent's `host`): it must be
   * the host the caller's certificate names. Absent: the caller may name any host (a CLC or a CC
   * giving orders about hosts, not speaking as one).
   */
  readonly speaksForHost?: string;
}

/** operation → role → grant. An operation or role missing from the table is refused (fail closed). */
export type AccessTable = Readonly<Record<string, Readonly<Partial<Record<PeerRole, Grant>>>>>;

/** The caller as its verified certificate names it. */
export interface PeerIdentity {
  readonly role: string;
  /** undefined when the certificate does not name exactly one host (CN = the one IP subjectAltName). */
  readonly host: string | undefined;
}

/** Request bounds: a body of maxBytes with at most maxElements elements; the format's own limits for the rest. */
export function requestLimits(maxBytes: number, maxElements: number): DecodeLimits {
  return Object.freeze({
    maxBytes, maxElements,
    // The format puts one attribute on an element (`t`, or `xmlns` on the root).
    maxAttributes: 4,
    maxDepth: 32,
    // The largest string a tier sends is a PEM of a migration credential (16 KiB at most).
    maxTextChars: Math.min(maxBytes, 64 * 1024),
  });
}

/** Requests of a few scalars (ids, a host, a state name, a kind): describes, node events, single-instance steps. */
export const SMALL_REQUEST = requestLimits(4 * 1024, 64);
/** Requests carrying one VM type or the VM type list (ccDescribeResources, ccModifyNode, ncRunInstance). */
export const VM_TYPES_REQUEST = requestLimits(64 * 1024, 2048);
/**
 * Requests whose lists grow with the cluster: instance ids, fenced hosts (up to 100,000), a drain's
 * plan. Their bytes are the server's own cap (maxBodyBytes, 1 MiB by default).
 */
export const BULK_REQUEST = requestLimits(64 * 1024 * 1024, 250_000);

function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

/** The grant of `role` for `operation`, or undefined when it has none. */
export function grantOf(operation: string, role: string | undefined, table: AccessTable): Grant | undefined {
  const grants = own(table, operation);
  if (!grants || role === undefined || !(PEER_ROLES as readonly string[]).includes(role)) return undefined;
  return own(grants as Readonly<Record<string, Grant>>, role);
}

/** The error to answer with, or undefined when the caller may go on. */
export function authorizePeer(operation: string, role: string | undefined, table: AccessTable): FerryError | undefined {
  if (grantOf(operation, role, table)) return undefined;
  return WireErrors.make('PeerNotAuthorized', { role: role ?? '(no certificate)', operation });
}

/** Whether `role` may call any operation of the table: a role that may call none is refused on sight. */
export function mayCallAny(role: string | undefined, table: AccessTable): boolean {
  return Object.keys(table).some((op) => grantOf(op, role, table) !== undefined);
}

/**
 * Without certificates (plaintext) there is no role to hold a caller to: it gets the widest of the
 * operation's grants (largest in every bound), and no host binding.
 */
export function widestGrant(operation: string, table: AccessTable): Grant | undefined {
  const grants = Object.values(own(table, operation) ?? {}).filter((g): g is Grant => g !== undefined);
  if (grants.length === 0) return undefined;
  const max = (f: (l: DecodeLimits) => number): number => Math.max(...grants.map((g) => f(g.limits)));
  return {
    limits: Object.freeze({
      maxBytes: max((l) => l.maxBytes), maxElements: max((l) => l.maxElements), maxAttributes: max((l) => l.maxAttributes),
      maxDepth: max((l) => l.maxDepth), maxTextChars: max((l) => l.maxTextChars),
    }),
  };
}

/** A message that speaks for a host must come from that host's certificate; undefined when it may go on. */
export function checkSpeaksFor(operation: string, grant: Grant, peer: PeerIdentity, body: WireObject): FerryError | undefined {
  if (grant.speaksForHost === undefined) return undefined;
  const named = own(body, grant.speaksForHost);
  if (peer.host !== undefined && typeof named === 'string' && named === peer.host) return undefined;
  return WireErrors.make('PeerHostMismatch', {
    role: peer.role, peerHost: peer.host ?? '(no single host)', operation, host: typeof named === 'string' ? named : '(none)',
  });
}

/** An operation only `role` may call, sending at most `limits`. */
export function only(role: PeerRole, limits: DecodeLimits): Readonly<Partial<Record<PeerRole, Grant>>> {
  return Object.freeze({ [role]: Object.freeze({ limits }) });
}

/** The IP addresses of a subjectAltName as Node prints it ("IP Address:127.0.1.1, DNS:x"). */
function ipAltNames(altNames: string | undefined): string[] {
  return (altNames ?? '').split(', ').filter((n) => n.startsWith('IP Address:')).map((n) => n.slice('IP Address:'.length));
}

/**
 * The role and host of a verified client certificate, or undefined (plain HTTP, no certificate, or
 * one the TLS layer did not verify: with rejectUnauthorized those never get this far anyway). A
 * repeated OU names no role; a CN that is not the certificate's one IP subjectAltName names no host
 * (ferry-init writes both alike: shared/pki/certificates.ts).
 */
export function peerIdentityOf(socket: Socket): PeerIdentity | undefined {
  const cert = verifiedPeerCertificate(socket);
  if (!cert) return undefined;
  const ou: unknown = cert.subject?.OU;
  const cn: unknown = cert.subject?.CN;
  if (typeof ou !== 'string') return undefined;
  const ips = ipAltNames(cert.subjectaltname);
  const host = typeof cn === 'string' && ips.length === 1 && ips[0] === cn ? cn : undefined;
  return { role: ou, host };
}
