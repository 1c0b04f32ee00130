/**
 * The status page's HTTP edge in-process, mounted by buildClcApp over the fake CCs and a real host
 * HA facade, served on 127.0.78.1:18801: login and its refusals, the cookie, the session's end
 * (logout, expiry), the summary from the describes' own reads, the assets, and no secret in a log.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClcApp, STATUS_PATH } from '../../../clc/api/app.js';
import { acceptUnsigned } from '../../../clc/api/auth.js';
import { LoginLimiter } from '../../../clc/status/loginLimiter.js';
import { SessionStore, SESSION_TTL_MS } from '../../../clc/status/sessionStore.js';
import { adminLoginCheck } from '../../../clc/status/statusAuth.js';
import { SESSION_COOKIE, statusPage } from '../../../clc/status/statusRoutes.js';
import { gatherSummary } from '../../../clc/status/statusSources.js';
import type { StatusSummary } from '../../../clc/status/summary.js';
import { RefusalLog } from '../../../shared/refusalLog.js';
import { capturingLogger, harness, launchRunning, query, type Harness } from '../harness.js';

const HOST = '127.0.78.1';
const PORT = 18801;
const ADMIN = { accessKey: 'AKIASTATUSTEST000001', secretKey: 'status-page-secret-Zq81/xT' };

let h: Harness;
let server: Server;
let sessions: SessionStore;
const { logger, lines } = capturingLogger();

beforeAll(async () => {
  h = await harness();
  sessions = new SessionStore({ clock: h.clock });
  const status = statusPage({
    clock: h.clock, check: adminLoginCheck(ADMIN), refusals: new RefusalLog({ logger, clock: h.clock }), sessions,
    limiter: new LoginLimiter({ clock: h.clock, maxFailures: 3 }),
    summary: () => gatherSummary({ clusters: h.clusters, store: h.store, clock: h.clock, logger, ...(h.ha ? { ha: h.ha.control } : {}) }),
  });
  const app = buildClcApp({ clusters: h.clusters, store: h.store, clock: h.clock, logger, gate: h.gate, authenticator: acceptUnsigned, status });
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(PORT, HOST, resolve));
  expect((server.address() as AddressInfo).port).toBe(PORT);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const login = (fields: Record<string, string>) => request(server).post(`${STATUS_PATH}/login`).type('form').send(new URLSearchParams(fields).toString());

async function loggedIn(): Promise<string> {
  const res = await login({ AccessKeyId: ADMIN.accessKey, SecretKey: ADMIN.secretKey });
  expect(res.status).toBe(200);
  const cookie = String(res.headers['set-cookie']?.[0] ?? '');
  return cookie.split(';')[0] ?? '';
}

describe('status page without a session', () => {
  it('serves the login form, not the page, with a strict content policy', async () => {
    const res = await request(server).get(STATUS_PATH);
    expect(res.status).toBe(200);
    expect(res.text).toContain('id="login"');
    expect(res.text).not.toContain('id="nodes"');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('gives no data: StatusSessionRequired', async () => {
    for (const cookie of [undefined, `${SESSION_COOKIE}=forged`, `${SESSION_COOKIE}=`]) {
      const req = request(server).get(`${STATUS_PATH}/api/summary`);
      const res = await (cookie ? req.set('Cookie', cookie) : req);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('StatusSessionRequired');
    }
  });

  it('serves the assets (they hold no data), and nothing else under /status', async () => {
    const js = await request(server).get(`${STATUS_PATH}/assets/status.js`);
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toContain('text/javascript');
    expect(js.text).toContain('/status/api/summary');
    for (const path of ['/assets/nope.js', '/assets/..%2F..%2Fmain.ts', '/assets/%2e%2e/statusRoutes.ts', '/api/other']) {
      const res = await request(server).get(`${STATUS_PATH}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code, path).toBe('UnknownEndpoint');
    }
  });
});

describe('status page login', () => {
  it.each([
    [{ AccessKeyId: ADMIN.accessKey }, 400, 'MissingParameter'],
    [{ SecretKey: ADMIN.secretKey }, 400, 'MissingParameter'],
    [{ AccessKeyId: ADMIN.accessKey, SecretKey: 'wrong' }, 401, 'StatusLoginFailed'],
  ])('%j → %s %s, and no session', async (fields, status, code) => {
    const before = sessions.size;
    const res = await login(fields);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(sessions.size).toBe(before);
  });

  it('answers the admin credentials with an HttpOnly, SameSite=Strict session cookie for /status', async () => {
    const res = await login({ AccessKeyId: ADMIN.accessKey, SecretKey: ADMIN.secretKey });
    expect(res.status).toBe(200);
    const cookie = String(res.headers['set-cookie']?.[0] ?? '');
    expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43}; Path=/status; Max-Age=${SESSION_TTL_MS / 1000}; HttpOnly; SameSite=Strict$`));
    expect(res.text).not.toContain(ADMIN.secretKey);
  });

  it('then serves the page and its data; logout ends it', async () => {
    const cookie = await loggedIn();
    const page = await request(server).get(STATUS_PATH).set('Cookie', cookie);
    expect(page.text).toContain('id="nodes"');
    expect((await request(server).get(`${STATUS_PATH}/api/summary`).set('Cookie', cookie)).status).toBe(200);
    const out = await request(server).post(`${STATUS_PATH}/logout`).set('Cookie', cookie);
    expect(out.body).toEqual({ loggedOut: true });
    expect(String(out.headers['set-cookie']?.[0])).toContain('Max-Age=0');
    expect((await request(server).get(`${STATUS_PATH}/api/summary`).set('Cookie', cookie)).status).toBe(401);
  });

  it('ends a session after 12 hours (server side)', async () => {
    const cookie = await loggedIn();
    h.clock.advance(SESSION_TTL_MS);
    const res = await request(server).get(`${STATUS_PATH}/api/summary`).set('Cookie', cookie);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('StatusSessionRequired');
  });

  it('limits failed logins per source: StatusLoginThrottled with Retry-After, even for the right secret, until the window ends', async () => {
    h.clock.advance(120_000); // a fresh window for this source
    for (let k = 0; k < 3; k++) expect((await login({ AccessKeyId: ADMIN.accessKey, SecretKey: `guess-${k}` })).body.error.code).toBe('StatusLoginFailed');
    const refused = await login({ AccessKeyId: ADMIN.accessKey, SecretKey: ADMIN.secretKey });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('StatusLoginThrottled');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    h.clock.advance(60_000);
    expect((await login({ AccessKeyId: ADMIN.accessKey, SecretKey: ADMIN.secretKey })).status).toBe(200);
  });

  it('never writes the secret, or a guess, into the log', () => {
    const text = JSON.stringify(lines);
    expect(text).toContain('StatusLoginFailed');
    expect(text).not.toContain(ADMIN.secretKey);
    expect(text).not.toContain('guess-0');
  });
});

describe('status page summary', () => {
  it('shows the clusters, nodes with HA state, and a drain in flight with its items', async () => {
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    const source = h.clusters.node('127.0.12.11')?.instances.some((i) => i.instanceId === a) ? '127.0.12.11' : '127.0.12.12';
    const r = await query(h.app, { Action: 'MigrateInstances', SourceHost: source });
    expect(r.status).toBe(200);
    const cookie = await loggedIn();
    const res = await request(server).get(`${STATUS_PATH}/api/summary`).set('Cookie', cookie);
    expect(res.status).toBe(200);
    const s = res.body as StatusSummary;
    expect(s.generatedAt).toBe(h.clock.now());
    expect(s.clusters.map((c) => [c.name, c.state, c.nodes])).toEqual([['cluster01', 'ENABLED', 2], ['cluster02', 'ENABLED', 2]]);
    expect(s.clusters[0]?.vmTypes.find((t) => t.name === 'm1.small')?.max).toBeGreaterThan(0);
    expect(s.nodes.map((n) => n.host)).toEqual(['127.0.12.11', '127.0.12.12', '127.0.12.21', '127.0.12.22']);
    expect(s.nodes.every((n) => n.state === 'ENABLED' && n.cores.total === 4)).toBe(true);
    const drain = s.inFlight.find((m) => m.migrationId === r.doc.MigrateInstancesResponse.migrationId);
    expect(drain?.source).toBe(source);
    expect(drain?.items.map((i) => i.instanceId).sort()).toEqual(expect.arrayContaining(
      [a, b].filter((id) => h.clusters.node(source)?.instances.some((i) => i.instanceId === id)),
    ));
    expect(s.haEnabled).toBe(true);
  });

  it('names a cluster whose CC does not answer, and still shows the others', async () => {
    h.clusters.down.add('cluster02');
    try {
      const cookie = await loggedIn();
      const s = (await request(server).get(`${STATUS_PATH}/api/summary`).set('Cookie', cookie)).body as StatusSummary;
      expect(s.clusters.find((c) => c.name === 'cluster02')?.state).toBe('NOTREADY');
      expect(s.nodes.every((n) => n.partition === 'cluster01')).toBe(true);
    } finally {
      h.clusters.down.delete('cluster02');
    }
  });
});

describe('a CLC without the status page (--auth none)', () => {
  it('answers /status as any unknown path: UnknownEndpoint, as an EC2 error document', async () => {
    const plain = createServer(h.app);
    await new Promise<void>((resolve) => plain.listen(PORT + 1, HOST, resolve));
    try {
      const res = await request(plain).get(STATUS_PATH);
      expect(res.status).toBe(404);
      expect(res.text).toContain('<Code>UnknownEndpoint</Code>');
    } finally {
      plain.closeAllConnections();
      await new Promise((r) => plain.close(r));
    }
  });
});
