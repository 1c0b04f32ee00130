/**
 * The file layout ferry-init writes and the daemons read (one place, so they cannot drift):
 *   ca.pem                 the cloud CA certificate (every component trusts it)
 *   ca.key                 the CA's private key (keep it off the hosts once issuing is done)
 *   <role>-<host>.pem/.key one component's certificate and key, e.g. nc-127.0.1.1.pem
 *   migration-ca.pem/.key  the migration CA: CCs issue per-migration credentials with it; no tier trusts it
 */
import type { PeerRole } from './spec.js';

export const CA_CERT_FILE = 'ca.pem';
export const CA_KEY_FILE = 'ca.key';
export const MIGRATION_CA_CERT_FILE = 'migration-ca.pem';
export const MIGRATION_CA_KEY_FILE = 'migration-ca.key';

export function componentBaseName(role: PeerRole, host: string): string {
  return `${role}-${host}`;
}

export const certFileOf = (role: PeerRole, host: string): string => `${componentBaseName(role, host)}.pem`;
export const keyFileOf = (role: PeerRole, host: string): string => `${componentBaseName(role, host)}.key`;

/** Private keys are the owner's only; certificates are public. */
export const KEY_MODE = 0o600;
export const CERT_MODE = 0o644;
