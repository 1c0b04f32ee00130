/**
 * Serves wire operations on an express app: one admission step, one streaming reader, one
 * dispatcher and one error path (every failure leaves as a Fault with the error's code and HTTP
 * status, never as a 200). A request is typed XML or compact JSON by its Content-Type
 * (wireEncoding.ts); the answer, Fault included, is in the request's encoding.
 *
 * Order matters (docs/SECURITY.md, "Who may call what"): everything decided from the connection and
 * the headers (the caller's certificate, the operation named in SOAPAction, the media type, the
 * declared length) is decided before one byte of the body is read; then the body is decoded as it
 * arrives, within the caller's bounds for that operation; then the host binding is checked on the
 * decoded message, and only then does a handler run.
 */
import type { Express, Request, Response, NextFunction } from 'express';
import type { Logger } from 'pino';
import { performance } from 'node:perf_hooks';
import { FerryError } from '../errors/registry.js';
import { wireRequest } from '../metrics/channels.js';
import { WireErrors } from './errors.js';
import {
  BULK_REQUEST, checkSpeaksFor, grantOf, mayCallAny, peerIdentityOf, requestLimits, widestGrant, type AccessTable, type Grant, type PeerIdentity,
} from './peerAuth.js';
import type { DecodedMessage, DecodeLimits } from './wireDecoder.js';
import { contentTypeOf, decoderFor, encodeFor, encodingOfContentType, type WireEncoding } from './wireEncoding.js';
import { operationOf, SOAP_ACTION_HEADER } from './soapAction.js';
import type { WireHandler, WireHandlers } from './transport.js';
import type { WireObject } from './wireValue.js';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** After a refusal with the body unread, this much more of it is taken (and dropped) so the caller can read the answer. */
const LINGER_BYTES = 64 * 1024;
const LINGER_MS = 1000;

export interface WireServiceOptions {
  readonly path: string;
  readonly handlers: WireHandlers;
  readonly logger: Logger;
  /** Largest request body for any operation, bytes (default 1 MiB); an operation's grant may allow less. */
  readonly maxBodyBytes?: number;
  /**
   * Who may call each operation and what each may send (peerAuth.ts). Absent: every handler, with
   * bounds from maxBodyBytes alone (test servers).
   */
  readonly access?: AccessTable;
  /**
   * mTLS servers: hold the caller's certificate to `access` (its role, and its host where a message
   * speaks for one). Absent or false: plaintext, where there is no certificate to check and only
   * the bounds apply (the widest any role has).
   */
  readonly checkPeers?: boolean;
  /** Told of every refused call before its <Fault> is sent (shared/refusalLog.ts logs them, aggregated); absent: not logged. */
  readonly onRefused?: (err: FerryError, req: Request) => void;
}

/** The encoding to answer in: the request's, XML when it named neither (what every Ferry reads). */
function answerEncodingOf(req: Request | undefined): WireEncoding {
  return encodingOfContentType(req?.headers['content-type']) ?? 'xml';
}

function sendMessage(res: Response, status: number, encoding: WireEncoding, operation: string, body: WireObject): void {
  res.status(status).set('content-type', contentTypeOf(encoding)).send(encodeFor(encoding, operation, body));
}

/** The one way out for a failure. A body left unread is not read further than a short linger. */
export function sendFault(res: Response, err: FerryError): void {
  const req = res.req as Request | undefined;
  if (req && !req.complete) lingerThenClose(req, res);
  sendMessage(res, err.status, answerEncodingOf(req), 'Fault', { code: err.code, message: err.message, retryable: err.retryable });
}

/**
 * The caller is still sending a body that will not be read. Closing at once could reset the
 * connection before the caller reads the answer (a TCP reset discards what the caller has not read
 * yet); reading on would do the caller's bidding. So after the answer, drop (never parse) at most
 * LINGER_BYTES or LINGER_MS of what still arrives, then half-close (the caller sees the end after
 * the answer, never a reset instead of it) and drop for at most LINGER_MS more before destroying,
 * unless the body ended first.
 */
function lingerThenClose(req: Request, res: Response): void {
  res.once('finish', () => {
    if (req.complete) return;
    let dropped = 0;
    let halfClosed = false;
    let timer: NodeJS.Timeout;
    const destroy = (): void => {
      clearTimeout(timer);
      req.socket.destroy();
    };
    const close = (): void => {
      if (halfClosed) return destroy();
      halfClosed = true;
      dropped = 0;
      clearTimeout(timer);
      req.socket.end();
      timer = setTimeout(destroy, LINGER_MS);
      timer.unref();
    };
    timer = setTimeout(close, LINGER_MS);
    timer.unref();
    req.on('data', (c: Buffer) => {
      dropped += c.length;
      if (dropped > LINGER_BYTES) close();
    });
    req.once('end', () => (halfClosed ? destroy() : clearTimeout(timer)));
    req.once('close', () => clearTimeout(timer));
    req.resume();
  });
}

/** Turns anything thrown into a FerryError, logging the ones that are our bugs. */
export function toFerryError(e: unknown, logger: Logger): FerryError {
  if (e instanceof FerryError) return e;
  const body = e as { type?: string; status?: number; limit?: number };
  if (body?.type === 'entity.too.large') return WireErrors.make('RequestTooLarge', { limit: body.limit });
  if (body?.status === 400 && body.type) return WireErrors.make('MalformedXml', { detail: body.type });
  logger.error({ err: e }, 'unhandled error');
  return WireErrors.make('InternalError', { detail: (e as Error)?.message ?? String(e) });
}

