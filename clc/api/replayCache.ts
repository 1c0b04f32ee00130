/**
 * Signatures already accepted, so the same signed request cannot be sent twice. An entry only needs
 * to live until its signature would be refused as expired anyway (signed time + allowed skew), so
 * the cache holds at most one skew window's worth of accepted requests; `maxEntries` bounds memory
 * even then. Only requests whose signature verified are recorded, so strangers cannot fill it.
 */
export type ReplayVerdict = 'recorded' | 'replayed' | 'full';

export class ReplayCache {
  /** Signature → epoch ms after which it is refused as expired (and may be forgotten). */
  private readonly seen = new Map<string, number>();

  constructor(private readonly maxEntries: number) {}

  /** Records `signature` as used until `forgetAfter`, unless it was already used. */
  check(signature: string, forgetAfter: number, now: number): ReplayVerdict {
    const until = this.seen.get(signature);
    if (until !== undefined && until >= now) return 'replayed';
    if (this.seen.size >= this.maxEntries) this.prune(now);
    // Full of live entries: refusing is safer than forgetting one, which would let it be replayed.
    if (this.seen.size >= this.maxEntries) return 'full';
    this.seen.set(signature, forgetAfter);
    return 'recorded';
  }

  get size(): number {
    return this.seen.size;
  }

  private prune(now: number): void {
    for (const [sig, until] of this.seen) if (until < now) this.seen.delete(sig);
  }
}
