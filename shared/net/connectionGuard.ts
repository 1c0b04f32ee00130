/**
 * Connection limits of a daemon's HTTP(S) server: Node's header, request and TLS handshake
 * timeouts, and the pending-connection caps of PendingConnections (the pure core), fitted under the
 * process's RLIMIT_NOFILE so that a flood of idle or half-sent connections can neither exhaust its
 * file handles nor keep the administrator (or the CLC, on a CC) out. Every connection it closes,
 * and every request Node times out, is logged through the RefusalLog, aggregated.
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import type https from 'node:https';
import type net from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { RefusalLog } from '../refusalLog.js';
import { PendingConnections, type Eviction, type PendingLimits } from './pendingConnections.js';
import { peerNameOf } from './peerName.js';

export interface ConnectionLimits {
  /** A connection must send its whole request head within this; with TLS, its handshake too. */
  readonly headersTimeoutMs: number;
  /** ... and its whole request, body included, within this (a request being served is not cut). */
  readonly requestTimeoutMs: number;
  /** Pending connections (no complete request being served) in all. */
  readonly maxPending: number;
  /** Pending connections of one peer: an address, or a certificate once the TLS handshake is done. */
  readonly maxPendingPerPeer: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = Object.freeze({
  headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxPending: 1024, maxPendingPerPeer: 256,
});

/** Largest share of the handles kept back for the process's own files and outgoing calls. */
export const FILE_HANDLE_RESERVE = 256;

/**
 * How long an idle keep-alive connection stays open here. Node's server advertises it in whole
 * seconds (`Keep-Alive: timeout=9`) and a Node client closes its idle socket at the advertised time;
 * with Node's default (5,000 ms, advertised as 5) both ends close at the same moment, and a call
 * sent on the socket just then is reset (a CLC's ccDescribeMigrations was, in the migration-sim
 * bench). 9,900 ms leaves the client 0.9 s to close first.
 */
export const KEEP_ALIVE_IDLE_MS = 9_900;

/**
 * An NC's idle keep-alive (advertised as 65 s): its caller is its CC, which polls it every poll
 * interval (5 s by default, 10 s in a large cloud). Shorter than the interval, every poll made a new
 * TLS connection (a handshake, two certificate checks): at 2,000 hosts polled every 10 s, connection
 * set-up was the largest share of the CC's CPU. One idle connection per NC costs a handle each side.
 */
export const NODE_KEEP_ALIVE_IDLE_MS = 65_900;

/** Node's own timeouts, for http.createServer(options, app). */
export function httpServerOptions(l: ConnectionLimits): http.ServerOptions {
  return {
    headersTimeout: l.headersTimeoutMs,
    requestTimeout: l.requestTimeoutMs,
    // Node closes expired connections when it checks (every 30 s by default): a tenth of the timeout, at most 1 s.
    connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(l.headersTimeoutMs / 10))),
  };
}

/** The same for https.createServer, plus the TLS handshake's own timeout (Node's default is 120 s). */
export function httpsServerOptions(l: ConnectionLimits): https.ServerOptions {
  return { ...httpServerOptions(l), handshakeTimeout: l.headersTimeoutMs };
}

export interface FittedLimits {
  readonly pending: PendingLimits;
  /** Node's server.maxConnections: connections past it are dropped at accept (a backstop). */
  readonly maxConnections: number | undefined;
  readonly openFileLimit: number | undefined;
  /** True when the caps asked for did not fit under the file-handle limit and were lowered. */
  readonly lowered: boolean;
}

/**
 * The caps that fit under `openFileLimit` (RLIMIT_NOFILE): a reserve (a quarter of the handles, at
 * most FILE_HANDLE_RESERVE) for the process's own files and calls, connections at most the rest,
 * and pending connections at most half of those, so that the other half is left to connections
 * being served. Unknown limit: the caps as asked, no backstop.
 */
export function fitToOpenFileLimit(l: ConnectionLimits, openFileLimit: number | undefined): FittedLimits {
  if (openFileLimit === undefined || !Number.isFinite(openFileLimit)) {
    return { pending: { maxPending: l.maxPending, maxPendingPerPeer: l.maxPendingPerPeer }, maxConnections: undefined, openFileLimit: undefined, lowered: false };
  }
  const maxConnections = Math.max(2, openFileLimit - Math.min(FILE_HANDLE_RESERVE, Math.floor(openFileLimit / 4)));
  const maxPending = Math.max(1, Math.min(l.maxPending, Math.floor(maxConnections / 2)));
  const maxPendingPerPeer = Math.min(l.maxPendingPerPeer, maxPending);
  return { pending: { maxPending, maxPendingPerPeer }, maxConnections, openFileLimit, lowered: maxPending < l.maxPending || maxPendingPerPeer < l.maxPendingPerPeer };
}

