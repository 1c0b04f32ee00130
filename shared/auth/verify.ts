/**
 * Reading and checking a SigV4 signature on a received request: pure, no clock, no key store. The
 * caller (the CLC's authenticator) looks the key up, decides freshness against its own Clock, and
 * maps each failure kind onto its own error registry.
 */
import { timingSafeEqual } from 'node:crypto';
import { ALGORITHM, canonicalRequest, parseAmzDate, sha256Hex, signature, SCOPE_TERMINATOR, type Scope } from './sigv4.js';

/** A received request, exactly as it arrived. */
export interface SignedRequestView {
  readonly method: string;
  readonly path: string;
  /** The raw query string, without '?'. */
  readonly query: string;
  /** Lower-case names, as node gives them. */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body: Buffer;
}

export interface ParsedSignature {
  readonly form: 'header' | 'query';
  readonly accessKeyId: string;
  readonly scope: Scope;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
  readonly amzDate: string;
  /** Epoch ms of amzDate. */
  readonly signedAt: number;
  /** X-Amz-Expires of the query form, in seconds. */
  readonly expiresSeconds: number | undefined;
}

/** Why a request carries no usable signature. */
export type SignatureProblem =
  /** No Authorization header and no X-Amz-Algorithm: not signed (or signed another way, e.g. SigV2). */
  | { readonly kind: 'unsigned'; readonly detail: string }
  /** Signed with SigV4 but a part is missing or malformed. */
  | { readonly kind: 'incomplete'; readonly detail: string };

const KEY_ID = /^[A-Za-z0-9]{1,128}$/;
const SCOPE_PART = /^[A-Za-z0-9-]{1,64}$/;

function header(req: SignedRequestView, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : (v as string | undefined);
}

function fail(detail: string): SignatureProblem {
  return { kind: 'incomplete', detail };
}

/** `AKID/20150830/us-east-1/service/aws4_request` → key id and scope. */
function parseCredential(cred: string): { accessKeyId: string; scope: Scope } | SignatureProblem {
  const parts = cred.split('/');
  const [accessKeyId, date, region, service, terminator] = parts;
  if (parts.length !== 5 || accessKeyId === undefined || date === undefined || region === undefined || service === undefined) {
    return fail('Credential must be KEY/YYYYMMDD/region/service/aws4_request');
  }
  if (!KEY_ID.test(accessKeyId)) return fail('the access key id in Credential is malformed');
  if (!/^\d{8}$/.test(date) || !SCOPE_PART.test(region) || !SCOPE_PART.test(service) || terminator !== SCOPE_TERMINATOR) {
    return fail('Credential must be KEY/YYYYMMDD/region/service/aws4_request');
  }
  return { accessKeyId, scope: { date, region, service } };
}

interface RawParts {
  readonly form: 'header' | 'query';
  readonly credential: string | undefined;
  readonly signedHeaders: string | undefined;
  readonly signature: string | undefined;
  readonly amzDate: string | undefined;
  readonly expires: string | undefined;
}

function rawParts(req: SignedRequestView): RawParts | SignatureProblem {
  const authz = header(req, 'authorization');
  const q = new URLSearchParams(req.query);
  if (authz !== undefined) {
    if (!authz.startsWith(`${ALGORITHM} `)) return { kind: 'unsigned', detail: `the Authorization header is not ${ALGORITHM}` };
    const fields = new Map<string, string>();
    for (const part of authz.slice(ALGORITHM.length + 1).split(',')) {
      const eq = part.indexOf('=');
      if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
    }
    return {
      form: 'header', credential: fields.get('Credential'), signedHeaders: fields.get('SignedHeaders'), signature: fields.get('Signature'),
      amzDate: header(req, 'x-amz-date'), expires: undefined,
    };
  }
  const algorithm = q.get('X-Amz-Algorithm');
  if (algorithm === null) return { kind: 'unsigned', detail: 'no Authorization header and no X-Amz-Algorithm parameter' };
  if (algorithm !== ALGORITHM) return fail(`X-Amz-Algorithm must be ${ALGORITHM}`);
  return {
    form: 'query', credential: q.get('X-Amz-Credential') ?? undefined, signedHeaders: q.get('X-Amz-SignedHeaders') ?? undefined,
    signature: q.get('X-Amz-Signature') ?? undefined, amzDate: q.get('X-Amz-Date') ?? undefined, expires: q.get('X-Amz-Expires') ?? undefined,
  };
}

