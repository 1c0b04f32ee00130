/** The signer and the verifier against AWS's published SigV4 test suite (awsSigV4Suite.ts names the source). */
import { describe, expect, it } from 'vitest';
import { canonicalRequest, sha256Hex, signature, stringToSign } from '../../../shared/auth/sigv4.js';
import { signRequest } from '../../../shared/auth/sign.js';
import { parseSignature, signatureMatches } from '../../../shared/auth/verify.js';
import { CASES, SUITE } from './awsSigV4Suite.js';

const SIGNED_AT = Date.UTC(2015, 7, 30, 12, 36, 0);

describe('aws-sig-v4-test-suite', () => {
  it.each(CASES)('$name: canonical request, string to sign and signature', (c) => {
    const creq = canonicalRequest({
      method: c.method, path: c.path, query: c.query, headers: c.headers, signedHeaders: Object.keys(c.headers), payloadHash: sha256Hex(c.body),
    });
    if (c.creq !== undefined) expect(creq).toBe(c.creq);
    if (c.sts !== undefined) expect(stringToSign(SUITE.amzDate, SUITE.scope, creq)).toBe(c.sts);
    expect(signature(SUITE.secretKey, SUITE.amzDate, SUITE.scope, creq)).toBe(c.signature);
  });

  it.each(CASES)('$name: signRequest writes the suite\'s Authorization header', (c) => {
    const url = new URL(`https://example.amazonaws.com${c.path}${c.query ? `?${c.query}` : ''}`);
    const { host: _h, 'x-amz-date': _d, ...extra } = c.headers;
    const headers = signRequest({ method: c.method, url, headers: extra, body: c.body }, {
      accessKey: SUITE.accessKey, secretKey: SUITE.secretKey, now: SIGNED_AT, region: SUITE.scope.region, service: SUITE.scope.service,
    });
    const signedNames = Object.keys(c.headers).sort().join(';');
    expect(headers.authorization).toBe(`AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=${signedNames}, Signature=${c.signature}`);
  });

  it.each(CASES)('$name: the verifier accepts the suite\'s signed request and refuses another key', (c) => {
    const authorization = `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=${Object.keys(c.headers).sort().join(';')}, Signature=${c.signature}`;
    // The wire carries the path percent-encoded, as an HTTP client sends it.
    const req = { method: c.method, path: encodeURI(c.path), query: c.query, headers: { ...c.headers, authorization }, body: Buffer.from(c.body) };
    const parsed = parseSignature(req);
    if ('kind' in parsed) throw new Error(parsed.detail);
    expect(parsed.scope).toEqual(SUITE.scope);
    expect(signatureMatches(req, parsed, SUITE.secretKey)).toBe(true);
    expect(signatureMatches(req, parsed, `${SUITE.secretKey.slice(0, -1)}X`)).toBe(false);
  });
});
