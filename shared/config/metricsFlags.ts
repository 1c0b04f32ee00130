/**
 * The metrics flags every daemon takes (issue 20): `--metrics-port` opens the Prometheus listener
 * on the daemon's own loopback address (absent: no listener), `--metrics-token-file` names the
 * read-only scrape credential (a bearer token; created mode 0600 in the state directory when
 * missing). One place, so the CLC, the CC and the NC name and check them alike.
 */
import { z } from 'zod';
import type { FlagField } from './flagTable.js';

export const METRICS_TOKEN_FILE = 'metrics.token';

/** Schema fields, to spread into a daemon's z.object. */
export const metricsShape = {
  metricsPort: z.string().regex(/^\d+$/, 'must be a whole number').optional()
    .transform((v) => (v === undefined ? undefined : Number(v)))
    .pipe(z.number().int().min(1, 'must be at least 1').max(65535, 'must be at most 65535').optional()),
  metricsTokenFile: z.string().min(1).optional(),
};

export function metricsFields(envPrefix: string): FlagField[] {
  return [
    ['metricsPort', '--metrics-port <n>', `${envPrefix}_METRICS_PORT`, 'serve Prometheus metrics at http://HOST:PORT/metrics on this daemon\'s address, for bearers of the scrape token (off when unset)'],
    ['metricsTokenFile', '--metrics-token-file <file>', `${envPrefix}_METRICS_TOKEN_FILE`, `the scrape token (read-only; created mode 600 when missing) (<state-dir>/${METRICS_TOKEN_FILE})`],
  ];
}