/** The signature's parts, or why there is none to check. */
export function parseSignature(req: SignedRequestView): ParsedSignature | SignatureProblem {
  const raw = rawParts(req);
  if ('kind' in raw) return raw;
  const where = raw.form === 'header' ? 'the Authorization header' : 'the query string';
  if (raw.credential === undefined) return fail(`Credential is missing from ${where}`);
  if (raw.signedHeaders === undefined) return fail(`SignedHeaders is missing from ${where}`);
  if (raw.signature === undefined) return fail(`Signature is missing from ${where}`);
  if (!/^[0-9a-f]{64}$/.test(raw.signature)) return fail('Signature must be 64 lower-case hex digits');
  const cred = parseCredential(raw.credential);
  if ('kind' in cred) return cred;
  const signedHeaders = raw.signedHeaders.split(';');
  if (signedHeaders.some((h) => !/^[a-z0-9-]+$/.test(h))) return fail('SignedHeaders must be lower-case header names separated by ;');
  if (!signedHeaders.includes('host')) return fail('SignedHeaders must include host');
  if (raw.form === 'header' && !signedHeaders.includes('x-amz-date')) return fail('SignedHeaders must include x-amz-date');
  if (raw.amzDate === undefined) return fail('X-Amz-Date is missing (Ferry does not take the Date header)');
  const signedAt = parseAmzDate(raw.amzDate);
  if (signedAt === undefined) return fail('X-Amz-Date must be YYYYMMDDTHHMMSSZ');
  if (raw.amzDate.slice(0, 8) !== cred.scope.date) return fail('the date in Credential is not the date of X-Amz-Date');
  let expiresSeconds: number | undefined;
  if (raw.expires !== undefined) {
    if (!/^\d{1,6}$/.test(raw.expires)) return fail('X-Amz-Expires must be a number of seconds');
    expiresSeconds = Number(raw.expires);
  }
  return { form: raw.form, accessKeyId: cred.accessKeyId, scope: cred.scope, signedHeaders, signature: raw.signature, amzDate: raw.amzDate, signedAt, expiresSeconds };
}

/** The signature the request should carry if signed with `secretKey`. */
export function expectedSignature(req: SignedRequestView, parsed: ParsedSignature, secretKey: string): string {
  const headers: Record<string, string> = {};
  for (const name of parsed.signedHeaders) headers[name] = header(req, name) ?? '';
  const creq = canonicalRequest(
    { method: req.method, path: req.path, query: req.query, headers, signedHeaders: parsed.signedHeaders, payloadHash: sha256Hex(req.body) },
    parsed.form === 'query' ? 'X-Amz-Signature' : undefined,
  );
  return signature(secretKey, parsed.amzDate, parsed.scope, creq);
}

/** Constant-time comparison, so response timing does not reveal how much of a guess was right. */
export function signatureMatches(req: SignedRequestView, parsed: ParsedSignature, secretKey: string): boolean {
  const want = Buffer.from(expectedSignature(req, parsed, secretKey), 'utf8');
  const got = Buffer.from(parsed.signature, 'utf8');
  return want.length === got.length && timingSafeEqual(want, got);
}

/** Whether a signature made at `signedAt` may be used at `now`: within ±skew, and before X-Amz-Expires runs out. */
export function freshness(parsed: ParsedSignature, now: number, skewMs: number): 'fresh' | 'expired' | 'future' {
  if (parsed.signedAt > now + skewMs) return 'future';
  if (parsed.signedAt < now - skewMs) return 'expired';
  if (parsed.expiresSeconds !== undefined && now > parsed.signedAt + parsed.expiresSeconds * 1000) return 'expired';
  return 'fresh';
}
