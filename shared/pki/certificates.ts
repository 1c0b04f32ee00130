/**
 * Building the cloud's certificates from a spec (pure: keys, serials and `now` are inputs, so the
 * same inputs give the same certificate). node-forge does the ASN.1; nothing here touches a disk.
 */
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { PkiErrors } from './errors.js';
import { isPeerRole, type ComponentSpec, type PeerRole } from './spec.js';

export interface KeyPair {
  readonly publicKey: forge.pki.rsa.PublicKey;
  readonly privateKey: forge.pki.rsa.PrivateKey;
}

export interface Validity {
  readonly now: Date;
  readonly days: number;
}

/** Long-lived root; rotating it means re-issuing everything (docs/SECURITY.md). */
export const CA_VALIDITY_DAYS = 3650;
/** Components are re-issued by re-running ferry-init --force. */
export const COMPONENT_VALIDITY_DAYS = 825;
export const RSA_BITS = 2048;

const DAY_MS = 86_400_000;
/** Clocks of hosts differ a little; a certificate valid from a minute ago is not refused by a slow one. */
const BACKDATE_MS = 60_000;

export function organizationOf(cloudId: string): string {
  return `Ferry cloud ${cloudId}`;
}

function setValidity(cert: forge.pki.Certificate, v: Validity): void {
  cert.validity.notBefore = new Date(v.now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = new Date(v.now.getTime() + v.days * DAY_MS);
}

/**
 * A positive, minimally encoded DER integer: first byte 0x40-0x7f (high bit clear, and never a
 * leading zero, which OpenSSL 3 refuses as bad padding).
 */
export function serialHex(bytes: Uint8Array): string {
  if (bytes.length < 8) throw PkiErrors.make('InvalidPkiSpec', { detail: 'serial must be at least 8 bytes' });
  const hex = Buffer.from(bytes).toString('hex');
  return ((Number.parseInt(hex.slice(0, 2), 16) & 0x3f) | 0x40).toString(16).padStart(2, '0') + hex.slice(2);
}

export interface CaInput {
  readonly cloudId: string;
  /** Default `Ferry cloud CA <cloudId>`; the migration CA is another root with its own name. */
  readonly commonName?: string;
  readonly keys: KeyPair;
  readonly serial: string;
  readonly validity: Validity;
}

export function buildCaCertificate(i: CaInput): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = i.keys.publicKey;
  cert.serialNumber = i.serial;
  setValidity(cert, i.validity);
  const subject = [
    { shortName: 'CN', value: i.commonName ?? `Ferry cloud CA ${i.cloudId}` },
    { shortName: 'O', value: organizationOf(i.cloudId) },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(i.keys.privateKey, forge.md.sha256.create());
  return cert;
}

export interface ComponentInput {
  readonly cloudId: string;
  readonly component: ComponentSpec;
  readonly publicKey: forge.pki.rsa.PublicKey;
  readonly ca: forge.pki.Certificate;
  readonly caKey: forge.pki.rsa.PrivateKey;
  readonly serial: string;
  readonly validity: Validity;
}

/** CN=<host>, OU=<role>, O=Ferry cloud <id>; IP SAN = host; usable as TLS server and client. */
export function buildComponentCertificate(i: ComponentInput): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = i.publicKey;
  cert.serialNumber = i.serial;
  setValidity(cert, i.validity);
  cert.setSubject([
    { shortName: 'CN', value: i.component.host },
    { shortName: 'OU', value: i.component.role },
    { shortName: 'O', value: organizationOf(i.cloudId) },
  ]);
  cert.setIssuer(i.ca.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    // Every tier both serves and calls (CC→NC calls, NC→CC events), so one certificate does both.
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 7, ip: i.component.host }] },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: i.ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  signWithOpenSsl(cert, i.caKey);
  return cert;
}

const nativeKeys = new WeakMap<forge.pki.rsa.PrivateKey, KeyObject>();

/**
 * Signs the certificate as forge would (sha256WithRSAEncryption), but with OpenSSL: forge's RSA is
 * pure JavaScript, ~70 ms per 2048-bit signature on the CC's event loop for every credential (and
 * per component in ferry-init: 10,000 hosts took 16 minutes), where OpenSSL takes well under one. PKCS#1 v1.5 is deterministic: the bytes are the same.
 */
export function signWithOpenSsl(cert: forge.pki.Certificate, caKey: forge.pki.rsa.PrivateKey): void {
  let key = nativeKeys.get(caKey);
  if (!key) {
    key = createPrivateKey(forge.pki.privateKeyToPem(caKey));
    nativeKeys.set(caKey, key);
  }
  const native = key;
  // forge's sign() sets the signature algorithm and the TBSCertificate, then asks the key to sign.
  const signer = { sign: (): string => sign('sha256', Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), 'binary'), native).toString('binary') };
  cert.sign(signer as unknown as forge.pki.rsa.PrivateKey, forge.md.sha256.create());
}

export interface CertificateIdentity {
  readonly role: PeerRole;
  readonly host: string;
  readonly organization: string;
}

/** Reads role (OU), host (CN) and organization back from a component certificate. */
export function identityOf(cert: forge.pki.Certificate): CertificateIdentity {
  const field = (shortName: string): unknown => cert.subject.getField({ shortName })?.value;
  const role = field('OU');
  const host = field('CN');
  const organization = field('O');
  if (!isPeerRole(role) || typeof host !== 'string' || typeof organization !== 'string') {
    throw PkiErrors.make('InvalidPkiSpec', { detail: `certificate subject does not name a Ferry component (OU=${String(role)})` });
  }
  return { role, host, organization };
}

export const certificateToPem = (c: forge.pki.Certificate): string => forge.pki.certificateToPem(c);
export const privateKeyToPem = (k: forge.pki.rsa.PrivateKey): string => forge.pki.privateKeyToPem(k);

/**
 * The one effectful helper here: fresh RSA keys from Node's native generator (node-forge's own,
 * synchronous one is pure JavaScript: ~0.4 s per 2048-bit key, paid per component by every test cloud).
 */
export function generateRsaKeys(bits = RSA_BITS): KeyPair {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: bits, publicExponent: 0x10001, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const key = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  return { privateKey: key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) };
}
