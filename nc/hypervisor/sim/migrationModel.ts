/**
 * A pure model of QEMU's pre-copy live migration. Round 1 copies all guest memory while the guest
 * runs; each later round copies what the guest dirtied during the previous round. As soon as the
 * remaining set can be copied within `maxDowntimeMs`, the guest is paused and that last copy is the
 * downtime (the stop-and-copy round; it is counted in `iterations`).
 *
 * If no round fits within `maxIterations`, the migration does not converge and FAILS. QEMU without
 * auto-converge would keep iterating for ever; we stop at a bound so that a plan always ends and
 * the caller (the NC, then the coordinator) learns that this guest cannot move with these settings.
 *
 * Units: memory in MiB (2^20 bytes), bandwidth in Mbit/s (10^6 bits/s, as QEMU and NICs quote it),
 * dirty rate in MiB/s, times in ms. Bytes are whole bytes; durations are fractional ms.
 */

export interface MigrationModelInput {
  readonly memoryMiB: number;
  readonly bandwidthMbps: number;
  readonly dirtyRateMiBps: number;
  readonly maxDowntimeMs: number;
  readonly maxIterations: number;
}

export interface MigrationRound {
  readonly bytes: number;
  readonly durationMs: number;
}

export interface MigrationPlan {
  /** Every round sent, the stop-and-copy round last when converged. */
  readonly iterations: readonly MigrationRound[];
  /** The stop-and-copy round's duration; 0 when not converged (the guest was never paused). */
  readonly downtimeMs: number;
  /** Sum of all round durations: the job time, or the time wasted before failing. */
  readonly totalMs: number;
  readonly bytesTransferred: number;
  readonly converged: boolean;
}

/** The guest-independent knobs, as the daemon's flags give them. */
export type MigrationTuning = Omit<MigrationModelInput, 'memoryMiB'>;

export const MIGRATION_DEFAULTS: Readonly<MigrationTuning> = Object.freeze({
  // QEMU's default max-bandwidth is 128 MiB/s (~1074 Mbit/s); measured ~1080 Mbit/s on the lab host.
  bandwidthMbps: 1000,
  // A lightly loaded guest; the lab's busy guest rewrote 128 MiB/s.
  dirtyRateMiBps: 32,
  // QEMU's default downtime-limit.
  maxDowntimeMs: 300,
  // QEMU has no iteration bound; 30 rounds is far past where a converging migration ends.
  maxIterations: 30,
});

const MIB = 1024 * 1024;

/** Bandwidth in bytes per millisecond (Mbit/s × 10^6 / 8 / 1000). */
export function bandwidthBytesPerMs(bandwidthMbps: number): number {
  return bandwidthMbps * 125;
}

export function dirtyBytesPerMs(dirtyRateMiBps: number): number {
  return (dirtyRateMiBps * MIB) / 1000;
}

/** Preconditions; callers validate at their edge, so a violation here is a programming error. */
function assertInput(input: MigrationModelInput): void {
  const bad = (name: string): never => {
    throw new RangeError(`migration model: ${name} out of range in ${JSON.stringify(input)}`);
  };
  if (!Number.isFinite(input.memoryMiB) || input.memoryMiB < 0) bad('memoryMiB');
  if (!Number.isFinite(input.bandwidthMbps) || input.bandwidthMbps <= 0) bad('bandwidthMbps');
  if (!Number.isFinite(input.dirtyRateMiBps) || input.dirtyRateMiBps < 0) bad('dirtyRateMiBps');
  if (!Number.isFinite(input.maxDowntimeMs) || input.maxDowntimeMs < 0) bad('maxDowntimeMs');
  if (!Number.isInteger(input.maxIterations) || input.maxIterations < 1) bad('maxIterations');
}

export function planMigration(input: MigrationModelInput): MigrationPlan {
  assertInput(input);
  const memoryBytes = Math.ceil(input.memoryMiB * MIB);
  const bandwidth = bandwidthBytesPerMs(input.bandwidthMbps);
  const dirty = dirtyBytesPerMs(input.dirtyRateMiBps);

  const iterations: MigrationRound[] = [];
  let remaining = memoryBytes;
  for (let round = 0; round < input.maxIterations; round++) {
    const durationMs = remaining / bandwidth;
    iterations.push({ bytes: remaining, durationMs });
    if (durationMs <= input.maxDowntimeMs) return summarize(iterations, true);
    // A guest cannot dirty more pages than it has.
    remaining = Math.min(memoryBytes, Math.ceil(dirty * durationMs));
  }
  return summarize(iterations, false);
}

function summarize(iterations: readonly MigrationRound[], converged: boolean): MigrationPlan {
  let totalMs = 0;
  let bytesTransferred = 0;
  for (const r of iterations) {
    totalMs += r.durationMs;
    bytesTransferred += r.bytes;
  }
  const last = iterations[iterations.length - 1];
  return {
    iterations,
    downtimeMs: converged && last ? last.durationMs : 0,
    totalMs,
    bytesTransferred,
    converged,
  };
}
