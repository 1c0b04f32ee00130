/**
 * NC → CC hints (STYLE habit 4: a narrow interface, one wire adapter, a no-op). Whenever a migration
 * or an instance changes, the NC tells its CC "look at me now" with ccNodeEvent; the CC polls
 * anyway, so a hint may be lost: calls are fire-and-forget, short, and failures are logged at debug.
 */
import type { z } from 'zod';
import type { Logger } from '../shared/log.js';
import { ccNodeEventRequestSchema, ccNodeEventResponseSchema } from '../shared/protocol/migrationProtocol.js';
import { TypedClient } from '../shared/protocol/typedClient.js';
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
  readonly logger: Logger;
  readonly timeoutMs?: number;
  /** Hints beyond this many in flight are dropped (a slow CC must not pile up sockets). */
  readonly maxInFlight?: number;
}

/** A hint is worth little after a second: the CC's next poll is not far behind. */
export const DEFAULT_NOTIFY_TIMEOUT_MS = 1000;

export class WireCcNotifier implements CcNotifier {
  private readonly client: TypedClient<typeof EVENT_OPS>;
  private inFlight = 0;

  constructor(private readonly o: WireCcNotifierOptions) {
    this.client = new TypedClient(o.transport, EVENT_OPS);
  }

  notify(event: CcNodeEvent): void {
    if (this.inFlight >= (this.o.maxInFlight ?? 16)) {
      this.o.logger.debug({ event }, 'ccNodeEvent dropped: too many in flight');
      return;
    }
    this.inFlight++;
    void this.client.call(this.o.ccUrl, 'ccNodeEvent', event, { timeoutMs: this.o.timeoutMs ?? DEFAULT_NOTIFY_TIMEOUT_MS })
      .catch((e: unknown) => this.o.logger.debug({ err: e, event }, 'ccNodeEvent not delivered (the CC polls anyway)'))
      .finally(() => { this.inFlight--; });
  }
}
