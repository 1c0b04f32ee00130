/**
 * Rows for live migration (euca-migrate-instances, euca-describe-migrations, euca-cancel-migration),
 * tab-separated like the others. Pure.
 *   MIGRATION  id partition source kind state created
 *   INSTANCE   id destination state progress elapsed downtime bytes-moved error
 *   UNPLACED   id reason
 * state of a MIGRATION: active, completed (every instance moved) or incomplete (finished, not all moved).
 */
import type { MigrationItemReading, MigrationReading, Reading } from './responses.js';

const row = (...cols: (string | number)[]): string => cols.join('\t');

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** 1536 → 1.5KiB; whole bytes below 1 KiB. */
export function formatBytes(n: number): string {
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${Math.round(v)}B` : `${v.toFixed(1)}${UNITS[u]}`;
}

/** 850 → 850ms, 12345 → 12.3s, 125000 → 2m05s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** Bytes moved so far (or in all, once finished), or undefined before the copy started. */
export function bytesMoved(i: MigrationItemReading): number | undefined {
  return i.stats?.bytesTransferred ?? i.progress?.bytesTransferred;
}

export function percentDone(i: MigrationItemReading): string {
  if (i.state === 'completed') return '100%';
  const p = i.progress;
  if (!p || p.bytesTotal <= 0) return '';
  return `${Math.min(100, Math.floor((100 * p.bytesTransferred) / p.bytesTotal))}%`;
}

export function migrationLine(m: MigrationReading): string {
  return row('MIGRATION', m.migrationId, m.partition, m.sourceHost, m.kind, m.state, m.createdAt);
}

export function migrationItemLine(i: MigrationItemReading): string {
  const moved = bytesMoved(i);
  return row('INSTANCE', i.instanceId, i.destination, i.state, percentDone(i),
    i.elapsedMs !== undefined ? formatDuration(i.elapsedMs) : '',
    i.stats ? formatDuration(i.stats.downtimeMs) : '',
    moved !== undefined ? formatBytes(moved) : '',
    i.error);
}

export function migrationLines(m: MigrationReading): string[] {
  return [migrationLine(m), ...m.itemSet.map(migrationItemLine)];
}

export function migrateLines(r: Reading<'MigrateInstances'>): string[] {
  return [
    ...migrationLines(r), ...r.unplacedSet.map((u) => row('UNPLACED', u.instanceId, u.reason)),
    // A drain's cold moves of stopped instances (issue 18).
    ...r.rehomedSet.map((m) => row('REHOMED', m.instanceId, m.destination)),
    ...r.notRehomedSet.map((m) => row('NOT-REHOMED', m.instanceId, m.reason)),
  ];
}
