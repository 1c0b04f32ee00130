/**
 * Repeated warnings, aggregated (pure: `now` is an argument). Per (code, peer), the first warning
 * opens a window and is written in full; the ones after it in that window are only counted, and
 * when the window ends one summary carries the count. So a flood of refusals writes at most two
 * lines per code and peer per window, and no count is lost. The pairs tracked are bounded: past
 * `maxKeys`, new peers share one pair per code (peer OTHER_PEERS), so varying the source address
 * (anyone on the host can use all of 127/8) adds no lines.
 */

/** The peer under which warnings from peers past `maxKeys` are counted. */
export const OTHER_PEERS = '(other peers)';

export interface DigestOptions {
  /** How long one window lasts, ms. */
  readonly windowMs: number;
  /** Distinct (code, peer) pairs with an open window, at most. */
  readonly maxKeys: number;
}

export const DEFAULT_DIGEST_OPTIONS: DigestOptions = Object.freeze({ windowMs: 60_000, maxKeys: 64 });

/**
 * What to do with one warning: write it in full (the first of its window, under `peer`, which is
 * OTHER_PEERS past maxKeys) or only count it; and the summaries of windows that ended before it.
 */
export interface DigestStep {
  readonly write: boolean;
  readonly peer: string;
  readonly summaries: readonly DigestSummary[];
}

export interface DigestSummary {
  readonly code: string;
  readonly peer: string;
  /** Warnings counted after the one written, in this window. */
  readonly repeats: number;
  /** When the window opened (its written warning) and when the last counted one came. */
  readonly from: number;
  readonly last: number;
}

interface Window {
  readonly code: string;
  readonly peer: string;
  readonly from: number;
  repeats: number;
  last: number;
}

export class WarningDigest {
  /** Open windows in the order they opened, so the ones due are at the front. */
  private readonly windows = new Map<string, Window>();
  /** Pairs with a peer of their own (not OTHER_PEERS) among the open windows. */
  private ownPeers = 0;

  constructor(readonly options: DigestOptions = DEFAULT_DIGEST_OPTIONS) {
    if (!(options.windowMs > 0 && options.maxKeys >= 1)) throw new RangeError('a digest needs windowMs > 0 and maxKeys >= 1');
  }

  /** One warning of `code` from `peer` at `now`; windows that ended by `now` are closed first. */
  note(code: string, peer: string, now: number): DigestStep {
    const summaries = this.due(now);
    let w = this.windows.get(keyOf(code, peer));
    if (w === undefined && this.ownPeers >= this.options.maxKeys) {
      peer = OTHER_PEERS;
      w = this.windows.get(keyOf(code, peer));
    }
    if (w !== undefined) {
      w.repeats++;
      w.last = now;
      return { write: false, peer, summaries };
    }
    this.windows.set(keyOf(code, peer), { code, peer, from: now, repeats: 0, last: now });
    if (peer !== OTHER_PEERS) this.ownPeers++;
    return { write: true, peer, summaries };
  }

  /** The windows that ended by `now`, closed: a summary for each that counted repeats. */
  due(now: number): DigestSummary[] {
    const out: DigestSummary[] = [];
    for (const [key, w] of this.windows) {
      if (now < w.from + this.options.windowMs) break;
      this.windows.delete(key);
      if (w.peer !== OTHER_PEERS) this.ownPeers--;
      if (w.repeats > 0) out.push({ code: w.code, peer: w.peer, repeats: w.repeats, from: w.from, last: w.last });
    }
    return out;
  }

  /** Closes every window now (at shutdown): a summary for each that counted repeats. */
  closeAll(): DigestSummary[] {
    return this.due(Number.POSITIVE_INFINITY);
  }

  /** When the oldest open window ends (the next due() with something to close), or undefined. */
  nextDueAt(): number | undefined {
    for (const w of this.windows.values()) return w.from + this.options.windowMs;
    return undefined;
  }
}

function keyOf(code: string, peer: string): string {
  return `${code}\u0000${peer}`;
}
