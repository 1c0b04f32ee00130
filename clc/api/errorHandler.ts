/** The one path by which failures reach the admin: anything thrown becomes a coded EC2 error document. */
import type { Response } from 'express';
import type { Logger } from 'pino';
import { FerryError } from '../../shared/errors/registry.js';
import { ClcErrors } from './errors.js';
import { renderError } from './xmlResponse.js';

/** Turns anything thrown into an admin-API error, logging what is our own failure. */
export function toClcError(e: unknown, logger: Logger): FerryError {
  if (e instanceof FerryError) {
    if (ClcErrors.has(e.code)) return e;
    // Another surface's coded error (the store's, say): keep its words, answer with our code for its kind.
    return ClcErrors.make(e.retryable ? 'ServiceUnavailable' : 'InternalError', { detail: `${e.code}: ${e.message}` });
  }
  const b = e as { type?: unknown; limit?: unknown; status?: unknown } | null;
  if (b?.type === 'entity.too.large') return ClcErrors.make('RequestEntityTooLarge', { limit: Number(b.limit) });
  if (b?.type === 'encoding.unsupported') return ClcErrors.make('Unsupported', { detail: 'that content encoding' });
  if (typeof b?.type === 'string' && typeof b.status === 'number' && b.status < 500) {
    return ClcErrors.make('MalformedQueryString', { detail: `the request body could not be read (${b.type})` });
  }
  logger.error({ err: e }, 'unhandled error in the admin API');
  return ClcErrors.make('InternalError', { detail: 'see the CLC log' });
}

export function sendError(res: Response, err: FerryError, requestId: string, logger: Logger): void {
  const level = err.clientFault ? 'debug' : 'warn';
  logger[level]({ code: err.code, status: err.status, requestId, detail: err.message }, 'request failed');
  res.status(err.status).type('text/xml').send(renderError(err, requestId));
}
