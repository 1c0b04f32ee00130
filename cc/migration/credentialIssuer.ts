/**
 * The CC issues each migration item's credentials (shared/pki/migrationCertificates.ts): one for the
 * destination when it is prepared, one for the source when it is told to commit, and, when a source
 * NC lost its credential before its hypervisor started the migration, both again with the next
 * generation (coordinator.ts, the re-join rule). Nothing is kept: the key pair goes out in the NC
 * call (over mutual TLS) and is forgotten here; a repeat of the call gets a fresh pair. Key
 * generation runs on libuv's pool (node:crypto), off the event loop.
 */
import { generateKeyPair, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import forge from 'node-forge';
import type { Clock } from '../../shared/clock.js';
import { certificateToPem, RSA_BITS, serialHex } from '../../shared/pki/certificates.js';
import { PkiErrors } from '../../shared/pki/errors.js';
import { MIGRATION_CA_CERT_FILE, MIGRATION_CA_KEY_FILE } from '../../shared/pki/layout.js';
import { buildMigrationCertificate, type MigrationSide } from '../../shared/pki/migrationCertificates.js';
import type { MigrationCredential } from '../../shared/protocol/migrationProtocol.js';

export interface CredentialRequest {
  readonly migrationId: string;
  readonly instanceId: string;
  readonly side: MigrationSide;
  readonly host: string;
  readonly peerHost: string;
  /** 0 for the item's first pair; the generation a re-joining source asked for otherwise. */
  readonly generation: number;
  /** From now (prepare or commit) until soon after the migration's own timeout. */
  readonly lifetimeMs: number;
}

/** Narrow interface: the plan driver asks for a credential; tests give a fake. */
export interface CredentialIssuer {
  issue(r: CredentialRequest): Promise<MigrationCredential>;
}

export interface MigrationCa {
  readonly certPem: string;
  readonly cert: forge.pki.Certificate;
  readonly key: forge.pki.rsa.PrivateKey;
  readonly cloudId: string;
}

/** Reads migration-ca.pem/.key from the CC's --tls-dir; coded errors when missing or unreadable. */
export function loadMigrationCa(dir: string): MigrationCa {
  const read = (file: string): string => {
    const path = join(dir, file);
    if (!existsSync(path)) throw PkiErrors.make('TlsFileMissing', { dir, file, role: 'the migration', host: 'CA' });
    return readFileSync(path, 'utf8');
  };
  const certPem = read(MIGRATION_CA_CERT_FILE);
  const keyPem = read(MIGRATION_CA_KEY_FILE);
  try {
    const cert = forge.pki.certificateFromPem(certPem);
    const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
    const org = cert.subject.getField({ shortName: 'O' })?.value;
    const cloudId = typeof org === 'string' ? org.replace(/^Ferry cloud /, '') : 'unknown';
    return { certPem, cert, key, cloudId };
  } catch (e) {
    throw PkiErrors.make('TlsFileUnreadable', { path: join(dir, MIGRATION_CA_CERT_FILE), detail: (e as Error).message });
  }
}

const generateRsa = promisify(generateKeyPair);

/**
 * The hosts that check a credential read their own clocks, not the CC's: the window is widened by
 * this much on both sides, so a hypervisor up to a minute behind (or ahead of) the CC accepts a
 * credential issued a moment ago (found by the simulator's clock skew, docs/SIMULATION.md). The
 * same allowance the component certificates are backdated by (shared/pki/certificates.ts).
 */
export const CREDENTIAL_CLOCK_SKEW_MS = 60_000;

/** A key pair in PEM (SPKI public, PKCS#8 private). */
export interface PemKeyPair {
  readonly publicKey: string;
  readonly privateKey: string;
}

/** Where an issuer's key pairs and serials come from: fresh and random for a CC; the simulator gives its own. */
export interface IssuerSources {
  readonly keyPair: () => Promise<PemKeyPair>;
  readonly serial: () => string;
}

/** A fresh RSA pair per credential, generated on libuv's pool, and a random 128-bit serial. */
export const RANDOM_ISSUER_SOURCES: IssuerSources = Object.freeze({
  keyPair: () => generateRsa('rsa', {
    modulusLength: RSA_BITS,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }),
  serial: () => serialHex(randomBytes(16)),
});

export function caCredentialIssuer(ca: MigrationCa, clock: Clock, sources: IssuerSources = RANDOM_ISSUER_SOURCES): CredentialIssuer {
  return {
    async issue(r) {
      const { publicKey, privateKey } = await sources.keyPair();
      // Whole seconds: X.509 times have no finer grain, and "not valid before prepare" must hold
      // on the peer's clock too (CREDENTIAL_CLOCK_SKEW_MS).
      const now = Math.floor(clock.now() / 1000) * 1000;
      const cert = buildMigrationCertificate({
        spec: { cloudId: ca.cloudId, migrationId: r.migrationId, instanceId: r.instanceId, side: r.side, host: r.host, peerHost: r.peerHost, generation: r.generation },
        publicKey: forge.pki.publicKeyFromPem(publicKey) as forge.pki.rsa.PublicKey,
        ca: ca.cert, caKey: ca.key, serial: sources.serial(),
        notBefore: new Date(now - CREDENTIAL_CLOCK_SKEW_MS), notAfter: new Date(now + r.lifetimeMs + CREDENTIAL_CLOCK_SKEW_MS),
      });
      return { caPem: ca.certPem, certPem: certificateToPem(cert), keyPem: privateKey };
    },
  };
}
