/**
 * Properties of sign-then-verify: whatever the request, the verifier accepts what the signer made,
 * and a change of any single byte of method, path, query, body, date or a signed header makes it
 * refuse (a different signature, or a malformed one), never crash.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../../shared/auth/sign.js';
import { parseSignature, signatureMatches, type SignedRequestView } from '../../../shared/auth/verify.js';

const KEY = { accessKey: 'AKIPROPERTY000000001', secretKey: 'propertySecret/000000000000000000000000+' };
const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);

const segment = fc.string({ minLength: 1, maxLength: 12 }).map((s) => encodeURIComponent(s));
const pathArb = fc.array(segment, { minLength: 1, maxLength: 3 }).map((segs) => `/${segs.join('/')}`);
const pairArb = fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 }));
const requestArb = fc.record({
  method: fc.constantFrom('GET', 'POST'),
  path: pathArb,
  query: fc.array(pairArb, { maxLength: 4 }).map((pairs) => new URLSearchParams(pairs).toString()),
  body: fc.string({ maxLength: 40 }),
  extra: fc.string({ minLength: 1, maxLength: 16 }).filter((s) => /^[\x21-\x7e]+$/.test(s)),
});

type Req = { method: string; path: string; query: string; body: string; extra: string };

/** The request as the server would see it, signed as the CLI signs it. */
function signed(r: Req): SignedRequestView {
  const url = new URL(`http://127.0.0.1:8773${r.path}${r.query ? `?${r.query}` : ''}`);
  const headers = signRequest({ method: r.method, url, headers: { 'x-ferry-test': r.extra }, body: r.body }, { ...KEY, now: NOW });
  return { method: r.method, path: url.pathname, query: url.search.replace(/^\?/, ''), headers, body: Buffer.from(r.body) };
}

function accepted(v: SignedRequestView): boolean {
  const parsed = parseSignature(v);
  return !('kind' in parsed) && signatureMatches(v, parsed, KEY.secretKey);
}

/** `s` with the byte at `i` replaced by a different printable one. */
function flipChar(s: string, i: number, to: number): string {
  const at = i % s.length;
  const code = s.charCodeAt(at);
  let next = 0x21 + (to % 94);
  if (next === code) next = next === 0x7e ? 0x21 : next + 1;
  return s.slice(0, at) + String.fromCharCode(next) + s.slice(at + 1);
}

describe('sign then verify', () => {
  it('accepts every signed request', () => {
    fc.assert(fc.property(requestArb, (r) => { expect(accepted(signed(r))).toBe(true); }), { numRuns: 300 });
  });

  it('refuses a change of one byte anywhere the signature covers', () => {
    const part = fc.constantFrom('method', 'path', 'query', 'body', 'date', 'header', 'host');
    fc.assert(fc.property(requestArb, part, fc.nat(), fc.nat(), (r, which, i, to) => {
      const v = signed(r);
      const h = v.headers as Record<string, string>;
      let changed: SignedRequestView;
      switch (which) {
        case 'method': changed = { ...v, method: v.method === 'GET' ? 'POST' : 'GET' }; break;
        case 'path': changed = { ...v, path: `${v.path}x` }; break;
        case 'query': changed = { ...v, query: v.query === '' ? 'a=b' : `${v.query}x` }; break;
        case 'body': changed = { ...v, body: Buffer.concat([v.body, Buffer.from([0x20 + (to % 90)])]) }; break;
        case 'date': changed = { ...v, headers: { ...h, 'x-amz-date': flipDigit(h['x-amz-date'] ?? '', i) } }; break;
        case 'header': changed = { ...v, headers: { ...h, 'x-ferry-test': flipChar(h['x-ferry-test'] ?? 'x', i, to) } }; break;
        default: changed = { ...v, headers: { ...h, host: flipChar(h.host ?? 'x', i, to) } };
      }
      expect(accepted(changed)).toBe(false);
    }), { numRuns: 500 });
  });

  it('refuses a change of any one byte inside the body or path', () => {
    fc.assert(fc.property(requestArb.filter((r) => r.body.length > 0), fc.nat(), fc.nat(255), (r, i, b) => {
      const v = signed(r);
      const body = Buffer.from(v.body);
      const at = i % body.length;
      fc.pre(body[at] !== b);
      body[at] = b;
      expect(accepted({ ...v, body })).toBe(false);
    }), { numRuns: 300 });
  });
});

/** A different digit in an X-Amz-Date (a date that still parses, or one that does not). */
function flipDigit(date: string, i: number): string {
  const positions = [...date].map((c, k) => (/\d/.test(c) ? k : -1)).filter((k) => k >= 0);
  const at = positions[i % positions.length] ?? 0;
  const d = Number(date[at]);
  return date.slice(0, at) + String((d + 1) % 10) + date.slice(at + 1);
}

describe('parseSignature on anything', () => {
  it('returns parts or a problem for any Authorization header and query, never throws', () => {
    const authz = fc.oneof(fc.string(), fc.string().map((s) => `AWS4-HMAC-SHA256 ${s}`),
      fc.tuple(fc.string(), fc.string(), fc.string()).map(([c, h, s]) => `AWS4-HMAC-SHA256 Credential=${c}, SignedHeaders=${h}, Signature=${s}`));
    fc.assert(fc.property(fc.option(authz), fc.string(), fc.option(fc.string()), (a, query, date) => {
      const headers: Record<string, string> = {};
      if (a !== null) headers.authorization = a;
      if (date !== null) headers['x-amz-date'] = date;
      const r = parseSignature({ method: 'POST', path: '/', query, headers, body: Buffer.alloc(0) });
      if ('kind' in r) expect(['unsigned', 'incomplete']).toContain(r.kind);
      else expect(signatureMatches({ method: 'POST', path: '/', query, headers, body: Buffer.alloc(0) }, r, KEY.secretKey)).toBe(false);
    }), { numRuns: 500 });
  });
});
