/**
 * Who is calling. The pipeline asks an Authenticator right after reading the request and before
 * anything is parsed or dispatched: `sigv4Authenticator` checks AWS Signature Version 4 against the
 * CLC's identities; `acceptUnsigned` (--auth none, and in-process tests) lets anyone act as admin.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ADMIN_ACCOUNT_ID } from '../core/identities.js';

/** What a signature check needs to see of a request, exactly as it arrived. */
export interface QueryRequestView {
  readonly method: string;
  readonly path: string;
  /** The raw query string, without '?' (SigV4 canonicalises it itself). */
  readonly query: string;
  readonly headers: IncomingHttpHeaders;
  /** Every decoded parameter pair in arrival order, query string first, signature parameters included. */
  readonly pairs: readonly (readonly [string, string])[];
  /** The raw body (empty for GET), for SigV4's payload hash. */
  readonly body: Buffer;
}

export interface Principal {
  /** The access key the request was signed with (or the AWSAccessKeyId it named, unsigned). */
  readonly accessKeyId: string | undefined;
  /** The account instances are launched for (EC2's ownerId). */
  readonly accountId: string;
  /** The cloud administrator: may run the admin-only actions (clc/api/authorization.ts). */
  readonly isAdmin: boolean;
}

export interface Authenticator {
  /** Resolves with the caller, or rejects with a coded error (AuthFailure, SignatureDoesNotMatch, ...). */
  authenticate(req: QueryRequestView): Promise<Principal>;
}

/** Accepts any request as the admin; the access key is recorded but not checked. Only for --auth none. */
export const acceptUnsigned: Authenticator = {
  authenticate(req) {
    const key = req.pairs.find(([k]) => k === 'AWSAccessKeyId')?.[1];
    return Promise.resolve({ accessKeyId: key, accountId: ADMIN_ACCOUNT_ID, isAdmin: true });
  },
};
