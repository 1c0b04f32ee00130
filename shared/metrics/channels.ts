/**
 * What Ferry's code reports for metrics, as node:diagnostics_channel channels (issue 20). A layer
 * publishes a plain event where something happens (a store write, an API request, a fence); a
 * daemon that serves metrics subscribes and turns the events into Prometheus series
 * (shared/metrics/registry.ts). Publishing costs nothing while nobody subscribes, and no layer
 * imports prom-client or knows whether metrics are on: the code stays testable without them.
 */
import diagnostics from 'node:diagnostics_channel';

export interface MetricChannel<T> {
  publish(event: T): void;
  /** Returns the unsubscribe function. */
  subscribe(listener: (event: T) => void): () => void;
}

function channel<T>(name: string): MetricChannel<T> {
  const ch = diagnostics.channel(name);
  return {
    publish(event) {
      if (ch.hasSubscribers) ch.publish(event);
    },
    subscribe(listener) {
      const fn = (message: unknown): void => listener(message as T);
      ch.subscribe(fn);
      return () => { ch.unsubscribe(fn); };
    },
  };
}

/** A durable store write (shared/store/store.ts): the file's kind and how long write + fsync took. */
export const storeWrite = channel<{ readonly kind: string; readonly seconds: number }>('ferry.store.write');

/** One request a tier's wire service answered (CC, NC): its operation ('-' before one was admitted) and code. */
export const wireRequest = channel<{ readonly op: string; readonly code: string; readonly seconds: number }>('ferry.wire.request');

/** One admin-API request answered (clc/api): its action ('-' before one was read) and code ('OK' or the error code). */
export const apiRequest = channel<{ readonly action: string; readonly code: string; readonly seconds: number }>('ferry.clc.api.request');

/** A change left the CLC's partition gate: admitted after waiting, or refused (queue full, timed out). */
export const gateWait = channel<{ readonly kind: string; readonly outcome: 'admitted' | 'refused'; readonly seconds: number }>('ferry.clc.gate.wait');

/** The CLC's event stream recorded an event (clc/events/eventStream.ts), by kind. */
export const clcEvent = channel<{ readonly kind: string }>('ferry.clc.events.recorded');

/** One POST of a batch of events to the webhook ended: delivered, failed (retried later), or events lost to retention. */
export const webhookDelivery = channel<{ readonly result: 'ok' | 'failed'; readonly events: number; readonly dropped: number }>('ferry.clc.events.webhook');

/** Host HA moved a host to another state. */
export const haTransition = channel<{ readonly from: string; readonly to: string }>('ferry.clc.ha.transition');

/** A power action of host HA ended: fence or power cycle, and how. */
export const haPowerAction = channel<{ readonly action: 'fence' | 'recover'; readonly result: 'ok' | 'already-off' | 'failed' }>('ferry.clc.ha.power');

/** A host-HA health check ended: healthy, unhealthy, or unknown (its source did not answer). */
export const haHealthCheck = channel<{ readonly outcome: 'healthy' | 'unhealthy' | 'unknown' }>('ferry.clc.ha.health');

/** Host HA held a recovery or fence back (storm guard, suspension or back-pressure): the reason's kind. */
export const haHeld = channel<{ readonly target: string }>('ferry.clc.ha.held');

/** The HA runner's bounded pool refused work (full): which kind. */
export const haWorkRefused = channel<{ readonly kind: string }>('ferry.clc.ha.refused');

/** One CC polling round over all its nodes. */
export const ccPollRound = channel<{ readonly seconds: number; readonly hosts: number }>('ferry.cc.poll.round');

/** One step of the migration handshake the CC drove on an NC (prepare, commit, cleanup, ...). */
export const ccMigrationStep = channel<{ readonly step: string; readonly result: 'ok' | 'failed'; readonly seconds: number }>('ferry.cc.migration.step');

/** A migration item ended on its source NC: outcome, and its stats when it completed. */
export const ncMigrationEnded = channel<{
  readonly outcome: string; readonly elapsedMs?: number; readonly downtimeMs?: number; readonly bytesTransferred?: number;
}>('ferry.nc.migration.ended');
