/**
 * Whether the peer of a migration stream may take part in it: the check each side makes of the
 * other's certificate, from nothing but its own credential (the CA it was given and its own
 * certificate, which names the migration item and the peer host). Pure given the parsed
 * certificates, `now` and the set of serials already used.
 */
import { X509Certificate } from 'node:crypto';
import { MIGRATION_ROLES, parseMigrationUri, type MigrationSide } from './migrationCertificates.js';

export interface MigrationIdentity {
  readonly side: MigrationSide;
  readonly host: string;
  readonly migrationId: string;
  readonly instanceId: string;
  readonly peerHost: string;
  /** Which pair of the item's credentials (0 first; a re-join's re-issue is the next). */
  readonly generation: number;
  /** Upper-case hex, as Node prints it. */
  readonly serial: string;
  readonly notBefore: number;
  readonly notAfter: number;
}

/** Why a peer was refused; each is a `reason` of MigrationCredentialRejected. */
export type PeerRefusal =
  /** The peer presented no certificate. */
  | 'no-certificate'
  /** Not signed by this migration's CA (another CA, self-signed, or a tier certificate). */
  | 'foreign-ca'
  /** Issued for later (its migration has not been prepared yet). */
  | 'not-yet-valid'
  | 'expired'
  /** Not a migration certificate of the other side. */
  | 'wrong-role'
  /** For another migration or another instance. */
  | 'other-migration'
  /** For another host pair. */
  | 'other-host'
  /** Of another generation of the same item's credentials: one side holds a pair re-issued since. */
  | 'superseded'
  /** Its serial was used for a stream already (replay). */
  | 'replayed';

export type PeerCheck =
  | { readonly ok: true; readonly peer: MigrationIdentity }
  | { readonly ok: false; readonly reason: PeerRefusal; readonly detail: string };

function field(subject: string, name: string): string | undefined {
  return new RegExp(`^${name}=(.*)$`, 'm').exec(subject)?.[1];
}

/** Reads a migration certificate's identity; undefined when it is not one. */
export function migrationIdentityOf(cert: X509Certificate): MigrationIdentity | undefined {
  const ou = field(cert.subject, 'OU');
  const side = (Object.keys(MIGRATION_ROLES) as MigrationSide[]).find((s) => MIGRATION_ROLES[s] === ou);
  const host = field(cert.subject, 'CN');
  const uri = /(?:^|, )URI:([^,]+)/.exec(cert.subjectAltName ?? '')?.[1];
  const bound = uri !== undefined ? parseMigrationUri(uri) : undefined;
  if (!side || !host || !bound) return undefined;
  return {
    side, host, ...bound, serial: cert.serialNumber.toUpperCase(),
    notBefore: Date.parse(cert.validFrom), notAfter: Date.parse(cert.validTo),
  };
}

export interface PeerCheckInput {
  /** This side's own identity (from its own certificate). */
  readonly own: MigrationIdentity;
  /** The migration CA this side was given with its credential. */
  readonly ca: X509Certificate;
  /** What the peer presented in the TLS handshake. */
  readonly peer: X509Certificate | undefined;
  readonly now: number;
  /** Serials already used for a stream. */
  readonly used: (serial: string) => boolean;
}

const refuse = (reason: PeerRefusal, detail: string): PeerCheck => ({ ok: false, reason, detail });

export function checkMigrationPeer(i: PeerCheckInput): PeerCheck {
  const { own, ca, peer, now } = i;
  if (!peer) return refuse('no-certificate', 'the peer presented no certificate');
  let signed = false;
  try {
    signed = peer.checkIssued(ca) && peer.verify(ca.publicKey);
  } catch {
    signed = false;
  }
  if (!signed) return refuse('foreign-ca', `certificate of ${peer.subject.replace(/\n/g, ', ')} was not issued by this migration's CA`);
  const id = migrationIdentityOf(peer);
  const wanted: MigrationSide = own.side === 'source' ? 'destination' : 'source';
  if (!id || id.side !== wanted) return refuse('wrong-role', `not a ${MIGRATION_ROLES[wanted]} certificate`);
  if (now < id.notBefore) return refuse('not-yet-valid', `valid only from ${new Date(id.notBefore).toISOString()}`);
  if (now > id.notAfter) return refuse('expired', `expired at ${new Date(id.notAfter).toISOString()}`);
  if (id.migrationId !== own.migrationId || id.instanceId !== own.instanceId) {
    return refuse('other-migration', `issued for ${id.migrationId}/${id.instanceId}, not ${own.migrationId}/${own.instanceId}`);
  }
  if (id.host !== own.peerHost || id.peerHost !== own.host) {
    return refuse('other-host', `issued to ${id.host} for peer ${id.peerHost}, expected ${own.peerHost} for peer ${own.host}`);
  }
  // Either way round: the older pair was superseded by a re-issue for a re-join.
  if (id.generation !== own.generation) {
    return refuse('superseded', `of credential generation ${id.generation}, this migration now uses generation ${own.generation}`);
  }
  if (i.used(id.serial)) return refuse('replayed', `serial ${id.serial} was already used for a stream`);
  return { ok: true, peer: id };
}

/**
 * The identity a credential's own certificate names; undefined when it is not a readable migration
 * certificate. An NC reads it for the generation only: the hypervisors make every check.
 */
export function credentialIdentity(credential: { readonly certPem: string }): MigrationIdentity | undefined {
  try {
    return migrationIdentityOf(new X509Certificate(credential.certPem));
  } catch {
    return undefined;
  }
}
