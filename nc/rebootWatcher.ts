/**
 * Runs rebootFallback.ts for the NC: after a RebootInstances has asked a guest to reboot, it waits
 * for the hypervisor's `rebooted` event until the deadline (a timer on the injected clock), and
 * resets a guest that ignored the request. Each outcome is logged and recorded on the instance
 * (`lastReboot`), and the CC is told. One watch per instance: a second reboot request restarts it.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { HypervisorDriver } from './hypervisor/driver.js';
import { rebootFallbackStep, type RebootWatch } from './rebootFallback.js';

/** EC2 resets a guest that has not rebooted "within a few minutes"; a guest with an ACPI daemon reboots in seconds. */
export const DEFAULT_REBOOT_TIMEOUT_MS = 120_000;

export interface RebootWatcherDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly driver: Pick<HypervisorDriver, 'onEvent'>;
  readonly timeoutMs: number;
  /** Runs `task` in the NC's mailbox, one at a time with its other work. */
  readonly post: <T>(task: () => Promise<T>) => Promise<T>;
  /** Whether the instance still runs here as it did when asked (record, user's stop, migration, domain). */
  readonly stillRunning: (instanceId: string) => boolean;
  /** The hard reset (HypervisorDriver.reset through the NC's hypervisor link). */
  readonly reset: (instanceId: string) => Promise<void>;
  /** Records how it rebooted (persisted) and tells the CC. */
  readonly rebooted: (instanceId: string, at: number, how: 'guest' | 'reset') => Promise<void>;
}

interface Watching {
  readonly watch: RebootWatch;
  rebooted: boolean;
  timer: TimerHandle;
}

export class RebootWatcher {
  private readonly watching = new Map<string, Watching>();
  private off: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly d: RebootWatcherDeps) {}

  start(): void {
    this.off ??= this.d.driver.onEvent((e) => {
      if (e.kind !== 'rebooted') return;
      const w = this.watching.get(e.id);
      if (!w || w.rebooted) return;
      w.rebooted = true;
      this.d.post(() => this.settle(e.id)).catch((err: unknown) => this.d.logger.warn({ err, instanceId: e.id }, 'reboot outcome not recorded'));
    });
  }

  stop(): void {
    this.stopped = true;
    this.off?.();
    for (const w of this.watching.values()) w.timer.cancel();
    this.watching.clear();
  }

  /** The instance's guest was just asked to reboot. */
  watch(instanceId: string): void {
    if (this.stopped) return;
    this.watching.get(instanceId)?.timer.cancel();
    const askedAt = this.d.clock.now();
    const watch: RebootWatch = { instanceId, askedAt, deadline: askedAt + this.d.timeoutMs };
    const timer = this.d.clock.setTimer(this.d.timeoutMs, () => {
      this.d.post(() => this.settle(instanceId)).catch((err: unknown) => this.d.logger.warn({ err, instanceId }, 'reboot fallback failed'));
    });
    this.watching.set(instanceId, { watch, rebooted: false, timer });
  }

  /** The request did not reach the guest: nothing to follow up. */
  cancel(instanceId: string): void {
    this.watching.get(instanceId)?.timer.cancel();
    this.watching.delete(instanceId);
  }

  /** The instances whose reboot is still watched (for tests and the log). */
  watched(): string[] {
    return [...this.watching.keys()];
  }

  private async settle(instanceId: string): Promise<void> {
    const w = this.watching.get(instanceId);
    if (!w) return;
    const now = this.d.clock.now();
    const step = rebootFallbackStep(w.watch, { rebooted: w.rebooted, stillRunning: this.d.stillRunning(instanceId) }, now);
    if (step === 'wait') return;
    this.watching.delete(instanceId);
    w.timer.cancel();
    if (step === 'moot') {
      this.d.logger.info({ instanceId }, 'reboot not followed up: the instance no longer runs here as it did');
      return;
    }
    if (step === 'rebooted') {
      await this.d.rebooted(instanceId, w.watch.askedAt, 'guest');
      this.d.logger.info({ instanceId, afterMs: now - w.watch.askedAt }, 'the guest rebooted as asked (ACPI)');
      return;
    }
    // Logged once the reset is done and recorded on the instance: whoever reads the line finds both.
    await this.d.reset(instanceId);
    await this.d.rebooted(instanceId, w.watch.askedAt, 'reset');
    this.d.logger.warn({ instanceId, waitedMs: now - w.watch.askedAt }, 'the guest ignored the ACPI reboot request: reset (hard reboot)');
  }
}
