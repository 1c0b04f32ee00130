/**
 * The NC's Prometheus series (issue 20), on top of the common ones (shared/metrics/registry.ts):
 * migrations this node was the source of, by outcome, with their duration, downtime and bytes (from
 * the hypervisor's stats of each completed item), and, read from its store when scraped, instances by
 * phase and migration items by role and state.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import { ncMigrationEnded } from '../shared/metrics/channels.js';
import { FAST_BUCKETS, SLOW_BUCKETS, type DaemonMetrics } from '../shared/metrics/registry.js';
import type { NcStore } from './ncStore.js';

export function addNcMetrics(m: DaemonMetrics, store: NcStore): void {
  const registers = [m.registry];
  const ended = new Counter({ name: 'ferry_migrations_total', help: 'Migration items that ended on this source node, by outcome', labelNames: ['outcome'], registers });
  const duration = new Histogram({ name: 'ferry_migration_duration_seconds', help: 'Hypervisor time of completed live migrations out of this node', buckets: SLOW_BUCKETS, registers });
  const downtime = new Histogram({ name: 'ferry_migration_downtime_seconds', help: 'Guest pause at switch-over of completed live migrations out of this node', buckets: FAST_BUCKETS, registers });
  const bytes = new Counter({ name: 'ferry_migration_transferred_bytes_total', help: 'Bytes sent by completed live migrations out of this node', registers });
  m.onClose(ncMigrationEnded.subscribe((e) => {
    ended.inc({ outcome: e.outcome });
    if (e.elapsedMs !== undefined) duration.observe(e.elapsedMs / 1000);
    if (e.downtimeMs !== undefined) downtime.observe(e.downtimeMs / 1000);
    if (e.bytesTransferred !== undefined) bytes.inc(e.bytesTransferred);
  }));
  new Gauge({
    name: 'ferry_nc_instances', help: 'Instance records of this node, by phase', labelNames: ['phase'], registers,
    collect() {
      this.reset();
      for (const r of Object.values(store.read().instances)) this.inc({ phase: r.phase });
    },
  });
  new Gauge({
    name: 'ferry_nc_migration_items', help: 'Migration items this node holds, as source (its plans) or destination (incoming), by state', labelNames: ['role', 'state'], registers,
    collect() {
      this.reset();
      const snap = store.read();
      for (const p of Object.values(snap.plans)) for (const i of p.items) this.inc({ role: 'source', state: i.state });
      for (const r of Object.values(snap.incoming)) this.inc({ role: 'destination', state: r.state });
    },
  });
}
