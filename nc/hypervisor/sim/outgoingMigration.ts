/**
 * Source side of one live migration: plan it with the pure model, then play the plan over a
 * MigrationChannel, each round paced by the injected clock (model time × timeScale). The domain
 * keeps running through pre-copy, is paused for the stop-and-copy round, and stops here only after
 * the destination confirms. Any failure or abort before that resumes it here. A domain its
 * administrator suspended stays suspended throughout (its tuning has no dirty pages) and arrives so.
 */
import type { Clock } from '../../../shared/clock.js';
import type { DomainSpec, MigrationProgress, MigrationStats, MigrationTarget } from '../driver.js';
import { HypervisorErrors } from '../errors.js';
import { isFerryError } from '../../../shared/errors/registry.js';
import { sleepOn } from '../clockSleep.js';
import { isPassThroughMigrationError, type MigrationChannel, type MigrationDialer } from './migrationChannel.js';
import { planMigration, type MigrationTuning } from './migrationModel.js';
import { finishSwitchover } from './switchoverSettle.js';

/** What the runner asks of the host; each step runs in the host's serial queue. */
export interface OutgoingHooks {
  /** Pauses the domain for the stop-and-copy round; returns its disk counter at the pause and whether it was suspended. */
  enterSwitchover(): Promise<{ diskCounter: number; suspended?: boolean }>;
  /** The migration did not complete: the domain runs here again. Must not throw. */
  resume(): Promise<void>;
  /** The destination confirmed: the domain is gone from here. Must not throw. */
  complete(): Promise<void>;
}

export interface OutgoingParams {
  readonly clock: Clock;
  readonly dialer: MigrationDialer;
  /** Wall time per unit of model time (tests use e.g. 0.01). */
  readonly timeScale: number;
  readonly sourceHost: string;
  readonly spec: DomainSpec;
  readonly target: MigrationTarget;
  readonly tuning: MigrationTuning;
  readonly signal: AbortSignal;
  readonly hooks: OutgoingHooks;
  readonly onProgress: (p: MigrationProgress) => void;
}

const MIB = 1024 * 1024;

/**
 * Runs the migration. Stats are in model time (the guest's experience), so they do not depend on
 * timeScale and are exact under a ManualClock.
 */
export async function runOutgoingMigration(p: OutgoingParams): Promise<MigrationStats> {
  const { migrationId } = p.target;
  const id = p.spec.id;
  const plan = planMigration({
    ...p.tuning,
    memoryMiB: p.spec.resources.memoryMiB,
    maxDowntimeMs: p.target.maxDowntimeMs ?? p.tuning.maxDowntimeMs,
  });
  let channel: MigrationChannel | undefined;
  const onAbort = (): void => channel?.abort('aborted by the source');
  p.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const hello = { migrationId, spec: p.spec, sourceHost: p.sourceHost };
    channel = await p.dialer.open(p.target.destinationUri, hello, p.target.credential);
    p.signal.throwIfAborted();
    const bytesTotal = p.spec.resources.memoryMiB * MIB;
    let transferred = 0;
    let final: { diskCounter: number; suspended?: boolean } = { diskCounter: 0 };
    for (const [i, round] of plan.iterations.entries()) {
      const isFinal = plan.converged && i === plan.iterations.length - 1;
      if (isFinal) final = await p.hooks.enterSwitchover();
      await channel.sendRound({ iteration: i + 1, bytes: round.bytes });
      await sleepOn(p.clock, round.durationMs * p.timeScale, p.signal);
      transferred += round.bytes;
      p.onProgress({
        migrationId, id, bytesTotal, bytesTransferred: transferred,
        bytesRemaining: plan.iterations[i + 1]?.bytes ?? 0, iteration: i + 1,
      });
    }
    if (!plan.converged) {
      throw HypervisorErrors.make('MigrationFailed', {
        migrationId, id,
        detail: `did not converge in ${plan.iterations.length} iterations (dirty rate ${p.tuning.dirtyRateMiBps} MiB/s, ` +
          `bandwidth ${p.tuning.bandwidthMbps} Mbit/s, max downtime ${p.target.maxDowntimeMs ?? p.tuning.maxDowntimeMs} ms)`,
      });
    }
    const settle = { clock: p.clock, dialer: p.dialer, destinationUri: p.target.destinationUri, hello, credential: p.target.credential, signal: p.signal };
    await finishSwitchover(settle, channel, final);
    await p.hooks.complete();
    return {
      migrationId, id,
      elapsedMs: plan.totalMs,
      downtimeMs: plan.downtimeMs,
      bytesTransferred: plan.bytesTransferred,
      iterations: plan.iterations.length,
    };
  } catch (e) {
    channel?.abort('migration failed at the source');
    await p.hooks.resume();
    throw toMigrationError(e, p.signal, migrationId, id);
  } finally {
    p.signal.removeEventListener('abort', onAbort);
  }
}

function toMigrationError(e: unknown, signal: AbortSignal, migrationId: string, id: string) {
  if (signal.aborted) return HypervisorErrors.make('MigrationAborted', { migrationId, id });
  if (isPassThroughMigrationError(e)) return e;
  // Anything else from the destination (even "unavailable") is a failed migration, never a sign
  // that the source hypervisor itself is down.
  const detail = isFerryError(e) ? `${e.code}: ${e.message}` : (e as Error)?.message ?? String(e);
  return HypervisorErrors.make('MigrationFailed', { migrationId, id, detail });
}
