/** A small in-memory cloud PKI for tests: keys are made once per file (RSA generation is the slow part). */
import forge from 'node-forge';
import { buildCaCertificate, buildComponentCertificate, generateRsaKeys, type KeyPair } from '../../../shared/pki/certificates.js';
import type { ComponentSpec } from '../../../shared/pki/spec.js';

export const NOW = new Date('2026-11-22T06:00:00Z');

export interface TestCa {
  readonly cloudId: string;
  readonly keys: KeyPair;
  readonly cert: forge.pki.Certificate;
}

let serial = 0x10;
/** Starts with 0x01: a leading zero byte would be bad DER that OpenSSL refuses. */
export const nextSerial = (): string => `01${(serial++).toString(16).padStart(14, '0')}`;

/** `now`: NOW for fixed-time assertions; the real time when a TLS stack will check validity. */
export function makeCa(cloudId: string, keys: KeyPair = generateRsaKeys(), now: Date = NOW): TestCa {
  return { cloudId, keys, cert: buildCaCertificate({ cloudId, keys, serial: nextSerial(), validity: { now, days: 30 } }) };
}

export interface TestComponent {
  readonly certPem: string;
  readonly keyPem: string;
  readonly cert: forge.pki.Certificate;
}

export function issue(ca: TestCa, component: ComponentSpec, keys: KeyPair, now: Date = NOW): TestComponent {
  const cert = buildComponentCertificate({
    cloudId: ca.cloudId, component, publicKey: keys.publicKey, ca: ca.cert, caKey: ca.keys.privateKey, serial: nextSerial(),
    validity: { now, days: 10 },
  });
  return { cert, certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}
