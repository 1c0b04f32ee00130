/**
 * A daemon's Prometheus registry (issue 20): its own (never prom-client's global one, so daemons
 * and tests in one process do not mix), the process metrics prom-client collects (CPU, memory,
 * event-loop lag, handles), and what every tier reports alike: durable store writes. Each tier adds
 * its own series (clc/metrics.ts, cc/metrics.ts, nc/metrics.ts) from the channels in channels.ts
 * and from its state when scraped. Names follow Prometheus' conventions: `ferry_` prefix, base units
 * (`_seconds`, `_bytes`), `_total` on counters.
 */
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { storeWrite, wireRequest } from './channels.js';

/** Latency buckets for local work: 0.5 ms to 10 s. */
export const FAST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** For work that waits on other hosts or people: 10 ms to 30 min. */
export const SLOW_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

export interface DaemonMetrics {
  readonly registry: Registry;
  /** Adds an unsubscribe (or other undo) to run at close(). */
  onClose(fn: () => void): void;
  /** Stops listening to the channels (the registry stays readable). */
  close(): void;
}

export function daemonMetrics(daemon: 'clc' | 'cc' | 'nc', labels: Readonly<Record<string, string>> = {}): DaemonMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ daemon, ...labels });
  collectDefaultMetrics({ register: registry });
  const undo: (() => void)[] = [];
  const writes = new Histogram({
    name: 'ferry_store_write_seconds', help: 'Durable store writes (write, fsync, rename), by the store\'s kind',
    labelNames: ['kind'], buckets: FAST_BUCKETS, registers: [registry],
  });
  undo.push(storeWrite.subscribe((e) => writes.observe({ kind: e.kind }, e.seconds)));
  if (daemon !== 'clc') {
    const requests = new Counter({
      name: 'ferry_wire_requests_total', help: 'Requests this tier\'s wire service answered, by operation (- before one was admitted) and code (OK or the Fault code)',
      labelNames: ['op', 'code'], registers: [registry],
    });
    const duration = new Histogram({ name: 'ferry_wire_request_duration_seconds', help: 'Wire request time, by operation', labelNames: ['op'], buckets: FAST_BUCKETS, registers: [registry] });
    undo.push(wireRequest.subscribe((e) => {
      requests.inc({ op: e.op, code: e.code });
      duration.observe({ op: e.op }, e.seconds);
    }));
  }
  return {
    registry,
    onClose: (fn) => { undo.push(fn); },
    close: () => { for (const fn of undo.splice(0)) fn(); },
  };
}
