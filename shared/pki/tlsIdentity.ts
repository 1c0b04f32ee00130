/**
 * A daemon's TLS material, read once at start from the directory ferry-init wrote (`--tls-dir`):
 * the cloud CA and this component's certificate and key. Missing or mislabelled files are coded
 * start-up errors, never a silent fallback to plaintext.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PkiErrors } from './errors.js';
import { CA_CERT_FILE, certFileOf, keyFileOf } from './layout.js';
import type { PeerRole } from './spec.js';

export interface TlsIdentity {
  readonly role: PeerRole;
  readonly host: string;
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** The OU of an X.509 subject as Node prints it ("CN=…\nOU=cc\nO=…"). */
export function roleInSubject(subject: string): string | undefined {
  return /^OU=(.*)$/m.exec(subject)?.[1];
}

export function loadTlsIdentity(dir: string, role: PeerRole, host: string): TlsIdentity {
  const read = (file: string): Buffer => {
    const path = join(dir, file);
    if (!existsSync(path)) throw PkiErrors.make('TlsFileMissing', { dir, file, role, host });
    try {
      return readFileSync(path);
    } catch (e) {
      throw PkiErrors.make('TlsFileUnreadable', { path, detail: (e as Error).message });
    }
  };
  const ca = read(CA_CERT_FILE);
  const cert = read(certFileOf(role, host));
  const key = read(keyFileOf(role, host));
  const certPath = join(dir, certFileOf(role, host));
  let actual: string | undefined;
  try {
    actual = roleInSubject(new X509Certificate(cert).subject);
    // Parsed only so that a broken CA file fails at start rather than at the first handshake.
    void new X509Certificate(ca);
  } catch (e) {
    throw PkiErrors.make('TlsFileUnreadable', { path: certPath, detail: (e as Error).message });
  }
  if (actual !== role) throw PkiErrors.make('CertificateRoleMismatch', { path: certPath, actual: actual ?? '(none)', expected: role });
  return Object.freeze({ role, host, ca, cert, key });
}
