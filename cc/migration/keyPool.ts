/**
 * Key pairs made ahead: a migration's prepare and commit each need a fresh RSA pair, and making one
 * takes ~170 ms of CPU on a 2-core machine (issue 19 measured it on the critical path of every
 * item). The pool keeps up to `size` pairs generated in the background, one generation at a time,
 * and hands each out exactly once; when it runs dry (a drain of many items at once), the caller
 * waits for a fresh one rather than for the queue. No pair is ever given twice or kept after it is
 * taken. Node cannot sign certificates for EC keys through node-forge (RSA only), hence a pool
 * rather than cheaper keys.
 */
import type { Clock, TimerHandle } from '../../shared/clock.js';
import type { PemKeyPair } from './credentialIssuer.js';

/** The CC's pool refills after this long without a take (KeyPoolOptions.refillDelayMs). */
export const KEY_POOL_QUIET_MS = 2000;

export interface KeyPoolOptions {
  /** Makes one pair (node:crypto's generateKeyPair on libuv's pool for a CC; a fake in unit tests). */
  readonly generate: () => Promise<PemKeyPair>;
  /** Pairs kept ready. 0: no pool, every take generates. */
  readonly size: number;
  /** Told of a background generation that failed (the next take generates on demand). */
  readonly onError?: (e: unknown) => void;
  /**
   * Refill only once no pair was taken for this long (with `clock`): a migration takes its pairs at
   * prepare, and a refill started then would generate RSA on the same cores as that migration's
   * prepare and commit. 0 (the default): refill at once.
   */
  readonly refillDelayMs?: number;
  readonly clock?: Clock;
}

export class KeyPool {
  private readonly ready: PemKeyPair[] = [];
  private filling: Promise<void> | undefined;
  private quiet: TimerHandle | undefined;
  private stopped = false;

  constructor(private readonly opts: KeyPoolOptions) {}

  /** Starts filling the pool in the background. */
  start(): void {
    this.refill();
  }

  /** A pair no one else has had: from the pool if one is ready, else made now. */
  async take(): Promise<PemKeyPair> {
    const pair = this.ready.shift();
    this.refillWhenQuiet();
    return pair ?? this.opts.generate();
  }

  /** Pairs ready now. */
  size(): number {
    return this.ready.length;
  }

  /** Resolves once the pool is full or a generation failed (tests, bench). */
  async filled(): Promise<void> {
    while (this.filling) await this.filling;
  }

  /** Stops refilling and forgets the pairs made ahead. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.quiet?.cancel();
    this.quiet = undefined;
    await this.filled();
    this.ready.length = 0;
  }

  /** A take re-arms the quiet timer; the refill starts when it fires (at once without a delay). */
  private refillWhenQuiet(): void {
    const { refillDelayMs = 0, clock } = this.opts;
    if (refillDelayMs <= 0 || !clock) {
      this.refill();
      return;
    }
    this.quiet?.cancel();
    this.quiet = clock.setTimer(refillDelayMs, () => {
      this.quiet = undefined;
      this.refill();
    });
  }

  private refill(): void {
    if (this.filling || this.stopped || this.ready.length >= this.opts.size) return;
    this.filling = (async () => {
      try {
        while (!this.stopped && this.ready.length < this.opts.size) this.ready.push(await this.opts.generate());
      } catch (e) {
        this.opts.onError?.(e);
      } finally {
        this.filling = undefined;
      }
    })();
  }
}
