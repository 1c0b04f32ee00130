/**
 * The admin API as an express app. Every request goes through the same pipeline:
 *   read body (bounded) → collect pairs → authenticate (SigV4) → flattened-parameter tree
 *   → envelope (Action, Version) → authorize (admin-only actions) → dispatch → parse the action's
 *   params → run → XML. Nothing is parsed for a caller who is not authenticated.
 * Every failure, at any step, leaves through sendError with its registry code and status. A request
 * that changes a partition holds its place in the change gate until its reply has been written.
 */
import { performance } from 'node:perf_hooks';
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import { isFerryError } from '../../shared/errors/registry.js';
import { randomHex8, type IdSource } from '../../shared/model/ids.js';
import { RefusalLog } from '../../shared/refusalLog.js';
import type { Store } from '../../shared/store/store.js';
import type { Clusters } from '../clusters/clusters.js';
import { ClcErrors } from '../core/errors.js';
import { notLeaderError, REPLICA_ALIVE_PATH, SOLE_REPLICA, type Leadership, type ReplicaProbe } from '../core/leadership.js';
import { KeyedMutex } from '../../shared/keyedMutex.js';
import type { HaNodeHooks } from '../core/nodeHooks.js';
import type { VolumeBackend } from '../core/volumeBackend.js';
import { PartitionGate } from '../core/partitionGate.js';
import { gatedClusters, openRequestGate } from '../core/requestGate.js';
import { showKey } from '../core/showKey.js';
import type { EventStream } from '../events/eventStream.js';
import type { HaControl } from '../ha/haControl.js';
import type { ClcState } from '../state/clcStore.js';
import { DEFAULT_CLC_ORIGIN, type ActionContext } from './action.js';
import { findAction, READ_ACTIONS } from './actions/index.js';
import type { Authenticator, QueryRequestView } from './auth.js';
import { authorize } from './authorization.js';
import { splitEnvelope } from './envelope.js';
import { apiRequest } from '../../shared/metrics/channels.js';
import { sendError, toClcError } from './errorHandler.js';
import { parseQueryParams } from './queryParams.js';
import { renderResponse } from './xmlResponse.js';

/** Ferry's own path for the admin API, the one its tools and docs use. */
export const CLC_PATH = '/services/Eucalyptus';
/**
 * Every path the admin API answers at, each also with a trailing `/`: Ferry's, euca2ools' EC2 path
 * (`ec2-url`), and Eucalyptus 4's service-management path (`empyrean-url`, where euserv-* go). Each
 * serves every action, so a tool pointed at any of them works.
 */
export const CLC_PATHS: readonly string[] = Object.freeze([CLC_PATH, '/services/compute', '/services/Empyrean']);
/** Where the status page is served (issue 20; docs/OPERATIONS.md, "Status page"). */
export const STATUS_PATH = '/status';
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface ClcApiOptions {
  readonly clusters: Clusters;
  readonly store: Store<ClcState>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly maxBodyBytes?: number;
  /** Hex source for reservation and instance ids (seeded in tests). */
  readonly ids?: IdSource;
  readonly requestIds?: () => string;
  /** Required, so no caller gets an open API by forgetting it: sigv4Authenticator, or acceptUnsigned for --auth none. */
  readonly authenticator: Authenticator;
  /** The change gate; one with the default limits on `clock` when absent. */
  readonly gate?: PartitionGate;
  /** Host HA's admin side; the HA actions answer ServiceUnavailable without it. */
  readonly ha?: HaControl;
  /** Host HA's hooks into node changes (EnableService of a fenced host, migration destinations). */
  readonly haHooks?: HaNodeHooks;
  /** Where clients reach this CLC, scheme, host and port (`http://127.0.0.1:8773`, the default). */
  readonly origin?: string;
  /** Where volumes' data lives; absent: the volume actions answer Unsupported. */
  readonly volumes?: VolumeBackend;
  /** Where refused requests are logged, aggregated per code and peer; one on `logger` and `clock` when absent. */
  readonly refusals?: RefusalLog;
  /** The status page (clc/status/statusRoutes.ts), served at /status; absent: /status is an unknown endpoint. */
  readonly status?: RequestHandler;
  /** The event stream: changes are recorded there before they are answered; DescribeEvents reads it. */
  readonly events?: EventStream;
  /** Whether this replica may serve changes (issue 21); absent: the only CLC, which always may. */
  readonly leadership?: Leadership;
  /** Asks the other replicas whether they answer (DescribeServices); absent: nobody is asked (the single CLC). */
  readonly replicaProbe?: ReplicaProbe;
}

const FORM = 'application/x-www-form-urlencoded';

/** Query-string pairs first, then the form body's, as SigV2 canonicalisation will want them. */
function collectPairs(req: Request, body: Buffer): [string, string][] {
  const url = req.originalUrl;
  const q = url.indexOf('?');
  const pairs: [string, string][] = q < 0 ? [] : [...new URLSearchParams(url.slice(q + 1))];
  if (body.length > 0) {
    if (!req.is(FORM)) throw ClcErrors.make('Unsupported', { detail: `a request body of type ${showKey(req.get('content-type') ?? '(none)')}; send ${FORM}` });
    pairs.push(...new URLSearchParams(body.toString('utf8')));
  }
  return pairs;
}

