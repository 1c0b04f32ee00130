/**
 * The change gate's waits as events (gate.queued, gate.released). The gate lives in memory and
 * acknowledges nothing itself, so these are recorded beside it, not before it goes on: a failed
 * write is logged and never holds a request up.
 */
import type { Logger } from 'pino';
import type { GateObserver } from '../core/partitionGate.js';
import type { EventDraft } from './eventRecord.js';
import type { EventSink } from './eventSink.js';

const partitionOf = (ps: readonly string[]): { partition?: string } => (ps.length === 1 ? { partition: ps[0] as string } : {});

export function gateEventsObserver(sink: EventSink, logger: Logger): GateObserver {
  const record = (d: EventDraft): void => {
    sink.record([d]).catch((e: unknown) => logger.warn({ err: (e as Error).message, kind: d.kind }, 'event stream: a gate event was not recorded'));
  };
  return {
    queued: (w) => record({
      kind: 'gate.queued', actor: 'system', ...partitionOf(w.partitions),
      message: `${w.label} waits in the change gate (${w.kind}) for ${w.partitions.join(',')}`,
      details: { label: w.label, gateKind: w.kind, partitions: w.partitions.join(',') },
    }),
    released: (w) => record({
      kind: 'gate.released', actor: 'system', ...partitionOf(w.partitions),
      message: `${w.label} ${w.outcome} after ${w.waitedMs} ms in the change gate${w.reason !== undefined ? ` (${w.reason})` : ''}`,
      details: { label: w.label, gateKind: w.kind, outcome: w.outcome, waitedMs: String(w.waitedMs), ...(w.reason !== undefined ? { reason: w.reason } : {}) },
    }),
  };
}
