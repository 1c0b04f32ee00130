/**
 * What one ferry-init run produces, as data: the PEM files to write, with their modes. Keys,
 * serials and `now` come in, so this is deterministic under test; writing is pkiFiles.ts's job.
 */
import type forge from 'node-forge';
import {
  buildCaCertificate, buildComponentCertificate, CA_VALIDITY_DAYS, certificateToPem, COMPONENT_VALIDITY_DAYS,
  privateKeyToPem, type KeyPair,
} from './certificates.js';
import { CA_CERT_FILE, CA_KEY_FILE, CERT_MODE, certFileOf, KEY_MODE, keyFileOf, MIGRATION_CA_CERT_FILE, MIGRATION_CA_KEY_FILE } from './layout.js';
import { migrationCaName } from './migrationCertificates.js';
import type { CloudPkiSpec, ComponentSpec } from './spec.js';

export interface PkiFile {
  readonly name: string;
  readonly contents: string;
  readonly mode: number;
}

export interface ExistingCa {
  readonly cert: forge.pki.Certificate;
  readonly key: forge.pki.rsa.PrivateKey;
}

export interface IssueInput {
  readonly spec: CloudPkiSpec;
  /** Reuse this CA (an existing ca.pem/ca.key) instead of creating one. */
  readonly ca?: ExistingCa;
  /** Components whose files are kept as they are (not re-issued). */
  readonly keep: (c: ComponentSpec) => boolean;
  readonly newKeys: () => KeyPair;
  readonly newSerial: () => string;
  readonly now: Date;
  /** Also issue the migration CA (a new cloud, a rotated CA, or a directory made before it existed). */
  readonly issueMigrationCa: boolean;
}

export function issueCloudPki(i: IssueInput): PkiFile[] {
  const files: PkiFile[] = [];
  let ca = i.ca;
  if (!ca) {
    const keys = i.newKeys();
    const cert = buildCaCertificate({ cloudId: i.spec.cloudId, keys, serial: i.newSerial(), validity: { now: i.now, days: CA_VALIDITY_DAYS } });
    ca = { cert, key: keys.privateKey };
    files.push({ name: CA_CERT_FILE, contents: certificateToPem(cert), mode: CERT_MODE });
    files.push({ name: CA_KEY_FILE, contents: privateKeyToPem(keys.privateKey), mode: KEY_MODE });
  }
  if (i.issueMigrationCa) {
    const keys = i.newKeys();
    const cert = buildCaCertificate({
      cloudId: i.spec.cloudId, commonName: migrationCaName(i.spec.cloudId), keys, serial: i.newSerial(),
      validity: { now: i.now, days: CA_VALIDITY_DAYS },
    });
    files.push({ name: MIGRATION_CA_CERT_FILE, contents: certificateToPem(cert), mode: CERT_MODE });
    files.push({ name: MIGRATION_CA_KEY_FILE, contents: privateKeyToPem(keys.privateKey), mode: KEY_MODE });
  }
  for (const component of i.spec.components) {
    if (i.keep(component)) continue;
    const keys = i.newKeys();
    const cert = buildComponentCertificate({
      cloudId: i.spec.cloudId, component, publicKey: keys.publicKey, ca: ca.cert, caKey: ca.key,
      serial: i.newSerial(), validity: { now: i.now, days: COMPONENT_VALIDITY_DAYS },
    });
    files.push({ name: certFileOf(component.role, component.host), contents: certificateToPem(cert), mode: CERT_MODE });
    files.push({ name: keyFileOf(component.role, component.host), contents: privateKeyToPem(keys.privateKey), mode: KEY_MODE });
  }
  return files;
}
