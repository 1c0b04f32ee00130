/**
 * The CC's Prometheus series (issue 20), on top of the common ones (shared/metrics/registry.ts): its
 * polling rounds, each step of the migration handshake it drives on the NCs, and, read from its view
 * when scraped, nodes by state, instances by state, migration items by state (as their source NCs
 * report them) and the resources reserved on destinations.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import { ccMigrationStep, ccPollRound } from '../shared/metrics/channels.js';
import { FAST_BUCKETS, SLOW_BUCKETS, type DaemonMetrics } from '../shared/metrics/registry.js';
import { itemStateSchema } from '../shared/protocol/migrationProtocol.js';
import { plansOf } from './migration/plans.js';
import { migrationInputs, reservationsOfView, type ClusterView } from './view.js';

export function addCcMetrics(m: DaemonMetrics, view: () => ClusterView): void {
  const registers = [m.registry];
  const rounds = new Histogram({ name: 'ferry_cc_poll_round_seconds', help: 'One polling round over every node of the cluster', buckets: FAST_BUCKETS, registers });
  const polled = new Counter({ name: 'ferry_cc_node_polls_total', help: 'Node polls made by polling rounds', registers });
  m.onClose(ccPollRound.subscribe((e) => {
    rounds.observe(e.seconds);
    polled.inc(e.hosts);
  }));
  const steps = new Histogram({
    name: 'ferry_cc_migration_step_seconds', help: 'Migration handshake steps the CC drove on an NC (prepare, commit, rollback, ...), by step and result',
    labelNames: ['step', 'result'], buckets: SLOW_BUCKETS, registers,
  });
  m.onClose(ccMigrationStep.subscribe((e) => steps.observe({ step: e.step, result: e.result }, e.seconds)));

  new Gauge({
    name: 'ferry_cc_nodes', help: 'Nodes of the cluster, by maintenance state and whether their NC answers', labelNames: ['state', 'reachable'], registers,
    collect() {
      this.reset();
      for (const { node } of view().entries) this.inc({ state: node.nodeState, reachable: String(node.reachable) });
    },
  });
  new Gauge({
    name: 'ferry_cc_instances', help: 'Instances on the cluster\'s nodes, by state', labelNames: ['state'], registers,
    collect() {
      this.reset();
      for (const { node } of view().entries) for (const i of node.instances) this.inc({ state: i.state });
    },
  });
  new Gauge({
    name: 'ferry_migration_items', help: 'Migration items the source NCs hold, by state (finished ones until their plan expires)', labelNames: ['state'], registers,
    collect() {
      const counts = new Map<string, number>(itemStateSchema.options.map((s) => [s, 0]));
      for (const p of plansOf(migrationInputs(view()))) for (const i of p.items) counts.set(i.state, (counts.get(i.state) ?? 0) + 1);
      for (const [state, n] of counts) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'ferry_cc_reserved', help: 'Resources reserved on migration destinations, by resource (cores, memory in bytes, disk in bytes)', labelNames: ['resource'], registers,
    collect() {
      let cores = 0;
      let memoryMiB = 0;
      let diskGiB = 0;
      for (const r of reservationsOfView(view()).byHost.values()) {
        cores += r.cores;
        memoryMiB += r.memoryMiB;
        diskGiB += r.diskGiB;
      }
      this.set({ resource: 'cores' }, cores);
      this.set({ resource: 'memory_bytes' }, memoryMiB * 1024 * 1024);
      this.set({ resource: 'disk_bytes' }, diskGiB * 1024 ** 3);
    },
  });
  new Gauge({
    name: 'ferry_cc_reserved_hosts', help: 'Destinations held for an active plan with reserved destinations (no new instances there)', registers,
    collect() {
      this.set(reservationsOfView(view()).reservedHosts.size);
    },
  });
}
