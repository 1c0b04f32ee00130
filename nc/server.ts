/** HTTP wiring: NC_OPS served at NC_PATH through the shared wire service (one error path, <Fault>). */
import express, { type Express } from 'express';
import type { Logger } from '../shared/log.js';
import { NC_OPS } from '../shared/protocol/ncProtocol.js';
import { typedHandlers } from '../shared/protocol/typedServer.js';
import { allowAll, type AllowedRoles } from '../shared/wire/peerAuth.js';
import { mountWireService, type WireServiceOptions } from '../shared/wire/server.js';
import { NC_PATH, type WireHandlers } from '../shared/wire/transport.js';
import { checkActivity, type SharedStorageView } from './ha/activityCheck.js';
import type { NodeController } from './nodeController.js';

export interface NcAppOptions {
  readonly controller: NodeController;
  readonly logger: Logger;
  readonly maxBodyBytes?: number;
  /** Told of every refused call (wireRefusalReporter: logged, aggregated per code and caller). */
  readonly onRefused?: WireServiceOptions['onRefused'];
  /** mTLS only: who may call what (NC_ALLOWED_ROLES); absent on plaintext. */
  readonly allowedRoles?: AllowedRoles;
  /** The cluster's shared storage, for neighbours' activity checks (host HA); absent: always `unknown`. */
  readonly sharedStorage?: SharedStorageView;
}

/** Only a CC drives an NC. */
export const NC_ALLOWED_ROLES: AllowedRoles = allowAll(NC_OPS, ['cc']);

/**
 * NC_OPS over one controller, validated both ways: served over HTTP here, in process by the
 * simulator. Without shared storage a neighbour's activity check answers `unknown`.
 */
export function ncHandlers(controller: NodeController, sharedStorage?: SharedStorageView): WireHandlers {
  return typedHandlers(NC_OPS, {
    ncDescribeResource: () => controller.describe(),
    ncRunInstance: (req) => controller.run(req),
    ncTerminateInstance: (req) => controller.terminate(req.instanceId),
    ncModifyNode: (req) => controller.modify(req.stateName),
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
  const handlers = ncHandlers(o.controller, o.sharedStorage);
  // maxBodyBytes undefined keeps the wire service's default.
  mountWireService(app, {
    path: NC_PATH, handlers, logger: o.logger,
    ...(o.maxBodyBytes ? { maxBodyBytes: o.maxBodyBytes } : {}),
    ...(o.allowedRoles ? { allowedRoles: o.allowedRoles } : {}),
    ...(o.onRefused ? { onRefused: o.onRefused } : {}),
  });
  return app;
}
