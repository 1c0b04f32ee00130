/**
 * mTLS settings for the tiers' HTTPS servers and clients, from a TlsIdentity (shared/pki). Both
 * sides present a certificate from the cloud CA and accept only peers the same CA signed.
 */
import type https from 'node:https';
import type { Logger } from 'pino';
import type { PeerRole } from '../pki/spec.js';
import { loadTlsIdentity, type TlsIdentity } from '../pki/tlsIdentity.js';

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
  /** --tls-dir: serve and call over mutual TLS as `<role>-<host>` */
  | { readonly kind: 'mtls'; readonly identity: TlsIdentity }
  /** --insecure-plaintext: plain HTTP, chosen on purpose and warned about */
  | { readonly kind: 'plaintext' };

/**
 * From a compiled config (which guarantees exactly one of the two flags): mTLS as `<role>-<host>`
 * read from the TLS directory, or plaintext. Missing files are coded errors, never a fallback.
 */
export function wireSecurityOf(config: { readonly tlsDir?: string | undefined }, role: PeerRole, host: string): WireSecurity {
  if (config.tlsDir !== undefined) return { kind: 'mtls', identity: loadTlsIdentity(config.tlsDir, role, host) };
  return { kind: 'plaintext' };
}

/** Client options for a transport calling peers: our certificate under mTLS, nothing for plaintext. */
export function clientTlsOf(s: WireSecurity): { readonly tls?: https.AgentOptions } {
  return s.kind === 'mtls' ? { tls: clientTlsOptions(s.identity) } : {};
}

export function schemeOf(s: WireSecurity): 'https' | 'http' {
  return s.kind === 'mtls' ? 'https' : 'http';
}

/** Loud on purpose: plaintext lets anyone on the network drive migrations and terminations. */
export function warnIfPlaintext(s: WireSecurity, logger: Logger, daemon: string): void {
  if (s.kind !== 'plaintext') return;
  const line = `${daemon}: WARNING: talking to the other tiers over PLAINTEXT HTTP without mutual TLS (--insecure-plaintext given). `
    + 'Anything that can reach a tier\'s port can call every operation. Run ferry-init and pass --tls-dir instead.';
  logger.warn({ security: 'plaintext' }, line);
  process.stderr.write(`${'!'.repeat(78)}\n${line}\n${'!'.repeat(78)}\n`);
}
