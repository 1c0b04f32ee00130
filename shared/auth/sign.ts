/**
 * Signing a request with SigV4, in the Authorization-header form (what the CLI sends) and the
 * query-string form (presigned URLs). `now` is an input so tests and the simulator sign for any time.
 */
import { ALGORITHM, canonicalRequest, formatAmzDate, scopeString, sha256Hex, signature, type Scope } from './sigv4.js';

export interface SigningCredentials {
  readonly accessKey: string;
  readonly secretKey: string;
}

/** The region Ferry signs for unless told otherwise; the CLC accepts any region (docs/SECURITY.md). */
export const DEFAULT_REGION = 'eucalyptus';
/** The service name euca2ools and the AWS SDKs sign EC2-API requests with. */
export const DEFAULT_SERVICE = 'ec2';

export interface SignOptions extends SigningCredentials {
  /** Epoch ms of the signature's X-Amz-Date. */
  readonly now: number;
  readonly region?: string;
  readonly service?: string;
}

export interface RequestToSign {
  readonly method: string;
  readonly url: URL;
  /** Extra headers to send and sign (lower-case names); host and x-amz-date are added. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
}

function scopeOf(opts: SignOptions): Scope {
  return { date: formatAmzDate(opts.now).slice(0, 8), region: opts.region ?? DEFAULT_REGION, service: opts.service ?? DEFAULT_SERVICE };
}

/** Every header to send (host included, so callers that cannot set it know what was signed) plus Authorization. */
export function signRequest(req: RequestToSign, opts: SignOptions): Record<string, string> {
  const amzDate = formatAmzDate(opts.now);
  const scope = scopeOf(opts);
  const headers: Record<string, string> = { ...req.headers, host: req.url.host, 'x-amz-date': amzDate };
  const signedHeaders = Object.keys(headers).sort();
  const creq = canonicalRequest({
    method: req.method, path: req.url.pathname, query: req.url.search.replace(/^\?/, ''), headers, signedHeaders, payloadHash: sha256Hex(req.body ?? ''),
  });
  const sig = signature(opts.secretKey, amzDate, scope, creq);
  return { ...headers, authorization: `${ALGORITHM} Credential=${opts.accessKey}/${scopeString(scope)}, SignedHeaders=${signedHeaders.join(';')}, Signature=${sig}` };
}

/** A URL whose query carries the signature (X-Amz-Algorithm ... X-Amz-Signature); signs only host. */
export function presignUrl(method: string, url: URL, opts: SignOptions & { readonly expiresSeconds?: number }, body: string | Buffer = ''): URL {
  const amzDate = formatAmzDate(opts.now);
  const scope = scopeOf(opts);
  const out = new URL(url);
  out.searchParams.set('X-Amz-Algorithm', ALGORITHM);
  out.searchParams.set('X-Amz-Credential', `${opts.accessKey}/${scopeString(scope)}`);
  out.searchParams.set('X-Amz-Date', amzDate);
  if (opts.expiresSeconds !== undefined) out.searchParams.set('X-Amz-Expires', String(opts.expiresSeconds));
  out.searchParams.set('X-Amz-SignedHeaders', 'host');
  const creq = canonicalRequest({
    method, path: out.pathname, query: out.search.replace(/^\?/, ''), headers: { host: out.host }, signedHeaders: ['host'], payloadHash: sha256Hex(body),
  });
  out.searchParams.set('X-Amz-Signature', signature(opts.secretKey, amzDate, scope, creq));
  return out;
}

export interface SignQueryOptions extends SignOptions {
  /** The CLC endpoint, e.g. http://127.0.0.1:8773/services/Eucalyptus. */
  readonly url: string;
}

export interface SignedQuery {
  /** Headers to send as they are; `host` is signed but left out, since fetch sets it from the URL itself. */
  readonly headers: Record<string, string>;
  /** The form body to POST. */
  readonly body: string;
}

/**
 * One AWS-Query call (form POST) signed for the CLC: the CLI's and the test helpers' one way to sign.
 *   fetch(url, { method: 'POST', ...signQuery(params, { accessKey, secretKey, url, now: Date.now() }) })
 */
export function signQuery(params: Readonly<Record<string, string>>, opts: SignQueryOptions): SignedQuery {
  const body = new URLSearchParams(params).toString();
  const signed = signRequest({
    method: 'POST',
    url: new URL(opts.url),
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body,
  }, opts);
  const { host: _host, ...headers } = signed;
  return { headers, body };
}
