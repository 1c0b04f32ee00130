/**
 * The CLC's identities: who holds which access key. Today only the admin (from
 * `<state-dir>/admin.credentials`); the lookup is an interface so a user store can join it later.
 */
import type { Credentials } from '../../shared/auth/credentialsFile.js';

/** The account of the cloud administrator (Eucalyptus's `eucalyptus` account). */
export const ADMIN_ACCOUNT_ID = '000000000000';

export interface Identity extends Credentials {
  /** A name for logs (never the secret). */
  readonly name: string;
  readonly accountId: string;
  readonly isAdmin: boolean;
}

export interface IdentityDirectory {
  /** The identity holding `accessKey`, or undefined when no one does. */
  find(accessKey: string): Identity | undefined;
}

/** A fixed set of identities held in memory. */
export function identityDirectory(identities: readonly Identity[]): IdentityDirectory {
  const byKey = new Map(identities.map((i) => [i.accessKey, i]));
  return { find: (accessKey) => byKey.get(accessKey) };
}
