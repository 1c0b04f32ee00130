/**
 * Whether this replica leads (issue 21), for both daemons: `ferry_leader` 1 while it leads its role
 * (the CLC, or its partition's CC), 0 while it stands by. A single replica (the file store) always
 * leads. Summed over a role's replicas it should be exactly 1 (`sum(ferry_leader{daemon="cc",
 * partition="cluster01"}) != 1` for longer than twice the lease TTL is worth a page); 0 for longer is
 * a role without a leader (etcd without quorum, docs/OPERATIONS.md).
 */
import { Gauge } from 'prom-client';
import type { DaemonMetrics } from './registry.js';

/** What the gauge reads when scraped: the daemon's own view of its lease. */
export interface LeadingSource {
  leading(): boolean;
}

export function addLeaderMetric(m: DaemonMetrics, source: LeadingSource): void {
  new Gauge({
    name: 'ferry_leader', help: 'Whether this replica leads its role now (1) or stands by (0); a single replica always leads', registers: [m.registry],
    collect() {
      this.set(source.leading() ? 1 : 0);
    },
  });
}
