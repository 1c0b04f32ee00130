/**
 * The admin API's SigV4 check: signature present and well formed (IncompleteSignature), key known
 * (AuthFailure), signature right (SignatureDoesNotMatch), and signed within the allowed skew of the
 * CLC's clock (RequestExpired). `now` is read once per request.
 *
 * A signature is not refused for having been seen before, as AWS does not refuse it: botocore signs
 * only host, x-amz-date and content-type, so a retry, a waiter's poll or a script's loop within one
 * second sends a byte-identical signature, and no server can tell it from a replay. Repeats are made
 * safe by the actions instead (ClientToken for RunInstances; the others set a state). Keeping no
 * per-signature memory also means no table a burst of traffic could fill (docs/SECURITY.md).
 */
import { freshness, parseSignature, signatureMatches } from '../../shared/auth/verify.js';
import type { Clock } from '../../shared/clock.js';
import { ClcErrors } from '../core/errors.js';
import type { IdentityDirectory } from '../core/identities.js';
import type { Authenticator, Principal, QueryRequestView } from './auth.js';

/**
 * The credential scope's service: what the tools this API serves sign with — `ec2` (the AWS SDKs and
 * CLI, euca2ools, Ferry's CLI and the admin tools' EC2 calls) and `bootstrap` (the Eucalyptus 4
 * admin tools' service-management calls). A signature scoped to another service was made for
 * another API and is refused. The region is not checked: a Eucalyptus cloud is one region, and its
 * tools sign with whatever region their configuration names, or a made-up `undefined-<pid>`.
 */
export const SIGNED_SERVICES: ReadonlySet<string> = new Set(['ec2', 'bootstrap']);

/** AWS's own bound: a request signed more than 5 minutes before or after the server's clock is refused. */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;

export interface SigV4AuthenticatorOptions {
  readonly identities: IdentityDirectory;
  readonly clock: Clock;
  readonly skewMs?: number;
}

export function sigv4Authenticator(opts: SigV4AuthenticatorOptions): Authenticator {
  const skewMs = opts.skewMs ?? MAX_CLOCK_SKEW_MS;
  const check = (req: QueryRequestView): Principal => {
    const now = opts.clock.now();
    const parsed = parseSignature(req);
    if ('kind' in parsed) {
      if (parsed.kind === 'unsigned') {
        throw ClcErrors.make('AuthFailure', { detail: `the request is not signed with AWS Signature Version 4 (${parsed.detail})` });
      }
      throw ClcErrors.make('IncompleteSignature', { detail: parsed.detail });
    }
    const identity = opts.identities.find(parsed.accessKeyId);
    if (!identity) throw ClcErrors.make('AuthFailure', { detail: 'the access key id is not known to this cloud' });
    if (!signatureMatches(req, parsed, identity.secretKey)) throw ClcErrors.make('SignatureDoesNotMatch');
    if (!SIGNED_SERVICES.has(parsed.scope.service)) {
      // AWS's code and words for a signature scoped to another service.
      throw ClcErrors.withMessage('SignatureDoesNotMatch', `Credential should be scoped to correct service: ${[...SIGNED_SERVICES].map((x) => `'${x}'`).join(' or ')}, not '${parsed.scope.service.replace(/[^\w-]/g, '?')}'`);
    }
    const fresh = freshness(parsed, now, skewMs);
    if (fresh !== 'fresh') {
      const detail = `signed at ${new Date(parsed.signedAt).toISOString()}, ${fresh === 'future' ? 'ahead of' : 'too long before'} the cloud controller's clock (${new Date(now).toISOString()}); at most ${skewMs / 1000}s of skew is allowed`;
      throw ClcErrors.make('RequestExpired', { detail });
    }
    return { accessKeyId: identity.accessKey, accountId: identity.accountId, isAdmin: identity.isAdmin };
  };
  return {
    authenticate(req) {
      try {
        return Promise.resolve(check(req));
      } catch (e) {
        return Promise.reject(e as Error);
      }
    },
  };
}
