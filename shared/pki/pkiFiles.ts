/**
 * ferry-init's disk side: decides what is kept, moves replaced files aside, writes keys 0600 and
 * certificates 0644. Nothing existing is overwritten without `force`.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { generateRsaKeys, serialHex, type KeyPair } from './certificates.js';
import { PkiErrors } from './errors.js';
import { issueCloudPki, type ExistingCa } from './issue.js';
import { CA_CERT_FILE, CA_KEY_FILE, certFileOf, keyFileOf, MIGRATION_CA_CERT_FILE, MIGRATION_CA_KEY_FILE } from './layout.js';
import type { CloudPkiSpec, ComponentSpec } from './spec.js';

export interface InitOptions {
  readonly dir: string;
  readonly spec: CloudPkiSpec;
  /** Replace the requested components' files (old ones are moved aside). */
  readonly force: boolean;
  /** Also replace the CA (needs force): every component must then be re-issued. */
  readonly rotateCa: boolean;
  readonly now: Date;
  readonly newKeys: () => KeyPair;
  readonly newSerial: () => string;
}

/** Fresh RSA keys and random 16-byte serials: what every real run uses (tests inject their own). */
export const RANDOM_PKI_SOURCES: Pick<InitOptions, 'newKeys' | 'newSerial'> = Object.freeze({
  newKeys: () => generateRsaKeys(),
  newSerial: () => serialHex(randomBytes(16)),
});

export interface InitReport {
  readonly written: readonly string[];
  readonly kept: readonly string[];
  /** `old → moved-aside name` */
  readonly movedAside: readonly string[];
}

/** A name that sorts by time and is safe in a file name: 2026-11-22T05-49-25Z. */
export function asideSuffix(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/:/g, '-');
}

function readPem(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw PkiErrors.make('TlsFileUnreadable', { path, detail: (e as Error).message });
  }
}

function loadCa(dir: string): ExistingCa {
  const certPath = join(dir, CA_CERT_FILE);
  const keyPath = join(dir, CA_KEY_FILE);
  if (!existsSync(keyPath)) throw PkiErrors.make('TlsFileMissing', { dir, file: CA_KEY_FILE, role: 'the', host: 'CA' });
  try {
    return { cert: forge.pki.certificateFromPem(readPem(certPath)), key: forge.pki.privateKeyFromPem(readPem(keyPath)) as forge.pki.rsa.PrivateKey };
  } catch (e) {
    if (PkiErrors.has((e as { code?: string }).code ?? '')) throw e;
    throw PkiErrors.make('TlsFileUnreadable', { path: certPath, detail: (e as Error).message });
  }
}

function writeFileAtomic(path: string, contents: string, mode: number): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, contents, { mode, flag: 'wx' });
    chmodSync(tmp, mode); // the umask may have cleared bits of `mode`
    renameSync(tmp, path);
  } catch (e) {
    throw PkiErrors.make('PkiWriteFailed', { path, detail: (e as Error).message });
  }
}

export function initCloudPki(o: InitOptions): InitReport {
  if (o.rotateCa && !o.force) throw PkiErrors.make('InvalidPkiSpec', { detail: '--rotate-ca replaces the CA and needs --force' });
  mkdirSync(o.dir, { recursive: true, mode: 0o755 });
  const at = (name: string): string => join(o.dir, name);
  const kept: string[] = [];
  const caPresent = existsSync(at(CA_CERT_FILE));
  const ca = caPresent && !o.rotateCa ? loadCa(o.dir) : undefined;
  if (ca) kept.push(CA_CERT_FILE, CA_KEY_FILE);
  const migrationCaPresent = existsSync(at(MIGRATION_CA_CERT_FILE)) || existsSync(at(MIGRATION_CA_KEY_FILE));
  const issueMigrationCa = !ca || !migrationCaPresent;
  if (!issueMigrationCa) kept.push(MIGRATION_CA_CERT_FILE, MIGRATION_CA_KEY_FILE);
  const present = (c: ComponentSpec): boolean => existsSync(at(certFileOf(c.role, c.host))) || existsSync(at(keyFileOf(c.role, c.host)));
  const keep = (c: ComponentSpec): boolean => !o.force && present(c);
  for (const c of o.spec.components) if (keep(c)) kept.push(certFileOf(c.role, c.host), keyFileOf(c.role, c.host));

  const files = issueCloudPki({ spec: o.spec, ...(ca ? { ca } : {}), keep, newKeys: o.newKeys, newSerial: o.newSerial, now: o.now, issueMigrationCa });
  const clash = files.find((f) => existsSync(at(f.name)));
  // E.g. a ca.key without its ca.pem: checked before anything moves, so a refusal changes nothing.
  if (clash && !o.force) throw PkiErrors.make('PkiFileExists', { path: at(clash.name) });
  const movedAside: string[] = [];
  const suffix = asideSuffix(o.now);
  for (const f of files) {
    if (!existsSync(at(f.name))) continue;
    const aside = `${f.name}.${suffix}.old`;
    renameSync(at(f.name), at(aside));
    movedAside.push(`${f.name} → ${aside}`);
  }
  for (const f of files) writeFileAtomic(at(f.name), f.contents, f.mode);
  return { written: files.map((f) => f.name), kept, movedAside };
}
