/**
 * The admin API with SigV4 on: one test per way a request can fail to authenticate or be allowed,
 * each asserting the code, the status, and that nothing happened (the fake Clusters recorded no
 * call, the store holds no instance). Signing times are the harness's ManualClock's.
 */
import { describe, expect, it } from 'vitest';
import type { Identity } from '../../clc/core/identities.js';
import { presignUrl, signQuery, signRequest } from '../../shared/auth/sign.js';
import { sendRaw, serveApp, signedQuery, testAuthenticator, TEST_ADMIN, TEST_USER } from './authFixtures.js';
import { capturingLogger, errorCode, harness, items, START, type Harness, type QueryReply } from './harness.js';

const RUN = { Action: 'RunInstances', ImageId: 'emi-00000001', 'Placement.AvailabilityZone': 'cluster01' };
const DISABLE = { Action: 'DisableService', Name: '127.0.12.11' };
const SKEW_MS = 5 * 60_000;

function signedHarness(): Promise<Harness> {
  return harness({ authenticator: (clock) => testAuthenticator(clock) });
}

function expectRefused(h: Harness, r: QueryReply, status: number, code: string): void {
  expect([r.status, errorCode(r)], r.text).toEqual([status, code]);
  expect(h.clusters.calls).toEqual([]);
  expect(h.store.read().instances).toEqual({});
}

const stranger: Identity = { ...TEST_ADMIN, accessKey: 'AKINOBODY00000000000' };
const wrongSecret: Identity = { ...TEST_ADMIN, secretKey: `${TEST_ADMIN.secretKey.slice(0, -1)}X` };

