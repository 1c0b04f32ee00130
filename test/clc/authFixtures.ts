/** Identities and a SigV4 authenticator for API tests, and a way to send a signed request to an app. */
import type { Express } from 'express';
import { createServer } from 'node:http';
import { CLC_PATH } from '../../clc/api/app.js';
import type { Authenticator } from '../../clc/api/auth.js';
import { sigv4Authenticator } from '../../clc/api/sigv4Authenticator.js';
import { ADMIN_ACCOUNT_ID, identityDirectory, type Identity } from '../../clc/core/identities.js';
import { signQuery } from '../../shared/auth/sign.js';
import type { Clock } from '../../shared/clock.js';
import { API_HOST, parseXml, type QueryReply } from './harness.js';

export const TEST_ADMIN: Identity = {
  name: 'admin', accessKey: 'AKIADMIN0000000TEST1', secretKey: 'adminSecret/0000000000000000000000000000', accountId: ADMIN_ACCOUNT_ID, isAdmin: true,
};
export const TEST_USER: Identity = {
  name: 'alice', accessKey: 'AKIUSER00000000TEST2', secretKey: 'userSecret+00000000000000000000000000000', accountId: '111111111111', isAdmin: false,
};

export function testAuthenticator(clock: Clock): Authenticator {
  return sigv4Authenticator({ identities: identityDirectory([TEST_ADMIN, TEST_USER]), clock });
}

export interface RawRequest {
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Path and query after the host, e.g. /services/Eucalyptus?X-Amz-... */
  readonly pathAndQuery?: string;
}

export interface ServedApp {
  readonly url: string;
  post(req: RawRequest): Promise<QueryReply>;
  close(): Promise<void>;
}

/** Serves `app` on API_HOST until closed (a signature binds the port, so a replay needs the same one). */
export async function serveApp(app: Express): Promise<ServedApp> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, API_HOST, resolve));
  const origin = `http://${API_HOST}:${(server.address() as { port: number }).port}`;
  return {
    url: `${origin}${CLC_PATH}`,
    async post(req) {
      const res = await fetch(`${origin}${req.pathAndQuery ?? CLC_PATH}`, { method: 'POST', headers: req.headers, body: req.body });
      const text = await res.text();
      return { status: res.status, text, doc: await parseXml(text) };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Serves `app` on API_HOST:port for one exchange: `build(url)` makes the request, it is POSTed as it is. */
export async function sendRaw(app: Express, build: (url: string) => RawRequest): Promise<QueryReply> {
  const served = await serveApp(app);
  try {
    return await served.post(build(served.url));
  } finally {
    await served.close();
  }
}

/** A request signed by `who` at `now` (the signing time, not necessarily the server's). */
export function signedQuery(app: Express, params: Record<string, string>, who: Identity, now: number): Promise<QueryReply> {
  return sendRaw(app, (url) => signQuery({ Version: '2013-02-01', ...params }, { accessKey: who.accessKey, secretKey: who.secretKey, url, now }));
}
