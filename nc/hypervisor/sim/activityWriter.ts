/**
 * The visible activity of a simulated host on shared storage: every writeIntervalMs each running
 * domain rewrites `<storageDir>/<host>/<id>.disk` (a counter and a timestamp) and the host rewrites
 * `<storageDir>/<host>/heartbeat`. A neighbour that cannot reach this host's NC reads these mtimes
 * to tell whether the host still runs guests. Timers come from the injected clock.
 */
import type { Clock, TimerHandle } from '../../../shared/clock.js';
import type { Logger } from '../../../shared/log.js';
import type { DiskIo } from './diskIo.js';
import { decodeDiskCounter, diskPath, encodeDiskRecord, heartbeatPath } from './hostLedger.js';

export interface ActivityConfig {
  readonly host: string;
  readonly storageDir: string;
  readonly writeIntervalMs: number;
}

export class ActivityWriter {
  /** Per-domain counters; carried over a migration and read back from the file after a restart. */
  private readonly counters = new Map<string, number>();
  private timer: TimerHandle | undefined;
  private ticking: Promise<void> | undefined;
  private tickAgain = false;
  private stopped = false;

  constructor(
    private readonly config: ActivityConfig,
    private readonly clock: Clock,
    private readonly disk: DiskIo,
    private readonly log: Logger,
    /** Ids of the domains that run now (only those write). */
    private readonly running: () => string[],
  ) {}

  pathOf(id: string): string {
    return diskPath(this.config.storageDir, this.config.host, id);
  }

  counter(id: string): number {
    return this.counters.get(id) ?? 0;
  }

  setCounter(id: string, value: number): void {
    this.counters.set(id, value);
  }

  /** Picks up a stored domain's counter from its disk file; an unreadable file counts from 0. */
  async recover(id: string): Promise<void> {
    this.counters.set(id, decodeDiskCounter(await this.disk.read(this.pathOf(id)).catch(() => undefined)));
  }

  start(): void {
    if (this.timer || this.stopped) return;
    const schedule = (): void => {
      this.timer = this.clock.setTimer(this.config.writeIntervalMs, () => {
        void this.tick();
        schedule();
      });
    };
    void this.tick();
    schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    await this.ticking;
  }

  /**
   * One round of writes. Rounds never overlap (so a file's records land in order); ticks that fire
   * meanwhile fold into one more round, which then writes the latest time.
   */
  tick(): Promise<void> {
    if (this.ticking) {
      this.tickAgain = true;
      return this.ticking;
    }
    const rounds = async (): Promise<void> => {
      do {
        this.tickAgain = false;
        await this.writeRound(this.clock.now());
      } while (this.tickAgain && !this.stopped);
    };
    this.ticking = rounds().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  /** Writes one domain's record now (at start, so its file exists at once). Never throws. */
  write(id: string, now = this.clock.now()): Promise<void> {
    const counter = this.counter(id) + 1;
    this.counters.set(id, counter);
    return this.disk
      .write(this.pathOf(id), encodeDiskRecord({ id, host: this.config.host, counter, writtenAt: now }))
      .catch((e: unknown) => this.log.warn({ err: e, id }, 'disk write failed'));
  }

  /** The domain left this host: drop its counter and remove its file. Never throws. */
  async forget(id: string): Promise<void> {
    this.counters.delete(id);
    await this.ticking; // a write in flight must not recreate the file after we remove it
    await this.disk.remove(this.pathOf(id)).catch((e: unknown) => this.log.warn({ err: e, id }, 'could not remove disk file'));
  }

  private async writeRound(now: number): Promise<void> {
    const ids = this.running();
    const beat = JSON.stringify({ host: this.config.host, writtenAt: now, running: ids.length });
    const writes = ids.map((id) => this.write(id, now));
    writes.push(this.disk.write(heartbeatPath(this.config.storageDir, this.config.host), `${beat}\n`));
    for (const res of await Promise.allSettled(writes)) {
      if (res.status === 'rejected') this.log.warn({ err: res.reason }, 'heartbeat write failed');
    }
  }
}
