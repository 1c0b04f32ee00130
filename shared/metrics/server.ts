/**
 * The metrics listener (issue 20): its own HTTP server on the daemon's loopback address, GET
 * /metrics in Prometheus' text format for bearers of the scrape token, nothing else. Every refusal
 * is a coded line (MetricsErrors) and changes nothing; the token is compared in constant time and
 * never logged. A scrape only reads: gauges are computed from the daemon's state when collected.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { Registry } from 'prom-client';
import type { FerryError } from '../errors/registry.js';
import type { Logger } from '../log.js';
import { MetricsErrors } from './errors.js';

export interface MetricsServerOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  readonly token: string;
  /** Named in the 401 answer, so an operator knows where the token is. */
  readonly tokenFile: string;
  readonly logger: Logger;
}

export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

function refuse(res: http.ServerResponse, err: FerryError, extra: Record<string, string> = {}): void {
  res.writeHead(err.status, { 'content-type': 'text/plain; charset=utf-8', ...extra });
  res.end(`${err.code}: ${err.message}\n`);
}

export async function serveMetrics(o: MetricsServerOptions): Promise<MetricsServer> {
  const expected = digest(`Bearer ${o.token}`);
  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path !== '/metrics') return refuse(res, MetricsErrors.make('MetricsNotFound', { path: path.slice(0, 100) }));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return refuse(res, MetricsErrors.make('MetricsMethodNotAllowed', { method: (req.method ?? '').slice(0, 20) }), { allow: 'GET, HEAD' });
    }
    const given = req.headers.authorization ?? '';
    if (!timingSafeEqual(digest(given), expected)) {
      return refuse(res, MetricsErrors.make('MetricsUnauthorized', { file: o.tokenFile }), { 'www-authenticate': 'Bearer realm="ferry-metrics"' });
    }
    o.registry.metrics().then((text) => {
      res.writeHead(200, { 'content-type': o.registry.contentType });
      res.end(req.method === 'HEAD' ? undefined : text);
    }, (e: unknown) => {
      o.logger.error({ err: e }, 'collecting metrics failed');
      refuse(res, MetricsErrors.make('MetricsCollectFailed'));
    });
  });
  // Bodies are never read: a scraper sends none, and anything sent is drained and dropped.
  server.on('request', (req: http.IncomingMessage) => { req.resume(); });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    url: `http://${o.host}:${o.port}/metrics`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
