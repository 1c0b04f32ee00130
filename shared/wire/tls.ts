/**
 * mTLS settings for the tiers' HTTPS servers and clients, from a TlsIdentity (shared/pki). Both
 * sides present a certificate from the cloud CA and accept only peers the same CA signed.
 */
import type https from 'node:https';
import type { Logger } from 'pino';
import type { TlsIdentity } from '../pki/tlsIdentity.js';

export function serverTlsOptions(id: TlsIdentity): https.ServerOptions {
  return {
    key: id.key, cert: id.cert, ca: id.ca,
    requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2',
  };
}

/**
 * The agent presents our certificate and checks the server's against the CA; Node's default
 * checkServerIdentity then matches the URL's IP against the certificate's IP subjectAltName.
 */
export function clientTlsOptions(id: TlsIdentity): https.AgentOptions {
  return { key: id.key, cert: id.cert, ca: id.ca, rejectUnauthorized: true, minVersion: 'TLSv1.2' };
}

/** How a daemon talks to its peers, as decided by its flags. */
export type WireSecurity =
  | { readonly kind: 'mtls'; readonly identity: TlsIdentity }
  /** explicit: --insecure-plaintext was given; otherwise plaintext is today's default, still warned about. */
  | { readonly kind: 'plaintext'; readonly explicit: boolean };

export function schemeOf(s: WireSecurity): 'https' | 'http' {
  return s.kind === 'mtls' ? 'https' : 'http';
}

/** Loud on purpose: plaintext lets anyone on the network drive migrations and terminations. */
export function warnIfPlaintext(s: WireSecurity, logger: Logger, daemon: string): void {
  if (s.kind !== 'plaintext') return;
  const why = s.explicit ? '--insecure-plaintext given' : 'neither --tls-dir nor --insecure-plaintext given (plaintext is the default for now)';
  const line = `${daemon}: WARNING: serving and calling peers over PLAINTEXT HTTP without mutual TLS: ${why}. `
    + 'Any host that can reach this port can call every operation. Run ferry-init and pass --tls-dir.';
  logger.warn({ security: 'plaintext', explicit: s.explicit }, line);
  process.stderr.write(`${'!'.repeat(78)}\n${line}\n${'!'.repeat(78)}\n`);
}
