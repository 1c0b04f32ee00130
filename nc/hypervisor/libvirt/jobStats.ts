/** libvirt job statistics → Ferry's migration progress and final statistics (pure). */
import type { MigrationProgress, MigrationStats } from '../driver.js';
import { VIR } from './ffi.js';
import type { JobStatsRecord } from './libvirtApi.js';

export interface MigrationIds {
  readonly migrationId: string;
  readonly id: string;
}

/** Progress of a running job; undefined when no job runs (not started yet, or already over). */
export function progressOf(rec: JobStatsRecord, ids: MigrationIds): MigrationProgress | undefined {
  if (rec.type !== VIR.JOB_TYPE.BOUNDED && rec.type !== VIR.JOB_TYPE.UNBOUNDED) return undefined;
  const f = rec.fields;
  return {
    ...ids,
    bytesTotal: f.data_total ?? f.memory_total ?? 0,
    bytesTransferred: f.data_processed ?? f.memory_processed ?? 0,
    bytesRemaining: f.data_remaining ?? f.memory_remaining ?? 0,
    iteration: f.memory_iteration ?? 0,
  };
}

/**
 * Final statistics from a COMPLETED job record. `wallMs` (measured around the call) stands in
 * when libvirt did not report the elapsed time.
 */
export function completedStatsOf(rec: JobStatsRecord | undefined, ids: MigrationIds, wallMs: number): MigrationStats {
  const f = rec?.type === VIR.JOB_TYPE.COMPLETED ? rec.fields : {};
  return {
    ...ids,
    elapsedMs: f.time_elapsed ?? wallMs,
    downtimeMs: f.downtime ?? 0,
    bytesTransferred: f.data_processed ?? f.memory_processed ?? 0,
    iterations: f.memory_iteration ?? 0,
  };
}
