/**
 * Assembles one CC from its compiled config: the cached view, the NC client, the keeper, the
 * service and the HTTP server. start() resolves once the server listens; stop() undoes it all.
 */
import { startMetrics } from '../shared/metrics/listener.js';
import { addCcMetrics } from './metrics.js';
import { addLeaderMetric } from '../shared/metrics/leaderMetrics.js';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { connectionLimitsOf } from '../shared/config/connectionFlags.js';
import { guardConnections, httpServerOptions, httpsServerOptions } from '../shared/net/connectionGuard.js';
import { RefusalLog, wireRefusalReporter } from '../shared/refusalLog.js';
import { HttpWireTransport } from '../shared/wire/httpTransport.js';
import { clientTlsOf, schemeOf, serverTlsOptions, warnIfPlaintext, wireSecurityOf } from '../shared/wire/tls.js';
import { NC_PATH } from '../shared/wire/transport.js';
import { migrationSettingsOf, ncEndpoint, type CcConfig } from './config.js';
import { caCredentialIssuer, loadMigrationCa, RANDOM_ISSUER_SOURCES } from './migration/credentialIssuer.js';
import { KEY_POOL_QUIET_MS, KeyPool } from './migration/keyPool.js';
import { WireNodeClient } from './nodeClient.js';
import { WATCH_RETRY_MS, WsNodeWatch } from './nodeWatch.js';
import { NC_WATCH_PATH } from '../shared/protocol/nodeWatch.js';
import { ClcEpochGuard, clcEpochStoreSpec } from './clcEpochGuard.js';
import { createCcApp } from './server.js';
import { CcService } from './service.js';
import { adoptStored, initialView } from './view.js';
import { storeBackendOf } from '../shared/store/storeBackend.js';
import type { Etcd3 } from 'etcd3';
import { LeaderDuties, type Duty } from '../shared/leader/leaderDuties.js';
import type { ReplicaElection } from '../shared/leader/replicaElection.js';
import { ccElection, SOLE_CC, stampEpochs, type CcLeadership } from './replicas.js';
import { cachedNodes, viewStoreSpec, ViewCacheWriter } from './viewCache.js';
import { ViewKeeper } from './viewKeeper.js';

export interface RunningCc {
  /** http://HOST:PORT, or https:// with --tls-dir */
  readonly url: string;
  readonly keeper: ViewKeeper;
  /** Where Prometheus scrapes this CC (with --metrics-port). */
  readonly metricsUrl?: string;
  stop(): Promise<void>;
}

