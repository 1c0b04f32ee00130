/**
 * Entry point: one NC per hypervisor host. Compiles its configuration, opens its store (a corrupt
 * store stops it with the store's coded error: never a silent reset; a missing one after the node
 * has run is a lost store, which comes up disabled: storeOrigin.ts), re-adopts the hypervisor's
 * domains, serves NC_OPS, tells its CC it is up, and prints `nc listening on https://HOST:PORT`
 * (http:// with --insecure-plaintext) when ready.
 */
import './threadpool.js'; // first: sizes libuv's pool before anything uses it
import http from 'node:http';
import https from 'node:https';
import { CommanderError } from 'commander';
import { systemClock } from '../shared/clock.js';
import { runMain } from '../shared/config/compileConfig.js';
import { isFerryError } from '../shared/errors/registry.js';
import { createLogger, type Logger } from '../shared/log.js';
import { guardConnections, httpServerOptions, httpsServerOptions, NODE_KEEP_ALIVE_IDLE_MS } from '../shared/net/connectionGuard.js';
import { RefusalLog, wireRefusalReporter } from '../shared/refusalLog.js';
import { HttpWireTransport } from '../shared/wire/httpTransport.js';
import { clientTlsOf, schemeOf, serverTlsOptions, warnIfPlaintext, wireSecurityOf, type WireSecurity } from '../shared/wire/tls.js';
import { CC_PATH } from '../shared/wire/transport.js';
import { DEFAULT_NOTIFY_TIMEOUT_MS, NO_CC_NOTIFIER, WireCcNotifier, type CcNotifier } from './ccNotifier.js';
import { parseNcConfig, type NcConfig } from './config.js';
import { createDriver } from './driverFactory.js';
import { openNcStoreAtStart, type NcStoreAtStart } from './storeOrigin.js';
import { NodeController } from './nodeController.js';
import { fsSharedStorage } from './ha/activityCheck.js';
import { createNcApp } from './server.js';
import { serveNodeWatch } from './watchEndpoint.js';
import { EpochGuard } from './leaderEpoch.js';
import { addNcMetrics } from './metrics.js';
import { startMetrics } from '../shared/metrics/listener.js';

/** How long in-flight requests get to finish at shutdown before their sockets are cut. */
const SHUTDOWN_GRACE_MS = 5000;

function compile(): NcConfig {
  try {
    return parseNcConfig(process.argv.slice(2), process.env);
  } catch (e) {
    if (e instanceof CommanderError && e.exitCode === 0) process.exit(0); // --help
    throw e;
  }
}

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Hints to the CC when --cc-url is set; the transport is closed at shutdown. */
function ccNotifier(config: NcConfig, security: WireSecurity, logger: Logger): { notifier: CcNotifier; close: () => void } {
  if (!config.ccUrl) return { notifier: NO_CC_NOTIFIER, close: () => undefined };
  const transport = new HttpWireTransport({
    path: CC_PATH, defaultTimeoutMs: DEFAULT_NOTIFY_TIMEOUT_MS, encoding: config.wireEncoding, ...clientTlsOf(security),
  });
  logger.info({ ccUrls: config.ccUrls ?? [config.ccUrl] }, 'telling the CC about changes');
  const notifier = new WireCcNotifier({ transport, ccUrl: config.ccUrl, ...(config.ccUrls !== undefined ? { ccUrls: config.ccUrls } : {}), logger, clock: systemClock });
  return {
    notifier,
    close: () => {
      notifier.close();
      transport.close();
    },
  };
}

/** One line on how this start found its store; a lost store is a warning an operator must act on. */
function logStoreOrigin(start: NcStoreAtStart, config: NcConfig, logger: Logger): void {
  const { origin, identity } = start;
  if (identity !== undefined && identity.host !== config.host) {
    logger.warn({ identityHost: identity.host }, `this state directory belonged to an NC started as ${identity.host}`);
  }
  switch (origin.kind) {
    case 'found': break;
    case 'created': logger.info({ stateDir: config.stateDir }, 'no nc.json and no identity file: a first start unless the hypervisor holds domains'); break;
    case 'lost':
      logger.warn({ stateDir: config.stateDir, evidence: origin.lostStore.evidence },
        'nc.json was lost: starting DISABLED and re-adopting the hypervisor\'s domains; an administrator returns the node with EnableService');
      break;
  }
}

