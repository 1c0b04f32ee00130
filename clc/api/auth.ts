/**
 * Who is calling. The pipeline asks an Authenticator after parsing and before dispatch, so AWS
 * SigV4 verification slots in as another implementation of this interface; until then requests
 * are accepted unsigned and act as the cloud admin.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** What a signature check needs to see of a request, exactly as it arrived. */
export interface QueryRequestView {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Every decoded parameter pair in arrival order, query string first, signature parameters included. */
  readonly pairs: readonly (readonly [string, string])[];
  /** The raw body (empty for GET), for SigV4's payload hash. */
  readonly body: Buffer;
}

export interface Principal {
  /** The AWSAccessKeyId (or SigV4 credential) presented, if any. */
  readonly accessKeyId: string | undefined;
  /** The account instances are launched for (EC2's ownerId). */
  readonly accountId: string;
}

export interface Authenticator {
  /** Resolves with the caller, or rejects with a coded error (AuthFailure once signing lands). */
  authenticate(req: QueryRequestView): Promise<Principal>;
}

/** The account of the cloud administrator (Eucalyptus's `eucalyptus` account). */
export const ADMIN_ACCOUNT_ID = '000000000000';

/** Accepts any request as the admin; the access key is recorded but not checked. */
export const acceptUnsigned: Authenticator = {
  authenticate(req) {
    const key = req.pairs.find(([k]) => k === 'AWSAccessKeyId')?.[1];
    return Promise.resolve({ accessKeyId: key, accountId: ADMIN_ACCOUNT_ID });
  },
};