export async function startCc(config: CcConfig, deps: { readonly logger: Logger; readonly clock: Clock }): Promise<RunningCc> {
  const { logger, clock } = deps;
  const security = wireSecurityOf(config, 'cc', config.host);
  warnIfPlaintext(security, logger, 'ferry-cc');
  // Replicas (issue 21): with --store etcd every CC of the partition campaigns; only the leader changes
  // things, and its view cache's writes are fenced by its election.
  let election: ReplicaElection | undefined;
  let etcdClient: Etcd3 | undefined;
  if (config.store === 'etcd' && config.etcdEndpoints !== undefined) {
    const { connectEtcd } = await import('../shared/store/etcdClient.js');
    etcdClient = connectEtcd({ endpoints: config.etcdEndpoints, callTimeoutMs: config.etcdTimeoutMs });
    election = ccElection({ client: etcdClient, etcdPrefix: config.etcdPrefix, partition: config.partition, self: config.advertiseUrl, ttlSeconds: config.leaderTtlSeconds, callTimeoutMs: config.etcdTimeoutMs, clock, logger });
  }
  const leadership: CcLeadership = election ?? SOLE_CC;
  // The view cache on the configured backend (--store): cc.json, or etcd under <etcd-prefix>cc/<partition>/view/.
  const backend = storeBackendOf(config, {
    stateDir: config.stateDir, clock, onProblem: (e) => logger.warn({ err: e }, 'etcd store: a watched change could not be applied'),
    ...(election !== undefined && etcdClient !== undefined ? { fence: election.fence, etcdClient } : {}),
  });
  const viewSpec = viewStoreSpec(config.partition);
  const store = await backend.open(viewSpec);
  const cache = new ViewCacheWriter(store, logger, clock);
  // The highest CLC leader epoch seen (issue 21), read before anything is served.
  const epochGuard = new ClcEpochGuard(await backend.open(clcEpochStoreSpec(config.partition)), config.partition);
  const transport = new HttpWireTransport({
    path: NC_PATH, defaultTimeoutMs: config.ncTimeoutMs, encoding: config.wireEncoding, ...clientTlsOf(security),
  });
  // Every change sent to an NC carries this term's epoch; none is sent while this replica does not lead.
  const nodes = new WireNodeClient(stampEpochs(transport, leadership, config.partition), (host) => ncEndpoint(config, host), config.ncInstanceTimeoutMs);
  // The safety-net poll's cheap form (shared/protocol/nodeWatch.ts): a WebSocket per NC on its own port and TLS.
  const watch = new WsNodeWatch({
    urlOf: (host) => `${ncEndpoint(config, host).replace(/^http/, 'ws')}${NC_WATCH_PATH}`,
    ...clientTlsOf(security), clock, logger, retryMs: WATCH_RETRY_MS,
  });
  const keeper = new ViewKeeper({
    initial: initialView(config.partition, config.nodes, cachedNodes(store.read(), config.partition)),
    // Only the leader writes the cache (a follower's write would be refused by the fence).
    nodes, clock, logger, onChange: (v, significant) => { if (leadership.leading()) cache.save(v, significant); },
    watch,
  });
  // The migration CA is read at start, like the tier identity: a missing file stops the CC here.
  const migrationCa = security.kind === 'mtls' && config.tlsDir !== undefined ? loadMigrationCa(config.tlsDir) : undefined;
  const keyPool = new KeyPool({
    generate: RANDOM_ISSUER_SOURCES.keyPair, size: migrationCa ? config.migrationKeyPool : 0,
    // Refilled once migrations have taken none for a while, not during their hand-shakes.
    refillDelayMs: KEY_POOL_QUIET_MS, clock,
    onError: (e) => logger.warn({ err: e }, 'could not make a migration key pair ahead'),
  });
  const credentials = migrationCa ? caCredentialIssuer(migrationCa, clock, { ...RANDOM_ISSUER_SOURCES, keyPair: () => keyPool.take() }) : undefined;
  const service = new CcService({
    ncUri: (host) => `${ncEndpoint(config, host)}${NC_PATH}`,
    keeper, nodes, clock, logger, policy: config.schedulePolicy, ncTimeoutMs: config.ncTimeoutMs, migration: migrationSettingsOf(config),
    ...(credentials ? { credentials } : {}),
    // A CC always serves under a CLC, which sends the fenced hosts every HA pass (ccSetFencedHosts).
    awaitFencedHosts: true,
    // The NCs push their changes: a report stays current until the safety-net poll is overdue.
    freshMs: config.pollIntervalMs + config.ncTimeoutMs,
    leadership,
  });
  const refusals = new RefusalLog({ logger, clock });
  const onRefused = wireRefusalReporter(refusals);
  const limits = connectionLimitsOf(config);
  const app = { service, logger, onRefused, epochGuard, leadership, partition: config.partition };
  const server = security.kind === 'mtls'
    ? https.createServer({ ...serverTlsOptions(security.identity), ...httpsServerOptions(limits) }, createCcApp({ ...app, checkPeers: true }))
    : http.createServer(httpServerOptions(limits), createCcApp(app));
  const guard = guardConnections(server, { limits, refusals });
  // What only the leader runs, started when this replica leads (the single CC: at once) and stopped at
  // the lease's deadline minus its margin; each term resumes from the NCs, which hold the plans.
  const duties = new LeaderDuties({
    leadership, role: `CC ${config.partition}`, logger,
    duties: (): Duty[] => [
      // The registered nodes, as of now (unknown until their NCs answer), and every change from here on;
      // new migrations and move repair wait for the CLC's fenced hosts of this term (an earlier term's may be stale).
      {
        name: 'term start',
        start: () => {
          keeper.forgetFencedHosts();
          // What the previous leader last wrote of each node, where it is newer than this replica's own look.
          for (const n of cachedNodes(store.read(), config.partition)) keeper.update(n.host, (v) => adoptStored(v, n));
          cache.save(keeper.get());
          return Promise.resolve();
        },
        stop: () => Promise.resolve(),
      },
      { name: 'node polling', start: () => { keeper.startPolling(config.pollIntervalMs, config.ncTimeoutMs); return Promise.resolve(); }, stop: () => keeper.stopPolling() },
      // Plans are rebuilt from the NCs: the first poll round brings them in and each applied poll reconciles.
      { name: 'plan driver', start: () => { service.planDriver.start(); return Promise.resolve(); }, stop: () => service.planDriver.stop() },
      { name: 'move repair', start: () => { service.moveRepair.start(); return Promise.resolve(); }, stop: () => service.moveRepair.stop() },
    ],
  });
  if (election !== undefined) {
    election.onChange(() => duties.reconcile());
    election.start();
    // Serve once the election has an outcome (this replica leads, or another is seen), at most one lease.
    await election.settled(config.leaderTtlSeconds * 1000);
    logger.info({ self: config.advertiseUrl, leading: election.leading(), leader: election.leaderUrl() ?? null }, 'CC replica: election settled');
  }
  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  // Before polling starts, so the first round is counted too.
  const metrics = await startMetrics({
    daemon: 'cc', config, stateDir: config.stateDir, logger, labels: { partition: config.partition }, add: (m) => {
      addCcMetrics(m, () => keeper.get());
      addLeaderMetric(m, leadership);
    },
  });
  duties.reconcile();
  await duties.ready();
  keyPool.start();
  const { limits: migrationLimits, timeouts } = migrationSettingsOf(config);
  logger.info({
    partition: config.partition, nodes: config.nodes, replica: election !== undefined ? { self: config.advertiseUrl, leading: election.leading() } : 'sole', policy: config.schedulePolicy, security: security.kind, store: backend.where(viewSpec), migration: { limits: migrationLimits, timeouts }, connections: guard.describe(),
  }, 'cc started');

  return {
    url: `${schemeOf(security)}://${config.host}:${port}`,
    keeper,
    ...(metrics ? { metricsUrl: metrics.url } : {}),
    async stop() {
      await metrics?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await duties.stop();
      await keyPool.stop();
      await keeper.stop();
      if (leadership.leading()) await cache.flush();
      // Resigns: another replica leads at once rather than after the lease.
      await election?.stop();
      await backend.close();
      transport.close();
      refusals.close();
    },
  };
}
