/** Wires the CC's operations onto an express app at CC_PATH; every failure leaves as a coded <Fault>. */
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import type { CcOp } from '../shared/protocol/ccProtocol.js';
import { typedHandlers } from '../shared/protocol/typedServer.js';
import { BULK_REQUEST, SMALL_REQUEST, VM_TYPES_REQUEST, only, type AccessTable } from '../shared/wire/peerAuth.js';
import { mountWireService, type WireServiceOptions } from '../shared/wire/server.js';
import { CC_PATH } from '../shared/wire/transport.js';
import { guardedByEpoch, type ClcEpochGuard } from './clcEpochGuard.js';
import { SERVED_OPS, type CcService } from './service.js';
import { leaderOnly, type CcLeadership } from './replicas.js';

export interface CcAppOptions {
  readonly service: CcService;
  readonly logger: Logger;
  /** Largest request body accepted, bytes (the wire default, 1 MiB, when absent); an operation may allow less. */
  readonly maxBodyBytes?: number;
  /** mTLS: hold each caller's certificate to CC_ACCESS (role, and host where it speaks for one). Absent: plaintext, bounds only. */
  readonly checkPeers?: boolean;
  /** Told of every refused call (wireRefusalReporter: logged, aggregated per code and caller). */
  readonly onRefused?: WireServiceOptions['onRefused'];
  /** Replicas (issue 21): changes refused NotLeader while this replica does not lead; absent: always served. */
  readonly leadership?: CcLeadership;
  /** The partition, for NotLeader's message. */
  readonly partition?: string;
  /** Refuses a deposed CLC leader's commands (issue 21); absent: no epoch is checked (unit tests of the service). */
  readonly epochGuard?: ClcEpochGuard;
}

/**
 * Who may call the CC, and with how much (docs/SECURITY.md, "Who may call what"). The CLC drives
 * the CC; an NC may only hint that it changed (ccNodeEvent), in a few hundred bytes, and only
 * about itself: the `host` it names must be its certificate's.
 */
export const CC_ACCESS: AccessTable = Object.freeze({
  ccDescribeNodes: only('clc', SMALL_REQUEST),
  ccDescribeNodeHealth: only('clc', SMALL_REQUEST),
  ccDescribeInstances: only('clc', SMALL_REQUEST),
  ccDescribeResources: only('clc', VM_TYPES_REQUEST),
  ccRunInstances: only('clc', BULK_REQUEST),
  ccTerminateInstances: only('clc', BULK_REQUEST),
  ccStartInstances: only('clc', BULK_REQUEST),
  ccModifyNode: only('clc', VM_TYPES_REQUEST),
  ccAttachVolume: only('clc', SMALL_REQUEST),
  ccPauseInstance: only('clc', SMALL_REQUEST),
  ccStopInstance: only('clc', SMALL_REQUEST),
  ccRebootInstance: only('clc', SMALL_REQUEST),
  ccStartInstance: only('clc', SMALL_REQUEST),
  ccDetachVolume: only('clc', SMALL_REQUEST),
  ccQuarantineNode: only('clc', VM_TYPES_REQUEST),
  ccSetFencedHosts: only('clc', BULK_REQUEST),
  ccCheckHostActivity: only('clc', SMALL_REQUEST),
  ccMigrateInstances: only('clc', BULK_REQUEST),
  ccDescribeMigrations: only('clc', SMALL_REQUEST),
  ccCancelMigration: only('clc', SMALL_REQUEST),
  ccDescribeReplica: only('clc', SMALL_REQUEST),
  ccNodeEvent: { nc: { limits: SMALL_REQUEST, speaksForHost: 'host' } },
} satisfies Record<CcOp, unknown>);

export function createCcApp(opts: CcAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // A deposed CLC leader's change is refused by the epoch guard; a follower CC refuses every change before it.
  const served = typedHandlers(SERVED_OPS, opts.epochGuard ? guardedByEpoch(opts.service.ops, opts.epochGuard) : opts.service.ops);
  const handlers = opts.leadership !== undefined ? leaderOnly(served, opts.leadership, opts.partition ?? '') : served;
  mountWireService(app, {
    path: CC_PATH, handlers, logger: opts.logger, access: CC_ACCESS,
    ...(opts.maxBodyBytes !== undefined ? { maxBodyBytes: opts.maxBodyBytes } : {}),
    ...(opts.checkPeers === true ? { checkPeers: true } : {}),
    ...(opts.onRefused ? { onRefused: opts.onRefused } : {}),
  });
  return app;
}
