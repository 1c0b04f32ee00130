/**
 * The libvirt lab (scripts/libvirtLab.ts) for integration tests: started before a file's tests and
 * stopped after them, and throwaway TLS credentials issued with the project's PKI code. A lab that
 * cannot start is a test failure with the script's output, never a silent skip.
 */
import forge from 'node-forge';
import { afterAll, beforeAll } from 'vitest';
import {
  buildCaCertificate, buildComponentCertificate, certificateToPem, generateRsaKeys, privateKeyToPem,
} from '../../shared/pki/certificates.js';
import type { MigrationCredential } from '../../nc/hypervisor/driver.js';
import { startLab, stopLab, type Lab } from '../../scripts/libvirtLab.js';

export { buildGuest, labLayout, prepareLab, runHostCommand, startLab, stopLab, virsh, type Lab, type LabHost } from '../../scripts/libvirtLab.js';

export interface TestCa {
  readonly caPem: string;
  issue(host: string): MigrationCredential;
}

/** A CA and per-host certificates shaped like the cloud's (IP SAN = host, server and client use). */
export function testCa(cloudId: string): TestCa {
  const keys = generateRsaKeys(2048);
  const now = new Date(Date.now() - 60_000);
  const serial = (): string => '4' + forge.util.bytesToHex(forge.random.getBytesSync(9)).slice(1);
  const ca = buildCaCertificate({ cloudId, keys, serial: serial(), validity: { now, days: 1 } });
  const caPem = certificateToPem(ca);
  return {
    caPem,
    issue(host) {
      const k = generateRsaKeys(2048);
      const cert = buildComponentCertificate({
        cloudId, component: { role: 'nc', host }, publicKey: k.publicKey, ca, caKey: keys.privateKey, serial: serial(), validity: { now, days: 1 },
      });
      return { caPem, certPem: certificateToPem(cert), keyPem: privateKeyToPem(k.privateKey) };
    },
  };
}

/** A file's lab and the cloud on it: started before its tests (lab first), stopped after them (cloud first). */
export function runCloudOnLab(lab: Lab, cloud: { start(): Promise<void>; destroy(): Promise<void> }): void {
  beforeAll(async () => {
    await startLab(lab);
    await cloud.start();
  }, 600_000);
  afterAll(async () => {
    await cloud.destroy();
    await stopLab(lab);
  }, 120_000);
}
