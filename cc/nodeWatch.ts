/**
 * The CC's end of the node watch (shared/protocol/nodeWatch.ts): one WebSocket per NC, opened at the
 * first check and kept, over the same mutual TLS as the CC's calls. A check sends the version of the
 * NC's report the CC holds (if any) and brings back either "still that one" or the NC's report. Whenever the watch
 * cannot answer (no connection yet, an NC without the watch, the connection lost) the answer is
 * `unavailable` and the keeper asks with the ordinary describe, so the watch only ever makes a poll
 * cheaper, never different. After a failed open the host is left to describes for `retryMs` (a
 * refused connection, nothing listening yet, is tried again at the next check).
 */
import type { AgentOptions } from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import WebSocket from 'ws';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { NcNode } from '../shared/protocol/ncProtocol.js';
import { parseWatchFrame, WATCH_MAX_ANSWER_BYTES, watchAnswerSchema, type WatchCheck } from '../shared/protocol/nodeWatch.js';

export type WatchOutcome =
  /** The NC's report is still the one the CC holds: the node is seen again. */
  | { readonly kind: 'same' }
  /** The NC's report is another one: here it is (as ncDescribeResource answers it). */
  | { readonly kind: 'report'; readonly report: NcNode }
  /** No answer within the call's bound: as a describe that timed out, the node is unreachable. */
  | { readonly kind: 'timeout' }
  /** The watch could not ask (why, for the log): the CC asks with the ordinary describe instead. */
  | { readonly kind: 'unavailable'; readonly detail: string };

/** What the keeper needs of the watch (narrow, STYLE habit 4); tests plug in a fake. */
export interface NodeWatch {
  /** `known`: the version of the report the CC holds; absent, the NC answers with its report. */
  check(host: string, known: string | undefined, timeoutMs: number): Promise<WatchOutcome>;
  /**
   * Calls `listener` when an NC's end closes its open watch connection (its process stopped or
   * crashed, its host went down gracefully): a push of "look at me now", not a verdict.
   */
  onLost(listener: (host: string) => void): void;
  close(): void;
}

export interface WsNodeWatchOptions {
  /** ws:// or wss:// URL of the NC's watch (NC_WATCH_PATH on its endpoint). */
  readonly urlOf: (host: string) => string;
  /** The CC's client TLS (its certificate, the cluster CA); absent under --insecure-plaintext. */
  readonly tls?: AgentOptions;
  readonly clock: Clock;
  readonly logger: Logger;
  /** After an open that failed or a connection lost, this long with describes before trying again. */
  readonly retryMs: number;
}

interface Waiting {
  readonly seq: number;
  readonly known: string | undefined;
  readonly timer: TimerHandle;
  readonly resolve: (o: WatchOutcome) => void;
}

interface Channel {
  ws?: WebSocket;
  opening?: Promise<WebSocket | undefined>;
  /** Until when (clock ms) the host is left to describes. */
  retryAt: number;
  seq: number;
  waiting?: Waiting;
}

/** How long an NC whose watch could not be opened (an older NC, one restarting) is polled with describes before the next try. */
export const WATCH_RETRY_MS = 60_000;

const unavailable = (detail: string): WatchOutcome => ({ kind: 'unavailable', detail });

export class WsNodeWatch implements NodeWatch {
  private readonly channels = new Map<string, Channel>();
  private readonly lostListeners: ((host: string) => void)[] = [];
  private closed = false;

  /**
   * The TLS context made once: handed key, certificate and CA, every connection would parse them again
   * (2,000 hosts' first round spent seconds there).
   */
  private readonly secureContext: SecureContext | undefined;

  constructor(private readonly o: WsNodeWatchOptions) {
    this.secureContext = o.tls ? createSecureContext(o.tls) : undefined;
  }

  async check(host: string, known: string | undefined, timeoutMs: number): Promise<WatchOutcome> {
    if (this.closed) return unavailable('the CC is stopping');
    let ch = this.channels.get(host);
    if (!ch) {
      ch = { retryAt: 0, seq: 0 };
      this.channels.set(host, ch);
    }
    if (ch.waiting) return unavailable('a check is already waiting for its answer');
    const ws = ch.ws ?? (this.o.clock.now() < ch.retryAt ? undefined : await (ch.opening ??= this.open(host, ch, timeoutMs)));
    if (!ws) return unavailable('no watch connection to this NC');
    if (ch.waiting) return unavailable('a check is already waiting for its answer');
    const seq = ++ch.seq;
    return new Promise<WatchOutcome>((resolve) => {
      const timer = this.o.clock.setTimer(timeoutMs, () => {
        if (ch.waiting?.seq !== seq) return;
        ch.waiting = undefined;
        // The NC stopped answering: drop the connection (a late answer must not count for a later check).
        this.drop(host, ch, 0);
        resolve({ kind: 'timeout' });
      });
      ch.waiting = { seq, known, timer, resolve };
      const message: WatchCheck = known === undefined ? { check: seq } : { check: seq, known };
      ws.send(JSON.stringify(message), (err) => {
        if (err && ch.waiting?.seq === seq) this.settle(ch, unavailable(`could not send the check: ${err.message}`));
      });
    });
  }

