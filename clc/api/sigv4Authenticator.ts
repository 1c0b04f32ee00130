/**
 * The admin API's SigV4 check: signature present and well formed (IncompleteSignature), key known
 * (AuthFailure), signature right (SignatureDoesNotMatch), signed within the allowed skew of the
 * CLC's clock (RequestExpired), and not seen before (AuthFailure). `now` is read once per request.
 */
import type { Clock } from '../../shared/clock.js';
import { freshness, parseSignature, signatureMatches } from '../../shared/auth/verify.js';
import type { Authenticator, Principal, QueryRequestView } from './auth.js';
import { ClcErrors } from './errors.js';
import type { IdentityDirectory } from './identities.js';
import { ReplayCache } from './replayCache.js';

/** AWS's own bound: a request signed more than 5 minutes before or after the server's clock is refused. */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;
/** Accepted signatures remembered at once; 100k entries of ~150 bytes is ~15 MB at worst. */
export const DEFAULT_REPLAY_CACHE_ENTRIES = 100_000;

export interface SigV4AuthenticatorOptions {
  readonly identities: IdentityDirectory;
  readonly clock: Clock;
  readonly skewMs?: number;
  readonly replayCacheEntries?: number;
}

export function sigv4Authenticator(opts: SigV4AuthenticatorOptions): Authenticator {
  const skewMs = opts.skewMs ?? MAX_CLOCK_SKEW_MS;
  const replays = new ReplayCache(opts.replayCacheEntries ?? DEFAULT_REPLAY_CACHE_ENTRIES);
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
    const fresh = freshness(parsed, now, skewMs);
    if (fresh !== 'fresh') {
      const detail = `signed at ${new Date(parsed.signedAt).toISOString()}, ${fresh === 'future' ? 'ahead of' : 'too long before'} the cloud controller's clock (${new Date(now).toISOString()}); at most ${skewMs / 1000}s of skew is allowed`;
      throw ClcErrors.make('RequestExpired', { detail });
    }
    const verdict = replays.check(parsed.signature, parsed.signedAt + skewMs, now);
    if (verdict === 'replayed') throw ClcErrors.make('AuthFailure', { detail: 'this signature was already used; sign each request afresh' });
    if (verdict === 'full') throw ClcErrors.make('ServiceUnavailable', { detail: 'too many signed requests in the last minutes; retry shortly' });
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