async function main(): Promise<void> {
  const config = compile();
  const logger = createLogger('nc').child({ host: config.host });
  const security = wireSecurityOf(config, 'nc', config.host);
  warnIfPlaintext(security, logger, 'ferry-nc');
  const start = await openNcStoreAtStart({
    stateDir: config.stateDir, host: config.host, now: systemClock.now(),
    hooks: { onLeftoverTemps: (files) => logger.warn({ files }, 'removed temp files of interrupted writes beside nc.json') },
  });
  logStoreOrigin(start, config, logger);
  const { store } = start;
  const driver = createDriver(config.hypervisor, { logger, host: config.host });
  const cc = ccNotifier(config, security, logger);
  const controller = new NodeController({
    host: config.host, hypervisor: config.hypervisor.kind, store, driver, clock: systemClock, logger, notifier: cc.notifier,
    requireMigrationCredentials: security.kind === 'mtls', rebootTimeoutMs: config.rebootTimeoutMs,
  });
  await controller.start();

  // CC leader epochs (issue 21): a change from a deposed CC leader is refused.
  const storage = { epochs: new EpochGuard({ host: config.host, store, logger }), ...(config.storageDir !== undefined ? { sharedStorage: fsSharedStorage(config.storageDir) } : {}) };
  const refusals = new RefusalLog({ logger, clock: systemClock });
  const onRefused = wireRefusalReporter(refusals);
  const limits = config.connections;
  const server = security.kind === 'mtls'
    ? https.createServer({ ...serverTlsOptions(security.identity), ...httpsServerOptions(limits) },
      createNcApp({ controller, logger, maxBodyBytes: config.maxBodyBytes, checkPeers: true, onRefused, ...storage }))
    : http.createServer(httpServerOptions(limits), createNcApp({ controller, logger, maxBodyBytes: config.maxBodyBytes, onRefused, ...storage }));
  const guard = guardConnections(server, { limits, refusals, keepAliveIdleMs: NODE_KEEP_ALIVE_IDLE_MS });
  // The CC's cheap safety-net poll (shared/protocol/nodeWatch.ts), on the same port and mutual TLS.
  const watch = serveNodeWatch(server, { describe: () => controller.describe(), checkPeers: security.kind === 'mtls', logger, established: (s) => guard.established(s) });
  await listen(server, config.port, config.host);
  const metrics = await startMetrics({ daemon: 'nc', config, stateDir: config.stateDir, logger, labels: { host: config.host }, add: (m) => addNcMetrics(m, store) });
  logger.info({ connections: guard.describe() }, 'nc serving');
  // The CC need not wait for its next poll to see this node back (and, after a lost store, disabled).
  cc.notifier.notify({ host: config.host, kind: 'node' });
  process.stdout.write(`nc listening on ${schemeOf(security)}://${config.host}:${config.port}\n`);

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    refusals.close();
    void metrics?.close();
    // Upgraded connections are not the HTTP server's to close: without this, close() would wait for the CC to hang up.
    watch.close();
    const cut = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    cut.unref();
    server.close(() => {
      // Every store write is durable when it resolves; waiting for the mailbox flushes the last one.
      void controller.stop()
        .then(() => cc.close())
        .then(() => driver.close())
        .then(() => process.exit(0), (e: unknown) => {
          logger.error({ err: e }, 'error while stopping');
          process.exit(1);
        });
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

void runMain(async () => {
  try {
    await main();
  } catch (e) {
    // Coded start-up failures (StoreCorrupt, StoreSchemaMismatch, ...) are named by their code.
    if (isFerryError(e)) {
      process.stderr.write(`nc: fatal: ${e.code}: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
});
