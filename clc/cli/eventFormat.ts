/**
 * Event-stream rows (tab-separated, as the other commands print). Pure: readings in, lines out.
 *   EVENT  seq timestamp kind host|- instance|- migration|- actor|- message
 */
import type { StreamEventReading } from './responses.js';

const dash = (s: string): string => (s === '' ? '-' : s);

export function streamEventLine(e: StreamEventReading): string {
  return ['EVENT', e.eventSeq, e.timestamp, e.kind, dash(e.host), dash(e.instanceId), dash(e.migrationId), dash(e.actor), e.message].join('\t');
}
