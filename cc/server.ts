/** Wires the CC's operations onto an express app at CC_PATH; every failure leaves as a coded <Fault>. */
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import { typedHandlers } from '../shared/protocol/typedServer.js';
import type { AllowedRoles } from '../shared/wire/peerAuth.js';
import { mountWireService, type WireServiceOptions } from '../shared/wire/server.js';
import { CC_PATH } from '../shared/wire/transport.js';
import { SERVED_OPS, type CcService } from './service.js';

export interface CcAppOptions {
  readonly service: CcService;
  readonly logger: Logger;
  /** Largest request body accepted, bytes (the wire default, 1 MiB, when absent). */
  readonly maxBodyBytes?: number;
  /** Told of every refused call (wireRefusalReporter: logged, aggregated per code and caller). */
  readonly onRefused?: WireServiceOptions['onRefused'];
  /** mTLS only: who may call what (CC_ALLOWED_ROLES); absent on plaintext. */
  readonly allowedRoles?: AllowedRoles;
}

/** The CLC drives the CC; an NC may only hint that it changed (ccNodeEvent). */
export const CC_ALLOWED_ROLES: AllowedRoles = Object.freeze(Object.fromEntries(
  Object.keys(SERVED_OPS).map((op) => [op, op === 'ccNodeEvent' ? ['nc'] as const : ['clc'] as const]),
));

export function createCcApp(opts: CcAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  mountWireService(app, {
    path: CC_PATH, handlers: typedHandlers(SERVED_OPS, opts.service.ops), logger: opts.logger,
    ...(opts.maxBodyBytes !== undefined ? { maxBodyBytes: opts.maxBodyBytes } : {}),
    ...(opts.allowedRoles ? { allowedRoles: opts.allowedRoles } : {}),
    ...(opts.onRefused ? { onRefused: opts.onRefused } : {}),
  });
  return app;
}
