/**
 * What every HTTP surface of the sim daemon shares (the control socket, the TLS and the plaintext
 * migration ports): request parameters and bodies validated once, and one error path that turns
 * anything thrown into `{ error: { code, message, fields } }` with the registry's status.
 */
import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import type { Server } from 'node:http';
import type { z } from 'zod';
import type { Logger } from '../../../shared/log.js';
import { HypervisorErrors } from '../errors.js';
import { toCodedResponse } from './errorBody.js';
import { describeIssues, SAFE_ID } from './protocol.js';

export const JSON_LIMIT = '64kb';

/** Unknown endpoints and every error leave as `{ error: { code, message, fields } }` with the registry's status. */
export function useCodedErrors(app: express.Express, log: Logger): void {
  app.use((req, _res, next) => {
    next(HypervisorErrors.make('HypervisorUnknownEndpoint', { method: req.method, path: req.path }));
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const { status, body: errorBody } = toCodedResponse(fromBodyParser(err));
    if (status >= 500) log.error({ err }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(status).json(errorBody);
  });
}

/** Listens on host:port; resolves with the server once bound. */
export function listen<S extends Server>(server: S, host: string, port: number): Promise<S> {
  return new Promise((resolve, reject) => {
    server.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
    // Migration streams and event streams are long-lived by design; per-request timeouts would cut them.
    server.requestTimeout = 0;
  });
}

export function param(req: Request, name: string): string {
  const v = req.params[name];
  if (typeof v !== 'string' || !SAFE_ID.test(v)) {
    throw HypervisorErrors.make('HypervisorBadRequest', { detail: `${name}: must be 1-128 of [A-Za-z0-9._-]` });
  }
  return v;
}

export function body<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  const parsed = schema.safeParse(req.body);
  if (!parsed.success) throw HypervisorErrors.make('HypervisorBadRequest', { detail: describeIssues(parsed.error) });
  return parsed.data;
}

/** body-parser's errors carry a `type`; turn them into our codes. */
function fromBodyParser(err: unknown): unknown {
  const type = (err as { type?: unknown })?.type;
  if (type === 'entity.too.large') return HypervisorErrors.make('HypervisorRequestTooLarge', { limit: JSON_LIMIT });
  if (type === 'entity.parse.failed') return HypervisorErrors.make('HypervisorBadRequest', { detail: 'body is not valid JSON' });
  if (typeof type === 'string') return HypervisorErrors.make('HypervisorBadRequest', { detail: (err as Error).message });
  return err;
}
