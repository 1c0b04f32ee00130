/** HTTP wiring: NC_OPS served at NC_PATH through the shared wire service (one error path, <Fault>). */
import express, { type Express } from 'express';
import type { Logger } from '../shared/log.js';
import { NC_OPS } from '../shared/protocol/ncProtocol.js';
import { typedHandlers } from '../shared/protocol/typedServer.js';
import type { NcOp } from '../shared/protocol/ncProtocol.js';
import { BULK_REQUEST, SMALL_REQUEST, VM_TYPES_REQUEST, only, type AccessTable } from '../shared/wire/peerAuth.js';
import { mountWireService, type WireServiceOptions } from '../shared/wire/server.js';
import { NC_PATH, type WireHandlers } from '../shared/wire/transport.js';
import { checkActivity, type SharedStorageView } from './ha/activityCheck.js';
import type { NodeController } from './nodeController.js';
import { guardChanges, type EpochGuard } from './leaderEpoch.js';

export interface NcAppOptions {
  readonly controller: NodeController;
  readonly logger: Logger;
  /** Largest request body accepted, bytes (the wire default, 1 MiB, when absent); an operation may allow less. */
  readonly maxBodyBytes?: number;
  /** mTLS: hold each caller's certificate to NC_ACCESS. Absent: plaintext, bounds only. */
  readonly checkPeers?: boolean;
  /** Told of every refused call (wireRefusalReporter: logged, aggregated per code and caller). */
  readonly onRefused?: WireServiceOptions['onRefused'];
  /** The cluster's shared storage, for neighbours' activity checks (host HA); absent: always `unknown`. */
  readonly sharedStorage?: SharedStorageView;
  /** CC leader epochs (issue 21): every change checked against the highest seen; absent: not checked (the simulator). */
  readonly epochs?: EpochGuard;
}

/**
 * Only a CC drives an NC (docs/SECURITY.md, "Who may call what"). The hosts a CC names here
 * (ncCheckActivity's suspect, a plan's source and destinations) are its orders about other hosts,
 * not claims to be them, so none is bound to the caller's certificate.
 */
export const NC_ACCESS: AccessTable = Object.freeze({
  ncDescribeResource: only('cc', SMALL_REQUEST),
  ncRunInstance: only('cc', VM_TYPES_REQUEST),
  ncStartInstance: only('cc', SMALL_REQUEST),
  ncStopInstance: only('cc', SMALL_REQUEST),
  ncRebootInstance: only('cc', SMALL_REQUEST),
  ncPauseInstance: only('cc', SMALL_REQUEST),
  ncTerminateInstance: only('cc', SMALL_REQUEST),
  ncAttachVolume: only('cc', SMALL_REQUEST),
  ncDetachVolume: only('cc', SMALL_REQUEST),
  ncModifyNode: only('cc', SMALL_REQUEST),
  ncQuarantineNode: only('cc', SMALL_REQUEST),
  // A source's prepare carries the whole plan (every instance of a drain) and credentials.
  ncMigrateInstances: only('cc', BULK_REQUEST),
  ncCheckActivity: only('cc', SMALL_REQUEST),
} satisfies Record<NcOp, unknown>);

/**
 * NC_OPS over one controller, validated both ways: served over HTTP here, in process by the
 * simulator. Without shared storage a neighbour's activity check answers `unknown`.
 */
export function ncHandlers(controller: NodeController, sharedStorage?: SharedStorageView): WireHandlers {
  return typedHandlers(NC_OPS, {
    ncDescribeResource: () => controller.describe(),
    ncRunInstance: (req) => controller.run(req),
    ncStartInstance: (req) => controller.startInstance(req.instanceId, req.userStart === true),
    ncStopInstance: (req) => controller.stopInstance(req),
    ncRebootInstance: (req) => controller.rebootInstance(req.instanceId),
    ncPauseInstance: (req) => controller.pauseInstance(req),
    ncTerminateInstance: (req) => controller.terminate(req.instanceId, req.reason),
    ncAttachVolume: (req) => controller.attachVolume(req),
    ncDetachVolume: (req) => controller.detachVolume(req),
    ncModifyNode: (req) => controller.modify(req.stateName),
    ncQuarantineNode: (req) => controller.quarantine(req),
    ncMigrateInstances: (req) => controller.migrate(req),
    ncCheckActivity: async (req) => {
      const v = sharedStorage
        ? await checkActivity(sharedStorage, req.host, req.since)
        : { outcome: 'unknown' as const, detail: 'this NC has no shared storage configured (--storage-dir)', newestWriteAt: null };
      return { host: req.host, ...v };
    },
  });
}

export function createNcApp(o: NcAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  const served = ncHandlers(o.controller, o.sharedStorage);
  const handlers = o.epochs !== undefined ? guardChanges(served, o.epochs) : served;
  // maxBodyBytes undefined keeps the wire service's default.
  mountWireService(app, {
    path: NC_PATH, handlers, logger: o.logger, access: NC_ACCESS,
    ...(o.maxBodyBytes ? { maxBodyBytes: o.maxBodyBytes } : {}),
    ...(o.checkPeers === true ? { checkPeers: true } : {}),
    ...(o.onRefused ? { onRefused: o.onRefused } : {}),
  });
  return app;
}
