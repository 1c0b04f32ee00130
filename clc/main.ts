/**
 * The CLC process: config → store → CC clients → change gate → admin API on HOST:PORT/services/Eucalyptus.
 * Prints one ready line on stdout; SIGTERM/SIGINT close the server and exit 0.
 */
import type { Server } from 'node:http';
import { systemClock } from '../shared/clock.js';
import { runMain } from '../shared/config/compileConfig.js';
import { createLogger } from '../shared/log.js';
import { HttpWireTransport } from '../shared/wire/httpTransport.js';
import { CC_PATH } from '../shared/wire/transport.js';
import { buildClcApp, CLC_PATH } from './api/app.js';
import { PartitionGate } from './api/partitionGate.js';
import { createCcClusters } from './clusters/ccClusters.js';
import { HelpShown, parseClcConfig } from './config.js';
import { openClcStore } from './state/clcStore.js';

async function main(): Promise<void> {
  let config;
  try {
    config = parseClcConfig(process.argv.slice(2), process.env, (s) => process.stdout.write(s));
  } catch (e) {
    if (e instanceof HelpShown) process.exit(0);
    throw e;
  }
  const logger = createLogger('clc');
  const store = await openClcStore(config.stateDir);
  const transport = new HttpWireTransport({ path: CC_PATH, defaultTimeoutMs: config.ccTimeoutMs });
  const clusters = createCcClusters({ partitions: config.clusters, transport, timeoutMs: config.ccTimeoutMs });
  const gate = new PartitionGate({ clock: systemClock, logger, limits: { maxWaiting: config.gateMaxWaiting, maxWaitMs: config.gateMaxWaitMs } });
  const app = buildClcApp({ clusters, store, clock: systemClock, logger, maxBodyBytes: config.maxBodyBytes, gate });

  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.port, config.host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  logger.info({ partitions: config.clusters.map((p) => p.name) }, 'clc started');
  process.stdout.write(`clc listening on http://${config.host}:${config.port}${CLC_PATH}\n`);

  const stop = (signal: string): void => {
    logger.info({ signal }, 'clc stopping');
    transport.close();
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

void runMain(main);
