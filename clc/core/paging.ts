/**
 * EC2 paging (MaxResults / NextToken), pure. A page is the next MaxResults items after a keyset
 * cursor (the sort key of the last item served), not an offset: an item added or removed between
 * two pages neither repeats nor pushes another off a page. The cursor travels in an opaque token,
 * `base64url(JSON).base64url(HMAC-SHA256)`, bound to the action and to a digest of what the request
 * selects, stamped with its issue time; any token this code did not issue for the same request in
 * the last 24 hours is refused with a reason. Reading a token never throws.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** EC2's bounds on MaxResults (DescribeInstances, DescribeTags). */
export const MIN_PAGE_SIZE = 5;
export const MAX_PAGE_SIZE = 1000;
export const PAGE_TOKEN_VERSION = 1;
/** Long enough for any client's walk, short enough that a leaked token is soon worthless. */
export const PAGE_TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** The order a list is paged in, and how its keys travel in a token. */
export interface PageOrder<T, K> {
  keyOf(item: T): K;
  compare(a: K, b: K): number;
  /** The key as JSON. */
  writeKey(key: K): unknown;
  /** A key read back from JSON; undefined when it has not the key's shape. */
  readKey(json: unknown): K | undefined;
}

/** What a token is bound to: the action and a digest of the request's selection (selectionDigest). */
export interface PageScope {
  readonly action: string;
  readonly selection: string;
}

/** A short digest of a request's selection (ids, filters), written as canonical JSON by the caller. */
export function selectionDigest(selection: unknown): string {
  return createHash('sha256').update(JSON.stringify(selection)).digest().subarray(0, 16).toString('base64url');
}

/** Filters as a token binds them: the order of filters, or of one filter's values, selects nothing different. */
export function canonicalFilters(filters: readonly { readonly name: string; readonly values: readonly string[] }[]): [string, string[]][] {
  const canonical = filters.map((f): [string, string[]] => [f.name, [...new Set(f.values)].sort()]);
  return canonical.sort((a, b) => compareJson(a, b));
}

function compareJson(a: unknown, b: unknown): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export interface Page<T, K> {
  readonly items: readonly T[];
  /** The key of the page's last item, when more items follow it. */
  readonly next?: K;
}

/** Index of the first item of `sorted` whose key is after `after`. */
function firstAfter<T, K>(sorted: readonly T[], order: PageOrder<T, K>, after: K): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (order.compare(order.keyOf(sorted[mid] as T), after) > 0) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The items of `sorted` (in `order`) after the cursor `after` (from the start without one), at most
 * `max` of them (all without it).
 */
export function takePage<T, K>(sorted: readonly T[], order: PageOrder<T, K>, after: K | undefined, max: number | undefined): Page<T, K> {
  const start = after === undefined ? 0 : firstAfter(sorted, order, after);
  const end = max === undefined ? sorted.length : Math.min(sorted.length, start + max);
  const items = sorted.slice(start, end);
  const last = items[items.length - 1];
  return end < sorted.length && last !== undefined ? { items, next: order.keyOf(last) } : { items };
}

/** The token's payload: version, action, selection digest, cursor, issue time (epoch ms). */
interface TokenBody {
  readonly v: number;
  readonly a: string;
  readonly s: string;
  readonly c: unknown;
  readonly t: number;
}

const TOKEN_SHAPE = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

function mac(key: Uint8Array, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest();
}

/** Signs any payload text; issuePageToken's only step below the body (tests seal odd payloads with it). */
export function sealPageToken(key: Uint8Array, payloadJson: string): string {
  const payload = Buffer.from(payloadJson, 'utf8').toString('base64url');
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

export function issuePageToken(key: Uint8Array, scope: PageScope, cursor: unknown, issuedAt: number): string {
  const body: TokenBody = { v: PAGE_TOKEN_VERSION, a: scope.action, s: scope.selection, c: cursor, t: issuedAt };
  return sealPageToken(key, JSON.stringify(body));
}

export type TokenReading<K> = { readonly ok: true; readonly cursor: K } | { readonly ok: false; readonly reason: string };

const refused = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

function parseBody(text: string): Partial<TokenBody> | undefined {
  try {
    const body: unknown = JSON.parse(text);
    return typeof body === 'object' && body !== null && !Array.isArray(body) ? body : undefined;
  } catch {
    return undefined;
  }
}

function showTime(epochMs: number): string {
  const d = new Date(epochMs);
  return Number.isNaN(d.getTime()) ? String(epochMs) : d.toISOString();
}

/** The cursor of `token` if this key issued it for `scope` less than 24 hours before `now`; else why not. */
export function readPageToken<K>(key: Uint8Array, token: string, scope: PageScope, readKey: (json: unknown) => K | undefined, now: number): TokenReading<K> {
  const m = TOKEN_SHAPE.exec(token);
  if (!m) return refused('it is not a token this cloud issued');
  const [, payload, signature] = m as unknown as [string, string, string];
  const given = Buffer.from(signature, 'base64url');
  // Non-canonical base64url (stray low bits in the last character) is an altered token too.
  const expected = mac(key, payload);
  if (given.toString('base64url') !== signature || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return refused('it was altered, or was not issued by this cloud');
  }
  const body = parseBody(Buffer.from(payload, 'base64url').toString('utf8'));
  if (body === undefined) return refused('its content is not readable');
  if (body.v !== PAGE_TOKEN_VERSION) return refused(`it is of version ${String(body.v)}; this cloud reads version ${PAGE_TOKEN_VERSION}`);
  if (body.a !== scope.action) return refused(`it was issued for ${String(body.a)}, not ${scope.action}`);
  if (body.s !== scope.selection) return refused('it was issued for a request with other filters or ids; send the same ones with each page');
  if (typeof body.t !== 'number' || !Number.isFinite(body.t)) return refused('its content is not readable');
  if (now - body.t > PAGE_TOKEN_LIFETIME_MS) return refused(`it expired: issued ${showTime(body.t)}, tokens last 24 hours`);
  const cursor = readKey(body.c);
  if (cursor === undefined) return refused('its content is not readable');
  return { ok: true, cursor };
}
