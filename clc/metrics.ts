/**
 * The CLC's Prometheus series (issue 20), on top of the common ones (shared/metrics/registry.ts):
 * admin-API requests by action and code, the partition gate (waiting now, and how long changes
 * waited), host HA (hosts by state, transitions, fences and power cycles by result, remediation held
 * back, work refused by a full pool, repairs owed). Counters follow the channels; gauges are read
 * from the store and the gate when scraped.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Clock } from '../shared/clock.js';
import { apiRequest, clcEvent, gateWait, haHealthCheck, haHeld, haPowerAction, haTransition, haWorkRefused, webhookDelivery } from '../shared/metrics/channels.js';
import { FAST_BUCKETS, SLOW_BUCKETS, type DaemonMetrics } from '../shared/metrics/registry.js';
import type { Store } from '../shared/store/store.js';
import type { PartitionGate } from './core/partitionGate.js';
import { lastSeqOf } from './events/eventLog.js';
import type { EventStream } from './events/eventStream.js';
import { HA_STATES } from './ha/hostHaState.js';
import type { ClcState } from './state/clcStore.js';

export interface ClcMetricsSources {
  readonly store: Store<ClcState>;
  readonly gate: PartitionGate;
  readonly partitions: readonly string[];
  /** The event stream, with the webhook's URL when one is set (its lag is read from the delivered cursor). */
  readonly events?: EventStream;
  readonly webhookUrl?: string;
  readonly clock?: Clock;
}

export function addClcMetrics(m: DaemonMetrics, src: ClcMetricsSources): void {
  const registers = [m.registry];
  const requests = new Counter({ name: 'ferry_api_requests_total', help: 'Admin-API requests answered, by action and code (OK or the error code)', labelNames: ['action', 'code'], registers });
  const duration = new Histogram({ name: 'ferry_api_request_duration_seconds', help: 'Admin-API request time, by action', labelNames: ['action'], buckets: FAST_BUCKETS, registers });
  m.onClose(apiRequest.subscribe((e) => {
    requests.inc({ action: e.action, code: e.code });
    duration.observe({ action: e.action }, e.seconds);
  }));

  const gateWaits = new Histogram({
    name: 'ferry_gate_wait_seconds', help: 'How long changes waited at the partition gate, by kind and outcome (admitted, refused)',
    labelNames: ['kind', 'outcome'], buckets: SLOW_BUCKETS, registers,
  });
  m.onClose(gateWait.subscribe((e) => gateWaits.observe({ kind: e.kind, outcome: e.outcome }, e.seconds)));
  new Gauge({
    name: 'ferry_gate_waiting', help: 'Changes waiting at the partition gate now, by partition', labelNames: ['partition'], registers,
    collect() {
      for (const p of src.partitions) this.set({ partition: p }, src.gate.waiting(p));
    },
  });

  new Gauge({
    name: 'ferry_ha_hosts', help: 'Hosts by host-HA state', labelNames: ['state'], registers,
    collect() {
      const counts = new Map<string, number>(HA_STATES.map((s) => [s, 0]));
      for (const r of Object.values(src.store.read().ha.hosts)) counts.set(r.state, (counts.get(r.state) ?? 0) + 1);
      for (const [state, n] of counts) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'ferry_ha_repairs_owed', help: 'Repairs host HA owes (a drain, or a restart elsewhere of a fenced host\'s instances), by kind', labelNames: ['kind'], registers,
    collect() {
      const counts = new Map<string, number>([['drain', 0], ['evacuate', 0]]);
      for (const r of Object.values(src.store.read().ha.hosts)) if (r.owed) counts.set(r.owed.kind, (counts.get(r.owed.kind) ?? 0) + 1);
      for (const [kind, n] of counts) this.set({ kind }, n);
    },
  });
  const transitions = new Counter({ name: 'ferry_ha_transitions_total', help: 'Host-HA state changes, by the state entered', labelNames: ['to'], registers });
  m.onClose(haTransition.subscribe((e) => transitions.inc({ to: e.to })));
  const power = new Counter({ name: 'ferry_ha_power_actions_total', help: 'Fences and power cycles host HA ran, by action and result (ok, already-off, failed)', labelNames: ['action', 'result'], registers });
  m.onClose(haPowerAction.subscribe((e) => power.inc({ action: e.action, result: e.result })));
  const checks = new Counter({ name: 'ferry_ha_health_checks_total', help: 'Host-HA health checks, by outcome (healthy, unhealthy, unknown: the CC did not answer in time)', labelNames: ['outcome'], registers });
  m.onClose(haHealthCheck.subscribe((e) => checks.inc({ outcome: e.outcome })));
  const held = new Counter({ name: 'ferry_ha_remediations_held_total', help: 'Recoveries or fences held back (storm guard, suspension, back-pressure), by target state', labelNames: ['target'], registers });
  m.onClose(haHeld.subscribe((e) => held.inc({ target: e.target })));
  const refused = new Counter({ name: 'ferry_ha_work_refused_total', help: 'Host-HA work a full pool refused (retried later), by kind', labelNames: ['kind'], registers });
  m.onClose(haWorkRefused.subscribe((e) => refused.inc({ kind: e.kind })));
  addEventMetrics(m, src);
}

/** The event stream: events recorded by kind, webhook POSTs by result, events lost to retention before delivery, and the webhook's lag. */
function addEventMetrics(m: DaemonMetrics, src: ClcMetricsSources): void {
  const registers = [m.registry];
  const recorded = new Counter({ name: 'ferry_clc_events_total', help: 'Events the CLC recorded in its event stream, by kind', labelNames: ['kind'], registers });
  m.onClose(clcEvent.subscribe((e) => recorded.inc({ kind: e.kind })));
  const deliveries = new Counter({ name: 'ferry_clc_webhook_deliveries_total', help: 'Event webhook POSTs, by result (ok, failed: retried with backoff)', labelNames: ['result'], registers });
  const dropped = new Counter({ name: 'ferry_clc_webhook_dropped_events_total', help: 'Events that left the bounded history before the webhook got them (named to the receiver as a dropped range)', registers });
  m.onClose(webhookDelivery.subscribe((e) => {
    deliveries.inc({ result: e.result });
    if (e.dropped > 0) dropped.inc(e.dropped);
  }));
  const { events, webhookUrl } = src;
  if (!events || webhookUrl === undefined) return;
  const delivered = (): number => events.state().webhooks[webhookUrl]?.delivered ?? 0;
  new Gauge({
    name: 'ferry_clc_webhook_lag_events', help: 'Events recorded but not yet acknowledged by the webhook', registers,
    collect() {
      this.set(Math.max(0, lastSeqOf(events.state()) - delivered()));
    },
  });
  new Gauge({
    name: 'ferry_clc_webhook_lag_seconds', help: 'Age of the oldest event the webhook has not acknowledged (0 when caught up)', registers,
    collect() {
      const oldest = events.state().events.find((e) => e.seq > delivered());
      const now = src.clock?.now() ?? oldest?.time ?? 0;
      this.set(oldest ? Math.max(0, (now - oldest.time) / 1000) : 0);
    },
  });
}
