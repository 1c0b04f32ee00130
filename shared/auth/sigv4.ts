/**
 * AWS Signature Version 4 (HMAC-SHA256), the pure parts both the euca-* CLI (signing) and the CLC
 * (verifying) need: canonical request, string to sign, signing key, signature.
 *
 * Hand-written rather than taken from an AWS SDK: @aws-sdk/signature-v4 comes with the SDK's whole
 * middleware stack and, for EC2 use, a full EC2 client; this is one function over node:crypto,
 * checked against AWS's published test suite (test/shared/auth/sigv4Vectors.test.ts).
 */
import { createHash, createHmac } from 'node:crypto';

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const SCOPE_TERMINATOR = 'aws4_request';

/** What the signature covers, as it went over the wire. */
export interface CanonicalInput {
  readonly method: string;
  /** The request path as sent (percent-encoded or not), without the query string. */
  readonly path: string;
  /** The raw query string, without '?'. */
  readonly query: string;
  /** Header values by lower-case name. */
  readonly headers: Readonly<Record<string, string>>;
  /** Lower-case header names the signature covers. */
  readonly signedHeaders: readonly string[];
  /** SHA-256 hex of the body. */
  readonly payloadHash: string;
}

export interface Scope {
  /** YYYYMMDD. */
  readonly date: string;
  readonly region: string;
  readonly service: string;
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** RFC 3986 percent-encoding: everything but A-Z a-z 0-9 - _ . ~ (and '/' when kept). */
export function uriEncode(s: string, keepSlash = false): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c) || (keepSlash && c === '/')) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // not valid percent-encoding: signed as the literal text it is
  }
}

/** Each segment decoded once and re-encoded, so `/a b` and `/a%20b` sign alike (AWS get-space, get-utf8). */
export function canonicalPath(path: string): string {
  if (path === '') return '/';
  return path.split('/').map((seg) => uriEncode(decodeSegment(seg))).join('/');
}

/**
 * Pairs decoded exactly as the CLC's own parameter parser decodes them (URLSearchParams, '+' is a
 * space), so two query strings that sign alike also mean the same parameters; then re-encoded and
 * sorted by name, then value. `omit` drops a pair by name (X-Amz-Signature in the query form).
 */
export function canonicalQuery(query: string, omit?: string): string {
  return [...new URLSearchParams(query)]
    .filter(([k]) => k !== omit)
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

/** Trimmed, inner runs of spaces collapsed, as the spec says. */
function canonicalHeaderValue(v: string): string {
  return v.trim().replace(/\s+/g, ' ');
}

export function canonicalRequest(input: CanonicalInput, omitQueryParam?: string): string {
  const names = [...input.signedHeaders].sort();
  const headerLines = names.map((n) => `${n}:${canonicalHeaderValue(input.headers[n] ?? '')}\n`).join('');
  return [input.method.toUpperCase(), canonicalPath(input.path), canonicalQuery(input.query, omitQueryParam), headerLines, names.join(';'), input.payloadHash].join('\n');
}

export function scopeString(scope: Scope): string {
  return `${scope.date}/${scope.region}/${scope.service}/${SCOPE_TERMINATOR}`;
}

export function stringToSign(amzDate: string, scope: Scope, creq: string): string {
  return [ALGORITHM, amzDate, scopeString(scope), sha256Hex(creq)].join('\n');
}

export function signingKey(secretKey: string, scope: Scope): Buffer {
  const kDate = hmac(`AWS4${secretKey}`, scope.date);
  const kRegion = hmac(kDate, scope.region);
  const kService = hmac(kRegion, scope.service);
  return hmac(kService, SCOPE_TERMINATOR);
}

/** The hex signature of a canonical request. */
export function signature(secretKey: string, amzDate: string, scope: Scope, creq: string): string {
  return createHmac('sha256', signingKey(secretKey, scope)).update(stringToSign(amzDate, scope, creq), 'utf8').digest('hex');
}

/** 20150830T123600Z for an epoch-ms time. */
export function formatAmzDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/** Epoch ms of an X-Amz-Date, or undefined when it is not YYYYMMDDTHHMMSSZ. */
export function parseAmzDate(s: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return formatAmzDate(ms) === s ? ms : undefined; // rejects 20150231 and friends
}