describe('SigV4 on the admin API', () => {
  it('serves a request signed by the admin, in the Authorization-header form', async () => {
    const h = await signedHarness();
    const r = await signedQuery(h.app, RUN, TEST_ADMIN, START);
    expect(r.status, r.text).toBe(200);
    expect(h.clusters.calls.some((c) => c.op === 'ccRunInstances')).toBe(true);
  });

  it('serves a request signed in the query-string form (X-Amz-Algorithm ... X-Amz-Signature)', async () => {
    const h = await signedHarness();
    const r = await sendRaw(h.app, (url) => {
      const body = new URLSearchParams({ Version: '2013-02-01', ...RUN }).toString();
      const signed = presignUrl('POST', new URL(url), { accessKey: TEST_ADMIN.accessKey, secretKey: TEST_ADMIN.secretKey, now: START, expiresSeconds: 60 }, body);
      return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body, pathAndQuery: `${signed.pathname}${signed.search}` };
    });
    expect(r.status, r.text).toBe(200);
  });

  it.each([['us-east-1', 'ec2'], ['undefined-4242', 'ec2'], ['localhost', 'bootstrap'], ['eucalyptus', 'bootstrap']])(
    'takes any region (here %s) and the services the tools sign with (%s)', async (region, service) => {
      const h = await signedHarness();
      const r = await sendRaw(h.app, (url) => {
        const body = new URLSearchParams({ Version: '2013-02-01', Action: 'DescribeRegions' }).toString();
        const { host: _host, ...headers } = signRequest({ method: 'POST', url: new URL(url), headers: { 'content-type': 'application/x-www-form-urlencoded' }, body },
          { accessKey: TEST_ADMIN.accessKey, secretKey: TEST_ADMIN.secretKey, now: START, region, service });
        return { headers, body };
      });
      expect(r.status, r.text).toBe(200);
    },
  );

  it('accepts a signature exactly at the edge of the allowed skew, either way', async () => {
    const h = await signedHarness();
    expect((await signedQuery(h.app, { Action: 'DescribeInstances' }, TEST_ADMIN, START - SKEW_MS)).status).toBe(200);
    expect((await signedQuery(h.app, { Action: 'DescribeInstances' }, TEST_ADMIN, START + SKEW_MS)).status).toBe(200);
  });

  const refusals: [string, (h: Harness) => Promise<QueryReply>, number, string][] = [
    ['unsigned', (h) => sendRaw(h.app, () => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ Version: '2013-02-01', ...RUN }).toString() })), 401, 'AuthFailure'],
    ['signed with SigV2-style parameters only', (h) => sendRaw(h.app, () => ({
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ Version: '2013-02-01', ...RUN, AWSAccessKeyId: TEST_ADMIN.accessKey, SignatureVersion: '2', Signature: 'x' }).toString(),
    })), 401, 'AuthFailure'],
    ['an unknown access key', (h) => signedQuery(h.app, RUN, stranger, START), 401, 'AuthFailure'],
    ['a wrong secret key', (h) => signedQuery(h.app, RUN, wrongSecret, START), 403, 'SignatureDoesNotMatch'],
    ['a body changed after signing', (h) => sendRaw(h.app, (url) => {
      const s = signQuery({ Version: '2013-02-01', ...RUN }, { accessKey: TEST_ADMIN.accessKey, secretKey: TEST_ADMIN.secretKey, url, now: START });
      return { headers: s.headers, body: s.body.replace('MinCount', 'MaxCount').replace('emi-00000001', 'emi-00000002') };
    }), 403, 'SignatureDoesNotMatch'],
    ['expired (signed more than 5 minutes before the CLC clock)', (h) => signedQuery(h.app, RUN, TEST_ADMIN, START - SKEW_MS - 1000), 400, 'RequestExpired'],
    ['future-dated (more than 5 minutes ahead)', (h) => signedQuery(h.app, RUN, TEST_ADMIN, START + SKEW_MS + 1000), 400, 'RequestExpired'],
    ['an Authorization header without SignedHeaders', (h) => sendRaw(h.app, (url) => {
      const s = signQuery({ Version: '2013-02-01', ...RUN }, { accessKey: TEST_ADMIN.accessKey, secretKey: TEST_ADMIN.secretKey, url, now: START });
      return { headers: { ...s.headers, authorization: (s.headers.authorization ?? '').replace(/SignedHeaders=[^,]*, /, '') }, body: s.body };
    }), 400, 'IncompleteSignature'],
    ['host left out of SignedHeaders', (h) => sendRaw(h.app, (url) => {
      const s = signQuery({ Version: '2013-02-01', ...RUN }, { accessKey: TEST_ADMIN.accessKey, secretKey: TEST_ADMIN.secretKey, url, now: START });
      return { headers: { ...s.headers, authorization: (s.headers.authorization ?? '').replace(';host;', ';') }, body: s.body };
    }), 400, 'IncompleteSignature'],
    ['a non-admin on an admin-only action', (h) => signedQuery(h.app, DISABLE, TEST_USER, START), 403, 'UnauthorizedOperation'],
    ['correctly signed, but scoped to another service (s3)', (h) => sendRaw(h.app, (url) => {
      const body = new URLSearchParams({ Version: '2013-02-01', ...RUN }).toString();
      const headers = signRequest({ method: 'POST', url: new URL(url), headers: { 'content-type': 'application/x-www-form-urlencoded' }, body },
        { accessKey: TEST_ADMIN.accessKey, secretKey: TEST_ADMIN.secretKey, now: START, service: 's3' });
      const { host: _host, ...rest } = headers;
      return { headers: rest, body };
    }), 403, 'SignatureDoesNotMatch'],
    ['a non-admin starting a migration', (h) => signedQuery(h.app, { Action: 'MigrateInstances', SourceHost: '127.0.12.11' }, TEST_USER, START), 403, 'UnauthorizedOperation'],
  ];

  it.each(refusals)('refuses %s, changing nothing', async (_name, send, status, code) => {
    const h = await signedHarness();
    expectRefused(h, await send(h), status, code);
  });

  it('serves a byte-identical signed request again, as AWS does; its ClientToken keeps the launch single', async () => {
    // botocore signs only host, x-amz-date and content-type: its retry within a second is exactly this.
    const h = await signedHarness();
    const served = await serveApp(h.app);
    try {
      const signed = signQuery({ Version: '2013-02-01', ...RUN, ClientToken: 'retry-1' }, { accessKey: TEST_ADMIN.accessKey, secretKey: TEST_ADMIN.secretKey, url: served.url, now: START });
      const first = await served.post(signed);
      expect(first.status, first.text).toBe(200);
      const instancesAfterFirst = h.store.read().instances;
      h.clock.advance(30_000);
      const again = await served.post(signed);
      expect(again.status, again.text).toBe(200);
      expect(again.doc.RunInstancesResponse.reservationId).toBe(first.doc.RunInstancesResponse.reservationId);
      expect(h.clusters.calls.filter((c) => c.op === 'ccRunInstances')).toHaveLength(1);
      expect(h.store.read().instances).toEqual(instancesAfterFirst);
    } finally {
      await served.close();
    }
  });

  it('serves two identical describes signed in the same second', async () => {
    const h = await signedHarness();
    const served = await serveApp(h.app);
    try {
      const signed = signQuery({ Version: '2013-02-01', Action: 'DescribeInstances' }, { accessKey: TEST_ADMIN.accessKey, secretKey: TEST_ADMIN.secretKey, url: served.url, now: START });
      const replies = await Promise.all(Array.from({ length: 20 }, () => served.post(signed)));
      expect(replies.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 200));
    } finally {
      await served.close();
    }
  });

  it('lets a non-admin describe and launch, as its own account', async () => {
    const h = await signedHarness();
    const run = await signedQuery(h.app, RUN, TEST_USER, START);
    expect(run.status, run.text).toBe(200);
    expect(run.doc.RunInstancesResponse.ownerId).toBe(TEST_USER.accountId);
    const d = await signedQuery(h.app, { Action: 'DescribeInstances' }, TEST_USER, START);
    expect(items(d.doc.DescribeInstancesResponse.reservationSet)).toHaveLength(1);
  });

  it('never puts a secret key or a signature in an answer or a log line', async () => {
    const { logger, lines } = capturingLogger();
    const h = await harness({ logger, authenticator: (clock) => testAuthenticator(clock) });
    const bad = await signedQuery(h.app, RUN, wrongSecret, START);
    const good = await signedQuery(h.app, { Action: 'DescribeInstances' }, TEST_ADMIN, START);
    expect(good.status).toBe(200);
    const logged = JSON.stringify(lines);
    expect(lines.length).toBeGreaterThan(0);
    for (const text of [bad.text, good.text, logged]) {
      expect(text).not.toContain(TEST_ADMIN.secretKey);
      expect(text).not.toContain(wrongSecret.secretKey);
      expect(text).not.toContain('Signature=');
    }
  });
});
