/**
 * Each simulated process reads time through its own clock: the shared ManualClock plus a seeded
 * offset and drift, like hosts whose NTP is a little off. `now()` (wall time) carries the skew and
 * jumps when a fault steps it (an NTP step); timers run on the monotonic clock (Node's timers do
 * not follow wall-clock steps), scaled by the drift. Every timer still lands on the one ManualClock,
 * so they fire in a deterministic order.
 */
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { Prng } from './prng.js';

export interface SkewSettings {
  /** Initial offsets are drawn from ±maxOffsetMs, rates from ±maxDriftPpm (0 and 0: no skew). */
  readonly maxOffsetMs: number;
  readonly maxDriftPpm: number;
}

export class SkewedClock implements Clock {
  private readonly epoch: number;

  constructor(private readonly base: Clock, private offsetMs: number, private readonly driftPpm: number) {
    this.epoch = base.now();
  }

  /** The skew now: offset plus drift accumulated since creation, in whole ms. */
  get skewMs(): number {
    return Math.round(this.offsetMs + ((this.base.now() - this.epoch) * this.driftPpm) / 1e6);
  }

  now(): number {
    return this.base.now() + this.skewMs;
  }

  /**
   * A fast clock (positive drift) counts `ms` sooner in true time. Whole-ms timers stay whole ms
   * (Node's timers have 1 ms resolution): otherwise every process's periodic timers would fire at
   * instants of their own, and a cloud of thousands of hosts would take ~50% more steps.
   */
  setTimer(ms: number, fn: () => void): TimerHandle {
    const scaled = ms / (1 + this.driftPpm / 1e6);
    return this.base.setTimer(Number.isInteger(ms) ? Math.round(scaled) : scaled, fn);
  }

  /** An NTP step: wall time jumps by `deltaMs`; timers already set are unaffected. */
  step(deltaMs: number): void {
    this.offsetMs += deltaMs;
  }
}

/** The clocks of one cloud's processes by name ('cc', 'nc <host>', 'hv <host>'): a host's clock outlives its process restarts. */
export class ClockSkews {
  private readonly clocks = new Map<string, SkewedClock>();

  constructor(private readonly base: Clock, private readonly rng: Prng, private readonly settings: SkewSettings) {}

  /** The named process's clock; drawn from the seed on first use (boot order is deterministic). */
  of(name: string): Clock {
    return this.skewed(name);
  }

  step(name: string, deltaMs: number): void {
    this.skewed(name).step(deltaMs);
  }

  /** Every clock's current skew, for the trace and for documented assumptions. */
  skews(): ReadonlyMap<string, number> {
    return new Map([...this.clocks].map(([k, c]) => [k, c.skewMs]));
  }

  private skewed(name: string): SkewedClock {
    let c = this.clocks.get(name);
    if (!c) {
      const { maxOffsetMs, maxDriftPpm } = this.settings;
      c = new SkewedClock(this.base, this.rng.int(-maxOffsetMs, maxOffsetMs), this.rng.int(-maxDriftPpm, maxDriftPpm));
      this.clocks.set(name, c);
    }
    return c;
  }
}
