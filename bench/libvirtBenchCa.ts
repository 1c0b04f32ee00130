/**
 * Throwaway certificates for the libvirt benches (bench/tunnel.ts, bench/migrationLibvirtCase.ts):
 * host certificates for libvirt's own TLS (the per-host TLS directory) and per-migration pairs for
 * the tunnel, all from one CA made with the project's PKI code.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type forge from 'node-forge';
import type { MigrationCredential } from '../nc/hypervisor/driver.js';
import {
  buildCaCertificate, buildComponentCertificate, certificateToPem, generateRsaKeys, privateKeyToPem, serialHex, type KeyPair,
} from '../shared/pki/certificates.js';
import { buildMigrationCertificate, type MigrationSide } from '../shared/pki/migrationCertificates.js';

/** One CA; certificates of either kind share its key pair (generation is the slow part), each its own serial. */
export class BenchCa {
  private readonly keys: KeyPair = generateRsaKeys();
  private readonly now = new Date(Date.now() - 60_000);
  readonly cert: forge.pki.Certificate = buildCaCertificate({ cloudId: 'bench', keys: this.keys, serial: this.serial(), validity: { now: this.now, days: 1 } });
  readonly pem = certificateToPem(this.cert);

  private serial(): string {
    return serialHex(randomBytes(16));
  }

  private credential(cert: forge.pki.Certificate): MigrationCredential {
    return { caPem: this.pem, certPem: certificateToPem(cert), keyPem: privateKeyToPem(this.keys.privateKey) };
  }

  /** For libvirt's TLS: QEMU checks the destination's IP SAN and the CA, nothing about the migration. */
  host(host: string): MigrationCredential {
    return this.credential(buildComponentCertificate({
      cloudId: 'bench', component: { role: 'nc', host }, publicKey: this.keys.publicKey, ca: this.cert, caKey: this.keys.privateKey,
      serial: this.serial(), validity: { now: this.now, days: 1 },
    }));
  }

  /** For the tunnel: the pair the CC issues one migration item. */
  migration(migrationId: string, instanceId: string, from: string, to: string): Record<MigrationSide, MigrationCredential> {
    const one = (side: MigrationSide, host: string, peerHost: string): MigrationCredential => this.credential(buildMigrationCertificate({
      spec: { cloudId: 'bench', migrationId, instanceId, side, host, peerHost }, publicKey: this.keys.publicKey, ca: this.cert,
      caKey: this.keys.privateKey, serial: this.serial(), notBefore: this.now, notAfter: new Date(Date.now() + 3_600_000),
    }));
    return { source: one('source', from, to), destination: one('destination', to, from) };
  }
}

/**
 * libvirt's host TLS directory (qemu.conf's migrate_tls_x509_cert_dir) filled for good with this
 * host's certificate, as both server (incoming) and client (outgoing): what `virsh migrate --tls` uses.
 */
export function writeHostTlsDir(dir: string, cred: MigrationCredential): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'ca-cert.pem'), cred.caPem);
  for (const side of ['server', 'client']) {
    writeFileSync(join(dir, `${side}-cert.pem`), cred.certPem);
    writeFileSync(join(dir, `${side}-key.pem`), cred.keyPem, { mode: 0o600 });
  }
}
