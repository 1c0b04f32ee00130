import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateRsaKeys } from '../../../shared/pki/certificates.js';
import { initCloudPki, type InitOptions } from '../../../shared/pki/pkiFiles.js';
import { buildCloudPkiSpec } from '../../../shared/pki/spec.js';
import { loadTlsIdentity } from '../../../shared/pki/tlsIdentity.js';
import { nextSerial, NOW } from './fixtures.js';

const keys = generateRsaKeys(); // one pair for every file: these tests are about files, not keys
let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'ferry-pki-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const spec = buildCloudPkiSpec({ cloudId: 't', clc: '127.0.0.1', cc: ['cluster01=127.0.0.1'], nc: ['127.0.1.1'] });
const opts = (over: Partial<InitOptions> = {}): InitOptions => ({
  dir, spec, force: false, rotateCa: false, now: NOW, newKeys: () => keys, newSerial: nextSerial, ...over,
});
const mode = (f: string): number => statSync(join(dir, f)).mode & 0o777;

describe('initCloudPki', () => {
  it('writes the CA and every component, keys 0600 and certificates 0644', () => {
    const r = initCloudPki(opts());
    expect([...r.written].sort()).toEqual(['ca.key', 'ca.pem', 'cc-127.0.0.1.key', 'cc-127.0.0.1.pem',
      'clc-127.0.0.1.key', 'clc-127.0.0.1.pem', 'migration-ca.key', 'migration-ca.pem', 'nc-127.0.1.1.key', 'nc-127.0.1.1.pem']);
    for (const f of r.written) expect(mode(f), f).toBe(f.endsWith('.key') ? 0o600 : 0o644);
    expect(loadTlsIdentity(dir, 'nc', '127.0.1.1').role).toBe('nc');
  });

  it('keeps and reports existing files on a re-run, issuing only what is new from the same CA', () => {
    initCloudPki(opts());
    const before = readFileSync(join(dir, 'nc-127.0.1.1.pem'), 'utf8');
    const caBefore = readFileSync(join(dir, 'ca.pem'), 'utf8');
    const more = buildCloudPkiSpec({ cloudId: 't', cc: [], nc: ['127.0.1.1,127.0.1.2'] });
    const r = initCloudPki(opts({ spec: more }));
    expect(r.written).toEqual(['nc-127.0.1.2.pem', 'nc-127.0.1.2.key']);
    expect(r.kept).toEqual(['ca.pem', 'ca.key', 'migration-ca.pem', 'migration-ca.key', 'nc-127.0.1.1.pem', 'nc-127.0.1.1.key']);
    expect(readFileSync(join(dir, 'nc-127.0.1.1.pem'), 'utf8')).toBe(before);
    expect(readFileSync(join(dir, 'ca.pem'), 'utf8')).toBe(caBefore);
  });

  it('with force replaces components and moves the old files aside with a timestamp', () => {
    initCloudPki(opts());
    const old = readFileSync(join(dir, 'nc-127.0.1.1.pem'), 'utf8');
    const r = initCloudPki(opts({ force: true, now: new Date('2026-11-23T01:02:03Z') }));
    expect(r.kept).toEqual(['ca.pem', 'ca.key', 'migration-ca.pem', 'migration-ca.key']);
    expect(readFileSync(join(dir, 'nc-127.0.1.1.pem.2026-11-23T01-02-03Z.old'), 'utf8')).toBe(old);
    expect(readFileSync(join(dir, 'nc-127.0.1.1.pem'), 'utf8')).not.toBe(old);
    expect(mode('nc-127.0.1.1.key.2026-11-23T01-02-03Z.old')).toBe(0o600);
  });

  it('rotates the CA only with force', () => {
    initCloudPki(opts());
    expect(() => initCloudPki(opts({ rotateCa: true }))).toThrow(expect.objectContaining({ code: 'InvalidPkiSpec' }));
    const r = initCloudPki(opts({ force: true, rotateCa: true }));
    expect(r.written).toContain('ca.pem');
    expect(readdirSync(dir).filter((f) => f.startsWith('ca.pem.'))).toHaveLength(1);
    expect(readdirSync(dir).filter((f) => f.startsWith('migration-ca.pem.'))).toHaveLength(1);
  });

  it('adds the migration CA to a directory made before it existed, keeping the cloud CA', () => {
    initCloudPki(opts());
    const caBefore = readFileSync(join(dir, 'ca.pem'), 'utf8');
    rmSync(join(dir, 'migration-ca.pem'));
    rmSync(join(dir, 'migration-ca.key'));
    const r = initCloudPki(opts());
    expect([...r.written].sort()).toEqual(['migration-ca.key', 'migration-ca.pem']);
    expect(mode('migration-ca.key')).toBe(0o600);
    expect(readFileSync(join(dir, 'ca.pem'), 'utf8')).toBe(caBefore);
  });

  it('refuses, changing nothing, when a file it would write is in the way', () => {
    writeFileSync(join(dir, 'ca.key'), 'not mine');
    expect(() => initCloudPki(opts())).toThrow(expect.objectContaining({ code: 'PkiFileExists' }));
    expect(readdirSync(dir)).toEqual(['ca.key']);
  });
});

describe('loadTlsIdentity', () => {
  it('names the missing file', () => {
    initCloudPki(opts());
    expect(() => loadTlsIdentity(dir, 'nc', '127.0.1.9')).toThrow(expect.objectContaining({ code: 'TlsFileMissing' }));
  });

  it('refuses a certificate of another role under this role\'s name', () => {
    initCloudPki(opts());
    writeFileSync(join(dir, 'nc-127.0.0.1.pem'), readFileSync(join(dir, 'cc-127.0.0.1.pem')));
    writeFileSync(join(dir, 'nc-127.0.0.1.key'), readFileSync(join(dir, 'cc-127.0.0.1.key')));
    expect(() => loadTlsIdentity(dir, 'nc', '127.0.0.1')).toThrow(expect.objectContaining({ code: 'CertificateRoleMismatch' }));
    expect(existsSync(join(dir, 'ca.pem'))).toBe(true);
  });
});
