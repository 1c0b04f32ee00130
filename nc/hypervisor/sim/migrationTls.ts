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
import { guardOf } from './incomingGuard.js';
import type { OutgoingHello } from './migrationChannel.js';

export interface MigrationTlsClient {
  readonly options: RequestOptions;
  /** Follows the request's socket to tell handshake failures from later ones. */
  watch(req: ClientRequest): void;
  /** The coded error for a request error, when TLS explains it. */
  failure(e: NodeJS.ErrnoException): FerryError | undefined;
}

/** TLS settings for a stream to `url`; undefined for plaintext. Throws when the two do not fit. */
export function migrationTlsClient(
  url: URL, credential: MigrationCredential | undefined, hello: OutgoingHello, clock: Clock,
): MigrationTlsClient | undefined {
  const { migrationId } = hello;
  const id = hello.spec.id;
  const invalid = (detail: string) => HypervisorErrors.make('MigrationCredentialInvalid', { migrationId, id, detail });
  if (url.protocol !== 'https:') {
    if (credential) throw invalid(`a credential is only ever sent to an https:// destination, not ${url.protocol}`);
    return undefined;
  }
  if (!credential) throw invalid('an https:// destination needs this migration\'s credential');
  const guard = guardOf(credential, 'source', id, migrationId);
  let refusal: FerryError | undefined;
  let connected = false;
  let secured = false;
  const rejected = (reason: string, detail: string) => HypervisorErrors.make('MigrationCredentialRejected', { migrationId, id, reason, detail });
  const options: RequestOptions = {
    key: credential.keyPem, cert: credential.certPem, ca: credential.caPem,
    // The destination picks this migration's certificate by server name (the domain id).
    servername: id, rejectUnauthorized: true, minVersion: 'TLSv1.2', agent: false,
    checkServerIdentity: (_host: string, peer: PeerCertificate) => {
      const check = checkMigrationPeer({ own: guard.own, ca: guard.ca, peer: new X509Certificate(peer.raw), now: clock.now(), used: () => false });
      if (check.ok) return undefined;
      refusal = rejected(check.reason, `destination certificate: ${check.detail}`);
      return new Error(refusal.message);
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