/** What admission decided: the operation, its handler, the caller's bounds and who the caller is. */
interface Admitted {
  readonly operation: string;
  readonly handler: WireHandler;
  readonly grant: Grant;
  readonly peer: PeerIdentity | undefined;
  readonly encoding: WireEncoding;
}

function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

/**
 * Decides from the connection and the headers alone whether this request may be read at all.
 * Throws the refusal's coded error; reads nothing.
 */
function admit(req: Request, opts: WireServiceOptions, cap: number): Admitted {
  const header = req.headers[SOAP_ACTION_HEADER];
  const named = operationOf(header);
  const checking = opts.checkPeers === true;
  // Under mTLS a server without a table serves no one (fail closed).
  const table = opts.access ?? (checking ? {} : undefined);
  const peer = checking ? peerIdentityOf(req.socket) : undefined;
  if (checking && !mayCallAny(peer?.role, table ?? {})) {
    // A role allowed nothing here learns nothing more, not even whether the operation exists.
    throw WireErrors.make('PeerNotAuthorized', { role: peer?.role ?? '(no certificate)', operation: named ?? '(any operation)' });
  }
  if (named === undefined) throw WireErrors.make('OperationHeaderMissing', { got: typeof header === 'string' ? JSON.stringify(header.slice(0, 80)) : 'none' });
  const handler = own(opts.handlers, named);
  if (!handler) throw WireErrors.make('UnknownOperation', { operation: named });
  let grant: Grant | undefined;
  if (!table) grant = { limits: requestLimits(cap, BULK_REQUEST.maxElements) };
  else if (checking) grant = grantOf(named, peer?.role, table);
  else grant = widestGrant(named, table);
  if (!grant) throw WireErrors.make('PeerNotAuthorized', { role: peer?.role ?? '(no certificate)', operation: named });
  const encoding = encodingOfContentType(req.headers['content-type']);
  if (encoding === undefined || !isUtf8(req.headers['content-type'])) throw WireErrors.make('UnsupportedMediaType');
  const limits: DecodeLimits = { ...grant.limits, maxBytes: Math.min(grant.limits.maxBytes, cap) };
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limits.maxBytes) throw WireErrors.make('RequestTooLarge', { limit: limits.maxBytes });
  return { operation: named, handler, grant: { ...grant, limits }, peer, encoding };
}

/** The wire is UTF-8; a body declared in another charset is refused rather than misread. */
function isUtf8(contentType: string | undefined): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  return charset === undefined || /^utf-?8$/i.test(charset);
}

/** Decodes the body as it arrives; stops reading at the first bound crossed or problem found. */
function readMessage(req: Request, limits: DecodeLimits, operation: string, encoding: WireEncoding): Promise<DecodedMessage> {
  const decoder = decoderFor(encoding, limits, operation);
  return new Promise((resolve, reject) => {
    let size = 0;
    let settled = false;
    const stop = (e: unknown): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', stop);
      req.off('close', onClose);
      req.pause();
      reject(e as Error);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      try {
        if (size > limits.maxBytes) throw WireErrors.make('RequestTooLarge', { limit: limits.maxBytes });
        decoder.write(chunk);
      } catch (e) {
        stop(e);
      }
    };
    const onEnd = (): void => {
      if (settled) return;
      settled = true;
      req.off('close', onClose);
      try {
        resolve(decoder.end());
      } catch (e) {
        reject(e as Error);
      }
    };
    // A caller that hangs up half-way leaves no reader waiting for an end that never comes.
    const onClose = (): void => stop(WireErrors.make(encoding === 'json' ? 'MalformedJson' : 'MalformedXml', { detail: 'the connection closed before the body ended' }));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', stop);
    req.once('close', onClose);
  });
}

export function mountWireService(app: Express, opts: WireServiceOptions): void {
  const cap = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const refuse = (req: Request, res: Response, err: FerryError): void => {
    opts.onRefused?.(err, req);
    sendFault(res, err);
  };
  app.post(opts.path, (req: Request, res: Response) => {
    void (async () => {
      const t0 = performance.now();
      // Metrics label only operations this server serves (a caller's made-up name adds no series).
      let op = '-';
      let code = 'OK';
      try {
        const a = admit(req, opts, cap);
        op = a.operation;
        const { body } = await readMessage(req, a.grant.limits, a.operation, a.encoding);
        const refused = a.peer ? checkSpeaksFor(a.operation, a.grant, a.peer, body) : undefined;
        if (refused) throw refused;
        const result = await a.handler(body, { peer: req.socket.remoteAddress ?? 'unknown' });
        sendMessage(res, 200, a.encoding, `${a.operation}Response`, result);
      } catch (e) {
        const err = toFerryError(e, opts.logger);
        code = err.code;
        refuse(req, res, err);
      } finally {
        wireRequest.publish({ op, code, seconds: (performance.now() - t0) / 1000 });
      }
    })();
  });
  app.use(opts.path, (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    refuse(req, res, toFerryError(err, opts.logger));
  });
}