  onLost(listener: (host: string) => void): void {
    this.lostListeners.push(listener);
  }

  /** Closes every connection; checks from here on are `unavailable`. */
  close(): void {
    this.closed = true;
    for (const [host, ch] of this.channels) this.drop(host, ch, 0);
  }

  private settle(ch: Channel, outcome: WatchOutcome): void {
    const w = ch.waiting;
    if (!w) return;
    ch.waiting = undefined;
    w.timer.cancel();
    w.resolve(outcome);
  }

  /** Forgets the connection (closing it), answers a waiting check `unavailable`, and leaves the host to describes for `retryMs`. */
  private drop(host: string, ch: Channel, retryMs: number): void {
    const ws = ch.ws;
    ch.ws = undefined;
    ch.retryAt = this.o.clock.now() + retryMs;
    if (ws && ws.readyState !== WebSocket.CLOSED) ws.terminate();
    this.settle(ch, unavailable(`the watch connection to ${host} closed`));
  }

  private open(host: string, ch: Channel, timeoutMs: number): Promise<WebSocket | undefined> {
    return new Promise<WebSocket | undefined>((resolve) => {
      const ws = new WebSocket(this.o.urlOf(host), {
        ...(this.secureContext ? { secureContext: this.secureContext, rejectUnauthorized: true } : {}), perMessageDeflate: false, maxPayload: WATCH_MAX_ANSWER_BYTES, handshakeTimeout: timeoutMs,
      });
      const failed = (detail: string, retryMs = this.o.retryMs): void => {
        ch.opening = undefined;
        ch.retryAt = this.o.clock.now() + retryMs;
        this.o.logger.debug({ host, detail }, 'node watch: could not open; polling this NC with describes for now');
        ws.removeAllListeners();
        ws.on('error', () => undefined);
        ws.terminate();
        resolve(undefined);
      };
      ws.once('unexpected-response', (_req, res) => failed(`the NC answered the upgrade ${res.statusCode ?? '?'} ${String(res.headers['x-ferry-error'] ?? '')}`.trim()));
      // Nothing listening (the NC not started yet, or down): tried again at the next check, as a describe would be.
      ws.once('error', (err) => failed(err.message, (err as NodeJS.ErrnoException).code === 'ECONNREFUSED' ? 0 : this.o.retryMs));
      ws.once('open', () => {
        ws.removeAllListeners();
        ch.opening = undefined;
        if (this.closed) {
          ws.terminate();
          return resolve(undefined);
        }
        ch.ws = ws;
        ws.on('message', (data, isBinary) => this.answered(host, ch, ws, isBinary ? undefined : String(data)));
        ws.on('error', (err) => this.o.logger.debug({ host, err }, 'node watch connection failed'));
        ws.on('close', (code, reason) => {
          if (ch.ws !== ws) return;
          this.o.logger.debug({ host, code, reason: reason.toString() }, 'node watch connection closed');
          this.drop(host, ch, this.o.retryMs);
          if (!this.closed) for (const l of this.lostListeners) l(host);
        });
        resolve(ws);
      });
    });
  }

  private answered(host: string, ch: Channel, ws: WebSocket, text: string | undefined): void {
    if (ch.ws !== ws) return;
    const answer = parseWatchFrame(watchAnswerSchema, text);
    const w = ch.waiting;
    const a = answer.success ? answer.data : undefined;
    // The report comes exactly when the version is not the one the CC holds.
    const fits = a !== undefined && w !== undefined && a.seq === w.seq && (a.report === undefined) === (a.version === w.known);
    if (!fits) {
      const why = !answer.success ? `${answer.error.issues[0]?.path.join('.') ?? ''}: ${answer.error.issues[0]?.message ?? 'not JSON'}` : 'an answer to no check, or a report missing or unasked for';
      this.o.logger.warn({ host, detail: why }, 'node watch: the NC answered outside the contract; describing it instead');
      this.drop(host, ch, this.o.retryMs);
      return;
    }
    this.settle(ch, a.report === undefined ? { kind: 'same' } : { kind: 'report', report: { ...a.report, version: a.version } });
  }
}
