/** The metrics listener's error registry (one per surface): what a scraper or an operator can be told. */
import { client, defineErrors, server } from '../errors/registry.js';

export const MetricsErrors = defineErrors({
  MetricsUnauthorized: client(401, 'metrics need the scrape token: send "Authorization: Bearer <token>" (the token is in {file})'),
  MetricsNotFound: client(404, 'no such path {path}: metrics are at /metrics'),
  MetricsMethodNotAllowed: client(405, 'method {method} not allowed: metrics are read with GET (or HEAD)'),
  MetricsCollectFailed: server(500, 'collecting the metrics failed; see the daemon\'s log'),
  ScrapeTokenUnreadable: server(500, 'the scrape token file {path} cannot be used: {detail}', false),
});
