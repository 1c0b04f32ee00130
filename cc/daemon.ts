/**
 * Assembles one CC from its compiled config: the cached view, the NC client, the keeper, the
 * service and the HTTP server. start() resolves once the server listens; stop() undoes it all.
 */
import { startMetrics } from '../shared/metrics/listener.js';
import { addCcMetrics } from './metrics.js';
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
import { ClcEpochGuard, clcEpochStoreSpec } from './clcEpochGuard.js';
import { createCcApp } from './server.js';
import { CcService } from './service.js';
import { initialView } from './view.js';
import { storeBackendOf } from '../shared/store/storeBackend.js';
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
  // The view cache on the configured backend (--store): cc.json, or etcd under <etcd-prefix>cc/<partition>/view/.
  const backend = storeBackendOf(config, { stateDir: config.stateDir, clock, onProblem: (e) => logger.warn({ err: e }, 'etcd store: a watched change could not be applied') });
  const viewSpec = viewStoreSpec(config.partition);
  const store = await backend.open(viewSpec);
  const cache = new ViewCacheWriter(store, logger, clock);
  // The highest CLC leader epoch seen (issue 21), read before anything is served.
  const epochGuard = new ClcEpochGuard(await backend.open(clcEpochStoreSpec(config.partition)), config.partition);
  const transport = new HttpWireTransport({
    path: NC_PATH, defaultTimeoutMs: config.ncTimeoutMs, encoding: config.wireEncoding, ...clientTlsOf(security),
  });
  const nodes = new WireNodeClient(transport, (host) => ncEndpoint(config, host), config.ncInstanceTimeoutMs);
  const keeper = new ViewKeeper({
    initial: initialView(config.partition, config.nodes, cachedNodes(store.read(), config.partition)),
    nodes, clock, logger, onChange: (v, significant) => cache.save(v, significant),
  });
  cache.save(keeper.get()); // the registered nodes, as of now: unknown until their NCs answer
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
  });
  const refusals = new RefusalLog({ logger, clock });
  const onRefused = wireRefusalReporter(refusals);
  const limits = connectionLimitsOf(config);
  const server = security.kind === 'mtls'
    ? https.createServer({ ...serverTlsOptions(security.identity), ...httpsServerOptions(limits) }, createCcApp({ service, logger, checkPeers: true, onRefused, epochGuard }))
    : http.createServer(httpServerOptions(limits), createCcApp({ service, logger, onRefused, epochGuard }));
  const guard = guardConnections(server, { limits, refusals });
  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  // Before polling starts, so the first round is counted too.
  const metrics = await startMetrics({
    daemon: 'cc', config, stateDir: config.stateDir, logger, labels: { partition: config.partition }, add: (m) => addCcMetrics(m, () => keeper.get()),
  });
  keeper.startPolling(config.pollIntervalMs, config.ncTimeoutMs);
  // Plans are rebuilt from the NCs: the first poll round brings them in and each applied poll reconciles.
  service.planDriver.start();
  service.moveRepair.start();
  keyPool.start();
  const { limits: migrationLimits, timeouts } = migrationSettingsOf(config);
  logger.info({
    partition: config.partition, nodes: config.nodes, policy: config.schedulePolicy, security: security.kind, store: backend.where(viewSpec), migration: { limits: migrationLimits, timeouts }, connections: guard.describe(),
  }, 'cc started');

  return {
    url: `${schemeOf(security)}://${config.host}:${port}`,
    keeper,
    ...(metrics ? { metricsUrl: metrics.url } : {}),
    async stop() {
      await metrics?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.planDriver.stop();
      await service.moveRepair.stop();
      await keyPool.stop();
      await keeper.stop();
      await cache.flush();
      await backend.close();
      transport.close();
      refusals.close();
    },
  };
}
