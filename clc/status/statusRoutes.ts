/**
 * The status page's HTTP edge, mounted by the CLC at /status beside the admin API:
 *   GET  /status                the page (with a session) or the login form (without)
 *   GET  /status/assets/NAME    its CSS and JavaScript (no data: served without a session)
 *   POST /status/login          form fields AccessKeyId, SecretKey → HttpOnly SameSite=Strict cookie
 *   POST /status/logout         ends the session
 *   GET  /status/api/summary    the JSON the page polls (needs the session)
 * Every refusal is a ClcErrors code as JSON `{ error: { code, message }, requestId }`, logged
 * through the CLC's refusal log. The secret is read from the body only: never from a URL.
 */
import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Clock } from '../../shared/clock.js';
import type { FerryError } from '../../shared/errors/registry.js';
import { refusalLevelOf, type RefusalLog } from '../../shared/refusalLog.js';
import { toClcError } from '../api/errorHandler.js';
import { ClcErrors } from '../core/errors.js';
import { LoginLimiter } from './loginLimiter.js';
import { SessionStore } from './sessionStore.js';
import type { LoginCheck } from './statusAuth.js';
import { loadStatusAssets, type StatusAsset } from './statusAssets.js';
import type { StatusSummary } from './summary.js';

export const SESSION_COOKIE = 'ferry_status';
const LOGIN_BODY_LIMIT = 4096;

export interface StatusPageOptions {
  readonly clock: Clock;
  readonly check: LoginCheck;
  /** Builds the summary (statusSources.ts's gatherSummary on the CLC's clusters, store and HA). */
  readonly summary: () => Promise<StatusSummary>;
  readonly refusals: RefusalLog;
  /** Mark the cookie Secure (the CLC is served over TLS). */
  readonly secureCookie?: boolean;
  readonly sessions?: SessionStore;
  readonly limiter?: LoginLimiter;
  readonly assets?: ReadonlyMap<string, StatusAsset>;
}

/** Only this origin's files and calls; no inline script or style, no framing. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
});

/** The value of cookie `name` in a Cookie header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function sessionCookie(id: string, maxAgeS: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; Path=/status; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

const field = (body: unknown, name: string): string | undefined => {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : undefined;
};

export function statusPage(opts: StatusPageOptions): RequestHandler {
  const sessions = opts.sessions ?? new SessionStore({ clock: opts.clock });
  const limiter = opts.limiter ?? new LoginLimiter({ clock: opts.clock });
  const assets = opts.assets ?? loadStatusAssets();
  const secure = opts.secureCookie ?? false;
  const router = express.Router({ caseSensitive: true, strict: false });
  // Several open pages poll at once: one gathering at a time answers them all.
  let inFlight: Promise<StatusSummary> | undefined;
  const summary = (): Promise<StatusSummary> => {
    inFlight ??= opts.summary().finally(() => { inFlight = undefined; });
    return inFlight;
  };

  const fail = (req: Request, res: Response, err: FerryError, requestId = randomUUID()): void => {
    const peer = req.socket.remoteAddress ?? 'unknown';
    opts.refusals.record({ level: refusalLevelOf(err), code: err.code, peer, msg: 'status page request refused', fields: { status: err.status, requestId, detail: err.message, path: req.path, ...(err.cause !== undefined ? { err: err.cause } : {}) } });
    res.status(err.status).set(SECURITY_HEADERS).json({ error: { code: err.code, message: err.message }, requestId });
  };
  const send = (res: Response, name: string): void => {
    const a = assets.get(name);
    if (!a) {
      res.status(404).end();
      return;
    }
    res.status(200).set(SECURITY_HEADERS).type(a.contentType).send(a.body);
  };
  const sessionOf = (req: Request) => sessions.find(cookieValue(req.headers.cookie, SESSION_COOKIE));

  router.get('/', (req, res) => send(res, sessionOf(req) ? 'index.html' : 'login.html'));
  router.get('/assets/:name', (req, res) => {
    const name = req.params.name;
    if (typeof name !== 'string' || !assets.has(name)) {
      fail(req, res, ClcErrors.make('UnknownEndpoint', { path: `/status/assets/${name ?? ''}`.replace(/[^\w./-]/g, '?'), paths: '/status' }));
      return;
    }
    send(res, name);
  });
  router.post('/login', express.urlencoded({ extended: false, limit: LOGIN_BODY_LIMIT, parameterLimit: 8 }), (req, res) => {
    const source = req.socket.remoteAddress ?? 'unknown';
    const waitMs = limiter.retryAfterMs(source);
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      res.set('Retry-After', String(seconds));
      fail(req, res, ClcErrors.make('StatusLoginThrottled', { source, seconds }));
      return;
    }
    const key = field(req.body, 'AccessKeyId');
    const secret = field(req.body, 'SecretKey');
    if (key === undefined || key === '' || secret === undefined || secret === '') {
      fail(req, res, ClcErrors.make('MissingParameter', { parameter: key === undefined || key === '' ? 'AccessKeyId' : 'SecretKey' }));
      return;
    }
    if (!opts.check(key, secret)) {
      limiter.failed(source);
      fail(req, res, ClcErrors.make('StatusLoginFailed'));
      return;
    }
    limiter.succeeded(source);
    const s = sessions.create(key);
    res.status(200).set(SECURITY_HEADERS).set('Set-Cookie', sessionCookie(s.id, Math.floor((s.expiresAt - s.createdAt) / 1000), secure))
      .json({ loggedIn: true, expiresAt: new Date(s.expiresAt).toISOString() });
  });
  router.post('/logout', (req, res) => {
    const ended = sessions.end(cookieValue(req.headers.cookie, SESSION_COOKIE));
    res.status(200).set(SECURITY_HEADERS).set('Set-Cookie', sessionCookie('', 0, secure)).json({ loggedOut: ended });
  });
  router.get('/api/summary', (req, res, next) => {
    if (!sessionOf(req)) {
      fail(req, res, ClcErrors.make('StatusSessionRequired', { detail: 'log in at /status (no session, or it ended)' }));
      return;
    }
    summary().then((s) => { res.status(200).set(SECURITY_HEADERS).json(s); }, next);
  });
  // Anything else under /status, and any failure above: a coded JSON error, never express's HTML.
  router.use((req: Request, res: Response) => {
    fail(req, res, ClcErrors.make('UnknownEndpoint', { path: req.originalUrl.split('?')[0]?.replace(/[^\w./-]/g, '?') ?? '', paths: '/status' }));
  });
  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => fail(req, res, toClcError(err)));
  return router;
}
