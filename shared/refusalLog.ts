/**
 * The one place where refused requests and closed connections are logged, aggregated per (code,
 * peer) by a WarningDigest: the first of a window is logged in full, the rest are counted into one
 * summary line when the window ends (a timer of the injected clock writes it), and close() writes
 * the counts still open at shutdown. Used by the CLC's sendError, the tiers' wire server and the
 * connection guard, so a flood of refusals costs a few lines a minute and no count is lost.
 */
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from './clock.js';
import { peerNameOf } from './net/peerName.js';
import { DEFAULT_DIGEST_OPTIONS, WarningDigest, type DigestOptions, type DigestSummary } from './warningDigest.js';

export type RefusalLevel = 'error' | 'warn' | 'debug';

export interface Refusal {
  readonly level: RefusalLevel;
  /** A registry code (AuthFailure, PeerNotAuthorized, ...) or the guard's (ConnectionEvicted, RequestTimeout, ...). */
  readonly code: string;
  /** Who: an address, or a certificate's role and name ("nc 127.0.1.1"). */
  readonly peer: string;
  /** The full line's message and fields (requestId, detail, ...), logged for the first of a window. */
  readonly msg: string;
  readonly fields?: Readonly<Record<string, unknown>>;
}

export interface RefusalLogOptions {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly digest?: DigestOptions;
}

export class RefusalLog {
  private readonly digest: WarningDigest;
  private readonly logger: Logger;
  private readonly clock: Clock;
  /** Level and message of each code's lines, for its summaries (bounded by the codes in use). */
  private readonly lastOf = new Map<string, { level: RefusalLevel; msg: string }>();
  private timer: { at: number; handle: TimerHandle } | undefined;

  constructor(o: RefusalLogOptions) {
    this.logger = o.logger;
    this.clock = o.clock;
    this.digest = new WarningDigest(o.digest ?? DEFAULT_DIGEST_OPTIONS);
  }

  record(r: Refusal): void {
    // Below the logger's level nothing would be written: nothing to count either.
    if (!this.logger.isLevelEnabled(r.level)) return;
    const step = this.digest.note(r.code, r.peer, this.clock.now());
    this.summarise(step.summaries);
    this.lastOf.set(r.code, { level: r.level, msg: r.msg });
    if (step.write) {
      this.logger[r.level]({ ...r.fields, code: r.code, peer: step.peer, repeatsCountedForMs: this.digest.options.windowMs }, r.msg);
    }
    this.arm();
  }

  /** Writes the counts of every open window now (at shutdown). */
  close(): void {
    this.timer?.handle.cancel();
    this.timer = undefined;
    this.summarise(this.digest.closeAll());
  }

  private summarise(summaries: readonly DigestSummary[]): void {
    for (const s of summaries) {
      const last = this.lastOf.get(s.code) ?? { level: 'warn' as const, msg: 'refused' };
      const seconds = Math.round((s.last - s.from) / 100) / 10;
      this.logger[last.level]({
        code: s.code, peer: s.peer, repeats: s.repeats, from: new Date(s.from).toISOString(), last: new Date(s.last).toISOString(),
      }, `${last.msg}: ${s.repeats} more ${s.code} from ${s.peer} within ${seconds} s of the one logged`);
    }
  }

  /** One timer, at the end of the oldest open window. */
  private arm(): void {
    const at = this.digest.nextDueAt();
    if (at === undefined || (this.timer !== undefined && this.timer.at <= at)) return;
    this.timer?.handle.cancel();
    const handle = this.clock.setTimer(Math.max(0, at - this.clock.now()), () => {
      this.timer = undefined;
      this.summarise(this.digest.due(this.clock.now()));
      this.arm();
    });
    this.timer = { at, handle };
  }
}

/**
 * How loud a refused request is: an internal error (500, a bug of ours) is an error; a refused
 * credential or certificate (401, 403) and the other server faults (a CC down, a partition busy)
 * are an operator's business; other client mistakes (bad parameters) are debug.
 */
export function refusalLevelOf(err: { readonly status: number; readonly clientFault: boolean }): RefusalLevel {
  if (err.status === 500) return 'error';
  return !err.clientFault || err.status === 401 || err.status === 403 ? 'warn' : 'debug';
}

/** The tiers' wire server's hook (mountWireService onRefused): one record per refused call, by the caller's certificate. */
export function wireRefusalReporter(refusals: RefusalLog): (err: { readonly code: string; readonly status: number; readonly clientFault: boolean; readonly message: string }, req: { readonly socket: Socket }) => void {
  return (err, req) => refusals.record({
    level: refusalLevelOf(err), code: err.code, peer: peerNameOf(req.socket), msg: 'call refused', fields: { status: err.status, detail: err.message },
  });
}
