/**
 * Per-migration TLS files for QEMU (docs/libvirt.md). libvirtd makes QEMU load its migration TLS
 * credentials from qemu.conf's migrate_tls_x509_cert_dir each time a TLS migration starts, so
 * writing one migration's credential there just before it and deleting it right after gives every
 * migration its own certificate without restarting libvirtd. The source's QEMU reads client-*,
 * the destination's reads server-*; both read ca-cert.pem.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MigrationCredential } from '../driver.js';
import { HypervisorErrors } from '../errors.js';

export type TlsSide = 'source' | 'destination';

const CA_FILE = 'ca-cert.pem';

/** The file names (and modes) QEMU's tls-creds-x509 object reads for one side. */
export function tlsFilesFor(side: TlsSide, c: MigrationCredential): { name: string; contents: string; mode: number }[] {
  const role = side === 'source' ? 'client' : 'server';
  return [
    { name: CA_FILE, contents: c.caPem, mode: 0o644 },
    { name: `${role}-cert.pem`, contents: c.certPem, mode: 0o644 },
    { name: `${role}-key.pem`, contents: c.keyPem, mode: 0o600 },
  ];
}

export async function installTlsFiles(dir: string, side: TlsSide, c: MigrationCredential): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const f of tlsFilesFor(side, c)) {
    // Write with the final mode from the start: a key must never be readable by others, even briefly.
    await rm(join(dir, f.name), { force: true });
    await writeFile(join(dir, f.name), f.contents, { mode: f.mode, flag: 'wx' });
  }
}

/** Deletes one side's files; ca-cert.pem stays while the other side still uses it. */
export async function removeTlsFiles(dir: string, side: TlsSide, otherSideActive: boolean): Promise<void> {
  const names = tlsFilesFor(side, { caPem: '', certPem: '', keyPem: '' }).map((f) => f.name);
  for (const name of names) {
    if (name === CA_FILE && otherSideActive) continue;
    await rm(join(dir, name), { force: true });
  }
}

interface Holder {
  readonly migrationId: string;
  readonly caPem: string;
}

/**
 * Who uses the host's one migrate_tls_x509_cert_dir now. Outgoing TLS migrations take turns (each
 * writes its client files, migrates, deletes them); one incoming migration at a time holds the
 * server files from prepareIncoming until it arrives or is aborted. Both sides share ca-cert.pem,
 * so they must agree on the CA.
 */
export class MigrationTlsDir {
  private source: Holder | undefined;
  private destination: Holder | undefined;
  private sourceTurn: Promise<void> = Promise.resolve();

  constructor(readonly dir: string, private readonly uri: string) {}

  /** Waits for this host's earlier outgoing TLS migration, writes the files; returns the release. */
  async holdSource(migrationId: string, c: MigrationCredential): Promise<() => Promise<void>> {
    const previous = this.sourceTurn;
    let done: () => void = () => undefined;
    this.sourceTurn = new Promise((resolve) => (done = resolve));
    await previous;
    try {
      this.checkCa(c, this.destination);
      await installTlsFiles(this.dir, 'source', c);
      this.source = { migrationId, caPem: c.caPem };
    } catch (e) {
      done();
      throw e;
    }
    return async () => {
      this.source = undefined;
      try {
        await removeTlsFiles(this.dir, 'source', this.destination !== undefined);
      } finally {
        done();
      }
    };
  }

  /** Destination: hold the server files for `migrationId` (a repeat replaces its credential). */
  async holdDestination(migrationId: string, c: MigrationCredential): Promise<void> {
    if (this.destination && this.destination.migrationId !== migrationId) {
      throw HypervisorErrors.make('HypervisorUnavailable', {
        uri: this.uri, detail: `the migration TLS directory is held by incoming migration ${this.destination.migrationId}`,
      });
    }
    this.checkCa(c, this.source);
    await installTlsFiles(this.dir, 'destination', c);
    this.destination = { migrationId, caPem: c.caPem };
  }

  async releaseDestination(migrationId: string): Promise<void> {
    if (this.destination?.migrationId !== migrationId) return;
    this.destination = undefined;
    await removeTlsFiles(this.dir, 'destination', this.source !== undefined);
  }

  holdsDestination(migrationId: string): boolean {
    return this.destination?.migrationId === migrationId;
  }

  private checkCa(c: MigrationCredential, other: Holder | undefined): void {
    if (other && other.caPem !== c.caPem) {
      throw HypervisorErrors.make('HypervisorUnavailable', {
        uri: this.uri, detail: `migration ${other.migrationId} uses the TLS directory with another CA`,
      });
    }
  }
}
