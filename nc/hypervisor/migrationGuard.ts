/**
 * What a destination host holds for one TLS-prepared incoming migration: its own credential (the
 * certificate it serves for this migration only) and the check a source must pass before a single
 * frame is accepted. Also the source's side: checking the destination's certificate. The
 * credential lives here, in memory, until the incoming record ends (arrived, failed, aborted).
 */
import { X509Certificate } from 'node:crypto';
import { migrationIdentityOf, type MigrationIdentity } from '../../shared/pki/migrationPeer.js';
import type { MigrationCredential } from './driver.js';
import { HypervisorErrors } from './errors.js';

export interface MigrationGuard {
  readonly credential: MigrationCredential;
  /** This side's identity, read from its own certificate. */
  readonly own: MigrationIdentity;
  /** The only CA accepted for the peer. */
  readonly ca: X509Certificate;
}

/**
 * Reads a credential for `side` of hypervisor migration `migrationKey` (`<migrationId>-<instanceId>`)
 * of domain `id`; MigrationCredentialInvalid when it is unreadable or made for something else.
 */
export function guardOf(credential: MigrationCredential, side: 'source' | 'destination', id: string, migrationKey: string): MigrationGuard {
  const invalid = (detail: string) => HypervisorErrors.make('MigrationCredentialInvalid', { migrationId: migrationKey, id, detail });
  let own: MigrationIdentity | undefined;
  let ca: X509Certificate;
  try {
    own = migrationIdentityOf(new X509Certificate(credential.certPem));
    ca = new X509Certificate(credential.caPem);
  } catch (e) {
    throw invalid(`credential is not readable PEM: ${(e as Error).message}`);
  }
  if (!own || own.side !== side) throw invalid(`credential is not a migration-${side} certificate`);
  if (`${own.migrationId}-${own.instanceId}` !== migrationKey || own.instanceId !== id) {
    throw invalid(`credential was issued for ${own.migrationId}/${own.instanceId}`);
  }
  return { credential, own, ca };
}

/** Serials of source certificates already used for a stream, until they expire anyway. */
export class UsedSerials {
  private readonly until = new Map<string, number>();

  has(serial: string): boolean {
    return this.until.has(serial);
  }

  add(serial: string, notAfter: number, now: number): void {
    for (const [s, t] of this.until) if (t < now) this.until.delete(s);
    this.until.set(serial, notAfter);
  }
}
