/**
 * NC → CC hints (STYLE habit 4: a narrow interface, one wire adapter, a no-op). Whenever a migration,
 * an instance or the node changes, the NC tells its CC "look at me now" with ccNodeEvent. The CC
 * trusts a node's last report until its safety-net poll is overdue (cc/service.ts, freshMs), so a
 * hint must arrive: one the CC did not take (unreachable, timed out, busy) is sent again after a
 * back-off (0.25 s doubling to 5 s, on the NC's clock; each wait between half and all of that, spread
 * by the host's name: 2,000 NCs refused together by a restarted or starved CC must not come back in
 * step) until it is. Hints that say the same are
 * coalesced (at most one of each waits while one is in flight), and when more than `maxPending`
 * different ones wait (a long CC outage) they collapse into one hint about the whole node, so the
 * queue stays bounded and the CC still looks at everything. Never throws and never blocks the NC.
 */
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { isFerryError } from '../shared/errors/registry.js';
import type { Logger } from '../shared/log.js';
import { ccNodeEventRequestSchema, ccNodeEventResponseSchema } from '../shared/protocol/migrationProtocol.js';
import { TypedClient } from '../shared/protocol/typedClient.js';
import { LeaderRoute, wireRouteFailure } from '../shared/leader/leaderRouting.js';
import type { WireTransport } from '../shared/wire/transport.js';

export type CcNodeEvent = z.infer<typeof ccNodeEventRequestSchema>;

export interface CcNotifier {
  /** Never throws and never waits: the NC's work does not depend on the CC hearing this. */
  notify(event: CcNodeEvent): void;
}

export const NO_CC_NOTIFIER: CcNotifier = Object.freeze({ notify: () => undefined });

/** The CC's operation as the NC calls it (same name and schemas as in CC_OPS). */
const EVENT_OPS = { ccNodeEvent: { request: ccNodeEventRequestSchema, response: ccNodeEventResponseSchema } } as const;

export interface WireCcNotifierOptions {
  readonly transport: WireTransport;
  /** The CC's base URL, e.g. http://127.0.0.1:8774. */
  readonly ccUrl: string;
  /** The CC replicas' URLs (issue 21), ccUrl among them: hints go to the leader, following NotLeader. Absent: ccUrl alone. */
  readonly ccUrls?: readonly string[];
  readonly logger: Logger;
  readonly timeoutMs?: number;
  /** Hints sent at once (a slow CC must not pile up sockets); the others wait their turn. */
  readonly maxInFlight?: number;
  /** Different hints waiting beyond this collapse into one about the whole node. */
  readonly maxPending?: number;
  /** Paces the retries (the NC's clock; the simulator's manual one). */
  readonly clock?: Clock;
}

/**
 * How long a hint's call may take, connection and TLS handshake included. A CC that refuses or is
 * down fails at once, whatever this is; only a slow one waits it out. At 1 s, 500 NCs of a busy
 * supervision bench gave up on handshakes their CC was still making, sent again (359 hints in 30 s
 * of a steady cloud), and the CC timed out the abandoned handshakes: load made more load.
 */
export const DEFAULT_NOTIFY_TIMEOUT_MS = 5000;
export const NOTIFY_RETRY_FIRST_MS = 250;
export const NOTIFY_RETRY_MAX_MS = 5000;

/**
 * The wait before retry number `attempt` (1, 2, ...) of `host`'s hints: the doubling back-off's
 * ceiling, of which the host waits between half and all ("equal jitter"), the share fixed by its name
 * and the attempt. Deterministic (the simulator's runs replay), yet spread over the hosts of a cloud.
 */
export function notifyRetryDelayMs(host: string, attempt: number): number {
  const ceiling = Math.min(NOTIFY_RETRY_MAX_MS, NOTIFY_RETRY_FIRST_MS * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  const share = createHash('sha1').update(`${host}\n${attempt}`).digest().readUInt32BE(0) / 2 ** 32;
  return Math.round(ceiling / 2 + (ceiling / 2) * share);
}

const keyOf = (e: CcNodeEvent): string => `${e.kind} ${e.migrationId ?? ''} ${e.instanceId ?? ''}`;

export class WireCcNotifier implements CcNotifier {
  private readonly client: TypedClient<typeof EVENT_OPS>;
  private readonly clock: Clock;
  private readonly route: LeaderRoute;
  /** Hints not yet sent (or to be sent again), by what they say. */
  private readonly pending = new Map<string, CcNodeEvent>();
  private readonly inFlight = new Set<string>();
  /** Failed sends in a row (0: the last one was taken). */
  private failures = 0;
  private retry: TimerHandle | undefined;

  constructor(private readonly o: WireCcNotifierOptions) {
    this.client = new TypedClient(o.transport, EVENT_OPS);
    this.clock = o.clock ?? systemClock;
    this.route = new LeaderRoute(o.ccUrls ?? [o.ccUrl]);
  }

  notify(event: CcNodeEvent): void {
    this.enqueue(event);
    this.flush();
  }

  private enqueue(event: CcNodeEvent): void {
    this.pending.set(keyOf(event), event);
    if (this.pending.size <= (this.o.maxPending ?? 64)) return;
    this.o.logger.debug({ waiting: this.pending.size }, 'ccNodeEvent hints collapsed into one for the whole node');
    this.pending.clear();
    const node: CcNodeEvent = { host: event.host, kind: 'node' };
    this.pending.set(keyOf(node), node);
  }

  private flush(): void {
    if (this.retry !== undefined) return;
    for (const [key, event] of this.pending) {
      if (this.inFlight.size >= (this.o.maxInFlight ?? 16)) return;
      // One of a kind at a time: a change made while it is in flight goes out after it.
      if (this.inFlight.has(key)) continue;
      this.pending.delete(key);
      this.send(key, event);
    }
  }

  private send(key: string, event: CcNodeEvent): void {
    this.inFlight.add(key);
    const timeoutMs = this.o.timeoutMs ?? DEFAULT_NOTIFY_TIMEOUT_MS;
    void this.route.send((url) => this.client.call(url, 'ccNodeEvent', event, { timeoutMs })).then(
      () => {
        this.failures = 0;
      },
      (e: unknown) => {
        // A refusal (a hint that breaks the contract, a node the CC does not know) is not sent again;
        // no replica leading (an election under way) is waited out like an unreachable CC.
        if (!isFerryError(e) || (!e.retryable && wireRouteFailure(e).kind !== 'notLeader')) {
          this.o.logger.debug({ err: e, event }, 'ccNodeEvent refused');
          return;
        }
        this.o.logger.debug({ err: e, event }, 'ccNodeEvent not delivered: sent again after a back-off');
        if (!this.pending.has(key)) this.enqueue(event);
        this.backOff(event.host);
      },
    ).finally(() => {
      this.inFlight.delete(key);
      this.flush();
    });
  }

  private backOff(host: string): void {
    if (this.retry !== undefined) return;
    this.failures += 1;
    this.retry = this.clock.setTimer(notifyRetryDelayMs(host, this.failures), () => {
      this.retry = undefined;
      this.flush();
    });
  }

  /** Stops the retries (the NC is shutting down); hints still waiting are dropped. */
  close(): void {
    this.retry?.cancel();
    this.retry = undefined;
    this.pending.clear();
  }
}
