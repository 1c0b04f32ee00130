/**
 * The simulator's only source of randomness: mulberry32, a small 32-bit PRNG, so a seed fixes every
 * choice. Independent streams (schedule, network, latencies, ids) are forked by name, so removing
 * an event from the schedule while shrinking does not shift the network's draws.
 */
import type { IdSource } from '../shared/model/ids.js';

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[Math.floor(this.next() * items.length)];
  }

  /** A random subset (each item kept with probability p), in the original order. */
  subset<T>(items: readonly T[], p = 0.5): T[] {
    return items.filter(() => this.chance(p));
  }

  /** A new stream named `name`, derived from this seed (not from this stream's position). */
  static fork(seed: number, name: string): Prng {
    let h = (seed ^ 0x9e3779b9) >>> 0;
    for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
    return new Prng(h);
  }

  /** Eight hex digits per call, for the cores' id sources (e.g. the CC's migration ids). */
  hex8(): IdSource {
    return () => this.int(0, 0xffffffff).toString(16).padStart(8, '0');
  }
}
