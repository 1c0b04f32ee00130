/**
 * Migration CAs and credentials for tests, built with the project's own PKI code: any validity, any
 * host pair, from the cloud's migration CA or from a foreign one. One RSA pair per CA (generation is
 * the slow part); each certificate still gets its own serial.
 */
import forge from 'node-forge';
import { randomBytes } from 'node:crypto';
import type { MigrationCa } from '../../cc/migration/credentialIssuer.js';
import { buildCaCertificate, certificateToPem, generateRsaKeys, privateKeyToPem, serialHex, type KeyPair } from '../../shared/pki/certificates.js';
import { buildMigrationCertificate, migrationCaName, type MigrationCertSpec } from '../../shared/pki/migrationCertificates.js';
import type { MigrationCredential } from '../../shared/protocol/migrationProtocol.js';

export interface TestMigrationCa extends MigrationCa {
  readonly keys: KeyPair;
}

export function makeMigrationCa(cloudId = 'test', now = Date.now()): TestMigrationCa {
  const keys = generateRsaKeys();
  const cert = buildCaCertificate({
    cloudId, commonName: migrationCaName(cloudId), keys, serial: serialHex(randomBytes(16)), validity: { now: new Date(now), days: 1 },
  });
  return { cloudId, keys, cert, key: keys.privateKey, certPem: certificateToPem(cert) };
}

export interface CredentialOptions {
  /** Default: a minute ago to ten minutes from now. */
  readonly notBefore?: number;
  readonly notAfter?: number;
}

export function credentialFor(ca: TestMigrationCa, spec: Omit<MigrationCertSpec, 'cloudId'>, o: CredentialOptions = {}): MigrationCredential {
  const now = Date.now();
  const cert = buildMigrationCertificate({
    spec: { ...spec, cloudId: ca.cloudId }, publicKey: ca.keys.publicKey, ca: ca.cert, caKey: ca.key, serial: serialHex(randomBytes(16)),
    notBefore: new Date(o.notBefore ?? now - 60_000), notAfter: new Date(o.notAfter ?? now + 600_000),
  });
  return { caPem: ca.certPem, certPem: forge.pki.certificateToPem(cert), keyPem: privateKeyToPem(ca.keys.privateKey) };
}

/** Both sides of one migration item, from one CA; `generation` as a re-join's re-issue names it (default 0). */
export function credentialPair(
  ca: TestMigrationCa, item: { migrationId: string; instanceId: string; source: string; destination: string; generation?: number }, o: CredentialOptions = {},
): { source: MigrationCredential; destination: MigrationCredential } {
  const { migrationId, instanceId, source, destination, generation = 0 } = item;
  return {
    source: credentialFor(ca, { migrationId, instanceId, side: 'source', host: source, peerHost: destination, generation }, o),
    destination: credentialFor(ca, { migrationId, instanceId, side: 'destination', host: destination, peerHost: source, generation }, o),
  };
}
