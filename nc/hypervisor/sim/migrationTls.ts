/**
 * The source's side of a mutually authenticated migration stream: present this migration's source
 * certificate, accept only the destination certificate of the same migration item (the migration CA,
 * checked by OpenSSL; the binding to this item and these hosts, checked by checkMigrationPeer), and
 * say in a coded error why a handshake failed. Plaintext is only for http:// destinations without a
 * credential; a credential never travels to, and an https:// destination never gets, anything else.
 */
import { X509Certificate } from 'node:crypto';
import type { ClientRequest } from 'node:http';
import type { RequestOptions } from 'node:https';
import type { PeerCertificate } from 'node:tls';
import type { Clock } from '../../../shared/clock.js';
import type { FerryError } from '../../../shared/errors/registry.js';
import { checkMigrationPeer } from '../../../shared/pki/migrationPeer.js';
import type { MigrationCredential } from '../driver.js';
import { HypervisorErrors } from '../errors.js';
import { guardOf, type MigrationGuard } from '../migrationGuard.js';
import type { OutgoingHello } from './migrationChannel.js';

export interface MigrationTlsClient {
  readonly options: RequestOptions;
  /** Follows the request's socket to tell handshake failures from later ones. */
  watch(req: ClientRequest): void;
  /** The coded error for a request error, when TLS explains it. */
  failure(e: NodeJS.ErrnoException): FerryError | undefined;
}

/**
 * The source's credential for a stream to `url`, read: undefined for plaintext. Throws
 * MigrationCredentialInvalid when the two do not fit (a credential only ever goes to https://, and
 * an https:// destination needs this migration's). Also the in-process channel's (sim/migrationNet.ts).
 */
export function sourceGuardFor(url: string, credential: MigrationCredential | undefined, hello: OutgoingHello): MigrationGuard | undefined {
  const { migrationId } = hello;
  const id = hello.spec.id;
  const invalid = (detail: string) => HypervisorErrors.make('MigrationCredentialInvalid', { migrationId, id, detail });
  const protocol = /^[a-z]+:/.exec(url)?.[0] ?? url;
  if (protocol !== 'https:') {
    if (credential) throw invalid(`a credential is only ever sent to an https:// destination, not ${protocol}`);
    return undefined;
  }
  if (!credential) throw invalid('an https:// destination needs this migration\'s credential');
  return guardOf(credential, 'source', id, migrationId);
}

/** The source's check of the certificate its destination served: the coded refusal, or undefined. */
export function refusedDestination(guard: MigrationGuard, served: X509Certificate, hello: OutgoingHello, now: number): FerryError | undefined {
  const check = checkMigrationPeer({ own: guard.own, ca: guard.ca, peer: served, now, used: () => false });
  if (check.ok) return undefined;
  return HypervisorErrors.make('MigrationCredentialRejected', {
    migrationId: hello.migrationId, id: hello.spec.id, reason: check.reason, detail: `destination certificate: ${check.detail}`,
  });
}

/** TLS settings for a stream to `url`; undefined for plaintext. Throws when the two do not fit. */
export function migrationTlsClient(
  url: URL, credential: MigrationCredential | undefined, hello: OutgoingHello, clock: Clock,
): MigrationTlsClient | undefined {
  const { migrationId } = hello;
  const id = hello.spec.id;
  const guard = sourceGuardFor(url.href, credential, hello);
  if (!guard || !credential) return undefined;
  let refusal: FerryError | undefined;
  let connected = false;
  let secured = false;
  const rejected = (reason: string, detail: string) => HypervisorErrors.make('MigrationCredentialRejected', { migrationId, id, reason, detail });
  const options: RequestOptions = {
    key: credential.keyPem, cert: credential.certPem, ca: credential.caPem,
    // The destination picks this migration's certificate by server name (the domain id).
    servername: id, rejectUnauthorized: true, minVersion: 'TLSv1.2', agent: false,
    checkServerIdentity: (_host: string, peer: PeerCertificate) => {
      refusal = refusedDestination(guard, new X509Certificate(peer.raw), hello, clock.now());
      // Node wants an Error here to fail the handshake; the coded refusal itself is what is reported.
      return refusal ? new Error(refusal.message) : undefined;
    },
  };
  return {
    options,
    watch(req) {
      req.once('socket', (socket) => {
        socket.once('connect', () => {
          connected = true;
        });
        socket.once('secureConnect', () => {
          secured = true;
        });
      });
    },
    failure(e) {
      if (refusal) return refusal;
      // Not reached (refused, unreachable) or failed after the handshake: not a credential matter.
      if (!connected || secured) return undefined;
      return rejected('handshake', `TLS handshake with the destination failed (${e.code ?? e.message}); it has no migration prepared for this credential or refused it`);
    },
  };
}