export function buildClcApp(opts: ClcApiOptions): Express {
  const requestIds = opts.requestIds ?? randomUUID;
  const authenticator = opts.authenticator;
  const ids = opts.ids ?? randomHex8;
  const origin = opts.origin ?? DEFAULT_CLC_ORIGIN;
  const keyLocks = new KeyedMutex();
  const logger = opts.logger;
  const gate = opts.gate ?? new PartitionGate({ clock: opts.clock, logger });
  const refusals = opts.refusals ?? new RefusalLog({ logger, clock: opts.clock });
  const leadership = opts.leadership ?? SOLE_REPLICA;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', false);
  // Every answer carries its own requestId, so an ETag could never match: hashing each body (629 KB
  // for 1,000 instances) was a tenth of a DescribeInstances' CPU (issue 19, the api case).
  app.set('etag', false);

  const assignRequestId = (_req: Request, res: Response, next: NextFunction): void => {
    res.locals.requestId = requestIds();
    next();
  };
  const onlyGetAndPost = (req: Request, _res: Response, next: NextFunction): void => {
    next(req.method === 'GET' || req.method === 'POST' ? undefined : ClcErrors.make('Unsupported', { detail: `HTTP method ${showKey(req.method)}` }));
  };
  const readBody = express.raw({ type: () => true, limit: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES });

  const dispatch = async (req: Request, res: Response): Promise<void> => {
    const requestId = res.locals.requestId as string;
    const started = opts.clock.now();
    const requestGate = openRequestGate(gate);
    const t0 = performance.now();
    // Metrics label only actions Ferry knows (a client's unknown Action must not add series).
    let known = '-';
    let code = 'OK';
    try {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const pairs = collectPairs(req, body);
      const q = req.originalUrl.indexOf('?');
      const query = q < 0 ? '' : req.originalUrl.slice(q + 1);
      const path = q < 0 ? req.originalUrl : req.originalUrl.slice(0, q);
      const view: QueryRequestView = { method: req.method, path, query, headers: req.headers, pairs, body };
      const principal = await authenticator.authenticate(view);
      const envelope = splitEnvelope(parseQueryParams(pairs));
      const action = findAction(envelope.action);
      if (!action) throw ClcErrors.make('InvalidAction', { action: showKey(envelope.action) });
      known = envelope.action;
      authorize(envelope.action, principal);
      // A follower changes nothing: the client is told where the leader is (a read is served here).
      if (!READ_ACTIONS.has(envelope.action)) {
        if (!leadership.leading()) throw notLeaderError(leadership);
        // Still the leader in etcd, proven now (not only by the lease): without quorum nothing is started.
        await leadership.confirm?.();
      }
      const ctx: ActionContext = {
        clusters: gatedClusters(opts.clusters, requestGate), gate: requestGate, store: opts.store, clock: opts.clock, logger, ids, principal, origin, keyLocks, leadership,
        ...(opts.replicaProbe ? { replicaProbe: opts.replicaProbe } : {}),
        ...(opts.ha ? { ha: opts.ha } : {}),
        ...(opts.haHooks ? { haHooks: opts.haHooks } : {}),
        ...(opts.volumes ? { volumes: opts.volumes } : {}),
        ...(opts.events ? { events: opts.events } : {}),
        actor: principal.accessKeyId ?? (principal.isAdmin ? 'admin' : principal.accountId),
      };
      const result = await action.handle(envelope.params, ctx);
      res.status(200).type('text/xml').send(renderResponse(envelope.action, action.namespace, requestId, result));
      logger.debug({ action: envelope.action, requestId, ms: opts.clock.now() - started }, 'request served');
    } catch (e) {
      // Deposed while it ran (the store's fence or etcd refused its write): the client goes to the new leader.
      const err = isFerryError(e) && e.code === 'StoreNotLeader' ? notLeaderError(leadership) : toClcError(e);
      code = err.code;
      sendError(res, err, requestId, refusals);
    } finally {
      // After the reply is written: what waited for this request now sees what it changed.
      requestGate.leaveAll();
      apiRequest.publish({ action: known, code, seconds: (performance.now() - t0) / 1000 });
    }
  };

  // Express matches these case-insensitively and with or without a trailing '/' (strict routing is off).
  app.all([...CLC_PATHS], assignRequestId, onlyGetAndPost, readBody, dispatch);
  // Liveness for the other replicas' DescribeServices (issue 21): says nothing but "this process answers".
  app.get(REPLICA_ALIVE_PATH, (_req: Request, res: Response) => { res.status(204).end(); });
  if (opts.status) app.use(STATUS_PATH, opts.status);
  // Anything else gets the same EC2 error document a client can parse, never express's HTML page.
  app.use((req: Request, res: Response) => {
    const q = req.originalUrl.indexOf('?');
    const path = showKey(q < 0 ? req.originalUrl : req.originalUrl.slice(0, q));
    sendError(res, ClcErrors.make('UnknownEndpoint', { path, paths: CLC_PATHS.join(', ') }), requestIds(), refusals);
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    sendError(res, toClcError(err), (res.locals.requestId as string | undefined) ?? requestIds(), refusals);
  });
  return app;
}
