/**
 * Starts a daemon's metrics, when its --metrics-port asks for them (issue 20): the scrape token
 * (loaded or made), the registry with the tier's series, and the listener on the daemon's address.
 * Absent port: nothing runs and nothing subscribes to the channels.
 */
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { METRICS_TOKEN_FILE } from '../config/metricsFlags.js';
import { daemonMetrics, type DaemonMetrics } from './registry.js';
import { serveMetrics } from './server.js';
import { loadOrCreateScrapeToken } from './token.js';

export interface MetricsConfig {
  readonly host: string;
  readonly metricsPort?: number | undefined;
  readonly metricsTokenFile?: string | undefined;
}

export interface RunningMetrics {
  readonly url: string;
  close(): Promise<void>;
}

export async function startMetrics(o: {
  readonly daemon: 'clc' | 'cc' | 'nc';
  readonly config: MetricsConfig;
  readonly stateDir: string;
  readonly logger: Logger;
  readonly labels?: Readonly<Record<string, string>>;
  readonly add: (m: DaemonMetrics) => void;
}): Promise<RunningMetrics | undefined> {
  const port = o.config.metricsPort;
  if (port === undefined) return undefined;
  const tokenFile = o.config.metricsTokenFile ?? join(o.stateDir, METRICS_TOKEN_FILE);
  const { token, created } = await loadOrCreateScrapeToken(tokenFile);
  const metrics = daemonMetrics(o.daemon, o.labels);
  o.add(metrics);
  const server = await serveMetrics({ host: o.config.host, port, registry: metrics.registry, token, tokenFile, logger: o.logger });
  o.logger.info({ url: server.url, tokenFile, created }, 'metrics served (Authorization: Bearer <the token in tokenFile>)');
  return {
    url: server.url,
    async close() {
      metrics.close();
      await server.close();
    },
  };
}
