/**
 * Serves wire operations on an express app: one body parser, one dispatcher, and one error path
 * (every failure leaves as a <Fault> with the error's code and HTTP status, never as a 200).
 */
import express, { type Express, type Request, type Response, type NextFunction } from 'express';
import type { Logger } from 'pino';
import { FerryError } from '../errors/registry.js';
import { WireErrors } from './errors.js';
import { authorizePeer, peerRoleOf, type AllowedRoles } from './peerAuth.js';
import { decodeMessage, encodeMessage } from './xmlCodec.js';
import type { WireHandlers } from './transport.js';

export interface WireServiceOptions {
  readonly path: string;
  readonly handlers: WireHandlers;
  readonly logger: Logger;
  /** Largest request body accepted, bytes (default 1 MiB). */
  readonly maxBodyBytes?: number;
  /**
   * mTLS servers: who may call each operation, by the role in the caller's certificate. Absent:
   * no role check (plaintext, where there is no certificate to check).
   */
  readonly allowedRoles?: AllowedRoles;
  /** Told of every refused call before its <Fault> is sent (shared/refusalLog.ts logs them, aggregated); absent: not logged. */
  readonly onRefused?: (err: FerryError, req: Request) => void;
}

export function sendFault(res: Response, err: FerryError): void {
  res.status(err.status).type('text/xml').send(encodeMessage('Fault', {
    code: err.code, message: err.message, retryable: err.retryable,
  }));
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

export function mountWireService(app: Express, opts: WireServiceOptions): void {
  const limit = opts.maxBodyBytes ?? 1024 * 1024;
  const refuse = (req: Request, res: Response, err: FerryError): void => {
    opts.onRefused?.(err, req);
    sendFault(res, err);
  };
  app.post(
    opts.path,
    (req: Request, res: Response, next: NextFunction) => {
      if (!req.is(['text/xml', 'application/xml'])) {
        refuse(req, res, WireErrors.make('UnsupportedMediaType'));
        return;
      }
      next();
    },
    express.text({ type: ['text/xml', 'application/xml'], limit }),
    async (req: Request, res: Response) => {
      try {
        const text = typeof req.body === 'string' ? req.body : '';
        const { operation, body } = await decodeMessage(text);
        const handler = Object.prototype.hasOwnProperty.call(opts.handlers, operation) ? opts.handlers[operation] : undefined;
        if (!handler) throw WireErrors.make('UnknownOperation', { operation });
        const refused = opts.allowedRoles ? authorizePeer(operation, peerRoleOf(req.socket), opts.allowedRoles) : undefined;
        if (refused) throw refused;
        const result = await handler(body, { peer: req.socket.remoteAddress ?? 'unknown' });
        res.status(200).type('text/xml').send(encodeMessage(`${operation}Response`, result));
      } catch (e) {
        refuse(req, res, toFerryError(e, opts.logger));
      }
    },
  );
  app.use(opts.path, (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    refuse(req, res, toFerryError(err, opts.logger));
  });
}
