import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { describe, expect, it } from 'vitest';
import { certificateToPem, generateRsaKeys, identityOf, serialHex } from '../../../shared/pki/certificates.js';
import { buildCloudPkiSpec } from '../../../shared/pki/spec.js';
import { issue, makeCa, NOW } from './fixtures.js';

const keys = generateRsaKeys();
const ca = makeCa('c1', keys);
const nc = issue(ca, { role: 'nc', host: '127.0.1.2' }, keys);

/** Read back from PEM, so the test sees what a peer decodes, every flag included. */
function ext<T>(cert: forge.pki.Certificate, name: string): T {
  const e = forge.pki.certificateFromPem(certificateToPem(cert)).getExtension(name);
  if (!e) throw new Error(`no ${name}`);
  return e as T;
}

describe('the cloud CA certificate', () => {
  it('is a self-signed CA that may only sign certificates', () => {
    expect(ca.cert.verify(ca.cert)).toBe(true);
    expect(ext<{ cA: boolean; critical: boolean }>(ca.cert, 'basicConstraints')).toMatchObject({ cA: true, critical: true });
    expect(ext<Record<string, boolean>>(ca.cert, 'keyUsage')).toMatchObject({ keyCertSign: true, cRLSign: true, digitalSignature: false });
    expect(ca.cert.subject.getField('O')?.value).toBe('Ferry cloud c1');
    const x = new X509Certificate(certificateToPem(ca.cert));
    expect(x.ca).toBe(true);
  });
});

describe('a component certificate', () => {
  it('names host (CN), role (OU) and cloud (O) and carries the host as an IP SAN', () => {
    expect(nc.cert.subject.getField('CN')?.value).toBe('127.0.1.2');
    expect(nc.cert.subject.getField('OU')?.value).toBe('nc');
    expect(nc.cert.subject.getField('O')?.value).toBe('Ferry cloud c1');
    expect(new X509Certificate(nc.certPem).subjectAltName).toBe('IP Address:127.0.1.2');
    expect(new X509Certificate(nc.certPem).checkIP('127.0.1.2')).toBe('127.0.1.2');
    expect(new X509Certificate(nc.certPem).checkIP('127.0.1.3')).toBeUndefined();
  });

  it('is valid from a minute before now for the requested days', () => {
    expect(nc.cert.validity.notBefore.getTime()).toBe(NOW.getTime() - 60_000);
    expect(nc.cert.validity.notAfter.getTime()).toBe(NOW.getTime() + 10 * 86_400_000);
  });

  it('is not a CA and serves both TLS ends', () => {
    expect(ext<{ cA: boolean }>(nc.cert, 'basicConstraints').cA).toBe(false);
    expect(ext<Record<string, boolean>>(nc.cert, 'keyUsage')).toMatchObject({ digitalSignature: true, keyEncipherment: true, keyCertSign: false });
    expect(ext<Record<string, boolean>>(nc.cert, 'extKeyUsage')).toMatchObject({ serverAuth: true, clientAuth: true });
  });

  it('verifies against its CA and not against another', () => {
    expect(ca.cert.verify(nc.cert)).toBe(true);
    const other = makeCa('c2', keys); // same key, other name: the issuer does not match
    expect(() => other.cert.verify(nc.cert)).toThrow();
    expect(new X509Certificate(nc.certPem).verify(new X509Certificate(certificateToPem(ca.cert)).publicKey)).toBe(true);
  });

  it.each(['clc', 'cc', 'nc'] as const)('gives its role back: %s', (role) => {
    const c = issue(ca, { role, host: '127.0.0.9' }, keys);
    expect(identityOf(c.cert)).toEqual({ role, host: '127.0.0.9', organization: 'Ferry cloud c1' });
  });

  it('refuses to name a role for the CA certificate', () => {
    expect(() => identityOf(ca.cert)).toThrow(expect.objectContaining({ code: 'InvalidPkiSpec' }));
  });
});

describe('serialHex', () => {
  it('is positive and minimal (first byte 0x40-0x7f) and keeps the length', () => {
    expect(serialHex(new Uint8Array(16).fill(0xff))).toBe(`7f${'ff'.repeat(15)}`);
    expect(serialHex(new Uint8Array(8))).toBe(`40${'00'.repeat(7)}`);
    expect(() => serialHex(new Uint8Array(4))).toThrow(expect.objectContaining({ code: 'InvalidPkiSpec' }));
  });
});

describe('buildCloudPkiSpec', () => {
  it('reads --clc, --cc partition=host and comma lists of --nc, one entry per role and host', () => {
    const spec = buildCloudPkiSpec({ cloudId: 'c1', clc: '127.0.0.1', cc: ['cluster01=127.0.0.1', 'cluster02=127.0.0.1'], nc: ['127.0.1.1, 127.0.1.2', '127.0.1.2'] });
    expect(spec.components).toEqual([
      { role: 'clc', host: '127.0.0.1' }, { role: 'cc', host: '127.0.0.1' },
      { role: 'nc', host: '127.0.1.1' }, { role: 'nc', host: '127.0.1.2' },
    ]);
  });

  it.each([
    ['a host that is not IPv4', { cloudId: 'c1', cc: [], nc: ['node1'] }],
    ['a CC without partition', { cloudId: 'c1', cc: ['127.0.0.1'], nc: [] }],
    ['a bad cloud id', { cloudId: 'a b', cc: [], nc: ['127.0.1.1'] }],
    ['nothing to issue', { cloudId: 'c1', cc: [], nc: [] }],
  ])('refuses %s with InvalidPkiSpec', (_, req) => {
    expect(() => buildCloudPkiSpec(req)).toThrow(expect.objectContaining({ code: 'InvalidPkiSpec' }));
  });
});
