import { describe, expect, it } from 'vitest';
import { VIR } from '../../../../nc/hypervisor/libvirt/ffi.js';
import { completedStatsOf, progressOf } from '../../../../nc/hypervisor/libvirt/jobStats.js';

const ids = { migrationId: 'm-1', id: 'i-1' };
const T = VIR.JOB_TYPE;

describe('progressOf', () => {
  it('maps a running job\'s data counters', () => {
    const rec = { type: T.UNBOUNDED, fields: { data_total: 100, data_processed: 40, data_remaining: 60, memory_iteration: 2 } };
    expect(progressOf(rec, ids)).toEqual({ ...ids, bytesTotal: 100, bytesTransferred: 40, bytesRemaining: 60, iteration: 2 });
  });

  it('falls back to the memory counters', () => {
    const rec = { type: T.BOUNDED, fields: { memory_total: 10, memory_processed: 3, memory_remaining: 7 } };
    expect(progressOf(rec, ids)).toMatchObject({ bytesTotal: 10, bytesTransferred: 3, bytesRemaining: 7, iteration: 0 });
  });

  it.each([T.NONE, T.COMPLETED, T.FAILED, T.CANCELLED])('is undefined for job type %i', (type) => {
    expect(progressOf({ type, fields: { data_total: 1 } }, ids)).toBeUndefined();
  });
});

describe('completedStatsOf', () => {
  it('reads time, downtime, bytes and iterations of a completed job', () => {
    const rec = { type: T.COMPLETED, fields: { time_elapsed: 550, downtime: 17, data_processed: 623_000, memory_iteration: 2 } };
    expect(completedStatsOf(rec, ids, 800)).toEqual({ ...ids, elapsedMs: 550, downtimeMs: 17, bytesTransferred: 623_000, iterations: 2 });
  });

  it('uses the measured wall time when libvirt kept no completed job', () => {
    expect(completedStatsOf(undefined, ids, 800)).toEqual({ ...ids, elapsedMs: 800, downtimeMs: 0, bytesTransferred: 0, iterations: 0 });
    expect(completedStatsOf({ type: T.NONE, fields: { time_elapsed: 5 } }, ids, 9).elapsedMs).toBe(9);
  });
});
