/**
 * Per-migration credentials (the Eucalyptus 3.3 spec's list): for each migration item the CC issues
 * the source and the destination a certificate of their own from the cloud's MIGRATION CA — a root
 * kept apart from the tier CA, so a migration certificate can never authenticate to a CC or an NC
 * API. A certificate names, and is only good for:
 *   subject  CN=<host>, OU=migration-source | migration-destination, O=Ferry cloud <id>
 *   SAN      IP:<host>, URI:urn:ferry:migration:<migrationId>:<instanceId>:gen:<generation>:peer:<peerHost>
 *   validity from its issue (prepare or commit) to soon after the migration's own timeout
 *   serial   fresh, random; a key pair fresh per certificate
 * The generation is 0 for an item's first pair; a source NC that lost its credential before its
 * hypervisor started the migration asks for the next one, and the CC issues both sides a new pair of
 * that generation (docs/SECURITY.md, "Re-joining"): a pair accepts only its own generation, so every
 * credential of an earlier one is superseded.
 * Building is pure (keys, serial and times are inputs); node-forge does the ASN.1.
 */
import forge from 'node-forge';
import { PkiErrors } from './errors.js';
import { organizationOf, signWithOpenSsl } from './certificates.js';

export type MigrationSide = 'source' | 'destination';

/** The OU of each side's certificate. */
export const MIGRATION_ROLES: Readonly<Record<MigrationSide, string>> = Object.freeze({
  source: 'migration-source',
  destination: 'migration-destination',
});

export interface MigrationCertSpec {
  readonly cloudId: string;
  readonly migrationId: string;
  readonly instanceId: string;
  readonly side: MigrationSide;
  /** The host this certificate speaks for. */
  readonly host: string;
  /** The only host it may talk to in this migration (the other side). */
  readonly peerHost: string;
  /** Which pair of the item this is: 0 first, one more per re-issue for a re-join (absent: 0). */
  readonly generation?: number;
}

const URI_PREFIX = 'urn:ferry:migration:';

/** The SAN URI that binds a certificate to one migration item, one generation of its credentials and its peer. */
export function migrationUri(s: Pick<MigrationCertSpec, 'migrationId' | 'instanceId' | 'peerHost' | 'generation'>): string {
  return `${URI_PREFIX}${s.migrationId}:${s.instanceId}:gen:${s.generation ?? 0}:peer:${s.peerHost}`;
}

export interface MigrationBinding {
  readonly migrationId: string;
  readonly instanceId: string;
  readonly generation: number;
  readonly peerHost: string;
}

/** Parses migrationUri's output; undefined for anything else. */
export function parseMigrationUri(uri: string): MigrationBinding | undefined {
  const m = /^urn:ferry:migration:([A-Za-z0-9-]+):([A-Za-z0-9-]+):gen:(0|[1-9][0-9]{0,8}):peer:([0-9.]+)$/.exec(uri);
  return m?.[1] && m[2] && m[3] && m[4] ? { migrationId: m[1], instanceId: m[2], generation: Number(m[3]), peerHost: m[4] } : undefined;
}

/** The migration CA's subject name: a self-signed root of its own, built by buildCaCertificate. */
export const migrationCaName = (cloudId: string): string => `Ferry migration CA ${cloudId}`;

export interface MigrationCertInput {
  readonly spec: MigrationCertSpec;
  readonly publicKey: forge.pki.rsa.PublicKey;
  readonly ca: forge.pki.Certificate;
  readonly caKey: forge.pki.rsa.PrivateKey;
  readonly serial: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
}

export function buildMigrationCertificate(i: MigrationCertInput): forge.pki.Certificate {
  const { spec } = i;
  if (i.notAfter.getTime() <= i.notBefore.getTime()) {
    throw PkiErrors.make('InvalidPkiSpec', { detail: 'a migration certificate must end after it starts' });
  }
  const cert = forge.pki.createCertificate();
  cert.publicKey = i.publicKey;
  cert.serialNumber = i.serial;
  cert.validity.notBefore = i.notBefore;
  cert.validity.notAfter = i.notAfter;
  cert.setSubject([
    { shortName: 'CN', value: spec.host },
    { shortName: 'OU', value: MIGRATION_ROLES[spec.side] },
    { shortName: 'O', value: organizationOf(spec.cloudId) },
  ]);
  cert.setIssuer(i.ca.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    // The source dials (TLS client), the destination accepts (TLS server): each is good for its part only.
    { name: 'extKeyUsage', serverAuth: spec.side === 'destination', clientAuth: spec.side === 'source' },
    { name: 'subjectAltName', altNames: [{ type: 7, ip: spec.host }, { type: 6, value: migrationUri(spec) }] },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: i.ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  signWithOpenSsl(cert, i.caKey);
  return cert;
}
