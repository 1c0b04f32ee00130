/** The one path by which failures reach the admin: anything thrown becomes a coded EC2 error document. */
import type { Response } from 'express';
import { FerryError } from '../../shared/errors/registry.js';
import { refusalLevelOf, type RefusalLog } from '../../shared/refusalLog.js';
import { ClcErrors } from '../core/errors.js';
import { adminErrorFromHa } from './haErrorMap.js';
import { renderError } from './xmlResponse.js';

/**
 * Turns anything thrown into an admin-API error. What is our own failure becomes InternalError
 * with the original as its `cause`, which sendError logs.
 */
export function toClcError(e: unknown): FerryError {
  if (e instanceof FerryError) {
    if (ClcErrors.has(e.code)) return e;
    const fromHa = adminErrorFromHa(e);
    if (fromHa !== e) return fromHa;
    // Another surface's coded error (the store's, say): keep its words, answer with our code for its kind.
    return ClcErrors.make(e.retryable ? 'ServiceUnavailable' : 'InternalError', { detail: `${e.code}: ${e.message}` });
  }
  const b = e as { type?: unknown; limit?: unknown; status?: unknown; expose?: unknown; message?: unknown } | null;
  if (b?.type === 'entity.too.large') return ClcErrors.make('RequestEntityTooLarge', { limit: Number(b.limit) });
  if (b?.type === 'encoding.unsupported') return ClcErrors.make('Unsupported', { detail: 'that content encoding' });
  // body-parser's own errors carry a type; the decompressor's (a gzip body that is not gzip) only expose: true.
  if ((typeof b?.type === 'string' || b?.expose === true) && typeof b.status === 'number' && b.status < 500) {
    const what = typeof b.type === 'string' ? b.type : String(b.message);
    return ClcErrors.make('MalformedQueryString', { detail: `the request body could not be read (${what})` });
  }
  const internal = ClcErrors.make('InternalError', { detail: 'see the CLC log' });
  internal.cause = e;
  return internal;
}

/**
 * Answers with `err`'s error document and logs it once through `refusals`: per code and peer, the
 * first of a minute in full (with the cause's stack for an InternalError), the rest counted.
 */
export function sendError(res: Response, err: FerryError, requestId: string, refusals: RefusalLog): void {
  refusals.record({
    level: refusalLevelOf(err), code: err.code, peer: res.req.socket.remoteAddress ?? 'unknown', msg: 'request failed',
    fields: { status: err.status, requestId, detail: err.message, ...(err.cause !== undefined ? { err: err.cause } : {}) },
  });
  // NotLeader (issue 21): where the leader is, for a client that follows it (Ferry's CLI does, once).
  if (typeof err.fields.leaderUrl === 'string') res.set('X-Ferry-Leader', err.fields.leaderUrl);
  res.status(err.status).type('text/xml').send(renderError(err, requestId));
}
