/**
 * The lab BMC's certificate: self-signed, like a BMC's factory certificate, for its loopback address
 * (IP SAN), so fence_redfish works with ssl_insecure=1 and also verifies it when given the PEM as its
 * CA bundle (REQUESTS_CA_BUNDLE).
 */
import { randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { certificateToPem, generateRsaKeys, privateKeyToPem, serialHex } from '../../shared/pki/certificates.js';

export interface LabTlsIdentity {
  readonly certPem: string;
  readonly keyPem: string;
}

const VALIDITY_MS = 7 * 86_400_000;
/** A slow clock elsewhere on the machine does not see it as not yet valid. */
const BACKDATE_MS = 60_000;

export function selfSignedBmcIdentity(address: string, now: Date): LabTlsIdentity {
  const keys = generateRsaKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serialHex(randomBytes(16));
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = new Date(now.getTime() + VALIDITY_MS);
  const subject = [{ shortName: 'CN', value: address }, { shortName: 'O', value: 'Ferry fencing lab BMC' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    // A trust anchor for the one client that is given it, and a server certificate for its address.
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 7, ip: address }] },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: certificateToPem(cert), keyPem: privateKeyToPem(keys.privateKey) };
}