/** This process's soft RLIMIT_NOFILE, from /proc/self/limits; undefined where unknown or unlimited. */
export function readOpenFileLimit(limitsFile = '/proc/self/limits'): number | undefined {
  try {
    const m = /^Max open files\s+(\d+)\s/m.exec(readFileSync(limitsFile, 'utf8'));
    return m?.[1] === undefined ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

export interface ConnectionGuard {
  readonly fitted: FittedLimits;
  /** The limits in force, for the daemon's start line. */
  describe(): Readonly<Record<string, number | boolean | undefined>>;
  /** Pending and open connections now (tests, logs). */
  counts(): { readonly pending: number; readonly open: number };
  /**
   * A connection upgraded to a WebSocket that passed its checks (the NC's node watch): it sends no
   * more HTTP requests, so it counts as one whose request was served, not as pending for ever.
   */
  established(socket: net.Socket): void;
}

export interface GuardOptions {
  readonly limits: ConnectionLimits;
  readonly refusals: RefusalLog;
  /** RLIMIT_NOFILE; readOpenFileLimit() when absent. */
  readonly openFileLimit?: number | undefined;
  /** How long an idle keep-alive connection stays open (default KEEP_ALIVE_IDLE_MS); keep the fraction of a second above the whole seconds. */
  readonly keepAliveIdleMs?: number;
}

const endpoint = (s: net.Socket): string => `${s.remoteAddress ?? ''}:${s.remotePort ?? ''}`;

/** Node's answers to a broken request, as its own default 'clientError' handler writes them. */
const CLIENT_ERROR_RESPONSES: Readonly<Record<string, string>> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

/**
 * Applies the caps to `server` (created with httpServerOptions/httpsServerOptions of the same
 * limits): tracks every connection from accept to close, closes the pending ones the core picks,
 * and logs timeouts, failed handshakes and drops. Call before listen().
 */
export function guardConnections(server: http.Server | https.Server, o: GuardOptions): ConnectionGuard {
  const fitted = fitToOpenFileLimit(o.limits, 'openFileLimit' in o ? o.openFileLimit : readOpenFileLimit());
  const core = new PendingConnections<net.Socket>(fitted.pending);
  if (fitted.maxConnections !== undefined) server.maxConnections = fitted.maxConnections;
  server.keepAliveTimeout = o.keepAliveIdleMs ?? KEEP_ALIVE_IDLE_MS;
  // The TCP socket by remote address and port: a TLS socket and its TCP socket share them.
  const byEndpoint = new Map<string, net.Socket>();
  const rawOf = (s: net.Socket): net.Socket | undefined => byEndpoint.get(endpoint(s));

  const evict = (victims: readonly Eviction<net.Socket>[]): void => {
    for (const v of victims) {
      v.conn.destroy();
      o.refusals.record({
        level: 'warn', code: 'ConnectionEvicted', peer: v.peer, msg: 'closed a pending connection to make room',
        fields: { reason: v.reason, standing: v.standing, maxPending: fitted.pending.maxPending, maxPendingPerPeer: fitted.pending.maxPendingPerPeer },
      });
    }
  };

  server.on('connection', (raw: net.Socket) => {
    const key = endpoint(raw);
    byEndpoint.set(key, raw);
    raw.once('close', () => {
      if (byEndpoint.get(key) === raw) byEndpoint.delete(key);
      core.closed(raw);
    });
    evict(core.opened(raw, raw.remoteAddress ?? 'unknown'));
  });

  server.on('secureConnection', (tls: TLSSocket) => {
    // A connection keeps the identity it proved: no TLS 1.2 renegotiation (Ferry's peers never ask),
    // so the peer certificate read once per connection (peerName.ts) stays the peer's.
    tls.disableRenegotiation();
    const raw = rawOf(tls);
    if (raw) evict(core.identified(raw, peerNameOf(tls)));
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const raw = rawOf(req.socket);
    if (!raw) return;
    let received = false;
    const onReceived = (): void => {
      received = true;
      core.received(raw);
    };
    // Without a body the request is complete with its head; with one, once the body has been read.
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (hasBody) req.once('end', onReceived);
    else onReceived();
    res.once('close', () => {
      req.off('end', onReceived);
      if (received) evict(core.answered(raw, res.writableFinished && res.statusCode < 400));
    });
  });

  server.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) => {
    if (err.code !== 'ECONNRESET') {
      const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
      o.refusals.record({
        level: timeout ? 'warn' : 'debug', code: timeout ? 'RequestTimeout' : 'BadHttpRequest', peer: peerNameOf(socket),
        msg: timeout ? 'closed a connection that did not send its request in time' : 'closed a connection that sent a broken request',
        fields: { detail: err.code ?? err.message },
      });
    }
    if (socket.writable && socket.bytesWritten === 0) socket.write(CLIENT_ERROR_RESPONSES[err.code ?? ''] ?? BAD_REQUEST);
    socket.destroy();
  });

  server.on('tlsClientError', (err: NodeJS.ErrnoException, tls: TLSSocket) => {
    o.refusals.record({
      level: err.code === 'ECONNRESET' ? 'debug' : 'warn', code: 'TlsHandshakeFailed', peer: tls.remoteAddress ?? 'unknown', msg: 'refused a TLS handshake',
      fields: { detail: err.code ?? err.message },
    });
  });

  server.on('drop', (d?: { remoteAddress?: string }) => {
    o.refusals.record({
      level: 'warn', code: 'ConnectionDropped', peer: d?.remoteAddress ?? 'unknown', msg: 'dropped a connection at the file-handle backstop',
      fields: { maxConnections: fitted.maxConnections },
    });
  });

  return {
    fitted,
    describe: () => ({
      headersTimeoutMs: o.limits.headersTimeoutMs, requestTimeoutMs: o.limits.requestTimeoutMs, ...fitted.pending,
      maxConnections: fitted.maxConnections, openFileLimit: fitted.openFileLimit, lowered: fitted.lowered,
    }),
    counts: () => ({ pending: core.pending, open: core.open }),
    established: (socket) => {
      const raw = rawOf(socket);
      if (!raw) return;
      core.received(raw);
      evict(core.answered(raw, true));
    },
  };
}
