/**
 * The simulated CC↔NC network: a WireTransport per caller that carries each call to the handlers
 * registered at its endpoint, on the shared clock. Faults come from the seed: a message (request
 * or reply) is lost, duplicated or delayed (delays reorder), links are partitioned, and a process
 * that is down refuses connections. Bodies are deep-copied, never shared; both sides validate them
 * against the protocol schemas (TypedClient / typedHandlers), as over HTTP.
 */
import type { Clock } from '../shared/clock.js';
import { isFerryError } from '../shared/errors/registry.js';
import { WireErrors } from '../shared/wire/errors.js';
import type { WireHandlers, WireTransport } from '../shared/wire/transport.js';
import type { WireObject } from '../shared/wire/xmlCodec.js';
import type { Incarnation } from './incarnation.js';
import type { Prng } from './prng.js';

/** How bad the network is right now (the fault schedule changes it). */
export interface NetConditions {
  readonly loss: number;
  readonly duplicate: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
}

export const CALM: NetConditions = Object.freeze({ loss: 0, duplicate: 0, minDelayMs: 1, maxDelayMs: 5 });

interface Endpoint {
  readonly handlers: WireHandlers;
  readonly life: Incarnation;
}

export interface NetTrace {
  (line: string): void;
}

export interface Delivery {
  readonly from: string;
  readonly to: string;
  readonly operation: string;
  readonly body: WireObject;
}

/** A non-coded error escaped a handler: a bug in the core (the real server would log it as one). */
export interface UncodedError {
  readonly to: string;
  readonly operation: string;
  readonly error: unknown;
}

export class SimNetwork {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly cut = new Set<string>();
  private conditions: NetConditions = CALM;
  private seq = 0;
  readonly onDeliver: ((d: Delivery) => void)[] = [];
  readonly uncoded: UncodedError[] = [];

  constructor(private readonly clock: Clock, private readonly rng: Prng, private readonly trace: NetTrace) {}

  /** Serves `handlers` as `name` for the life of `life` (a restart registers again). */
  serve(name: string, handlers: WireHandlers, life: Incarnation): void {
    this.endpoints.set(name, { handlers, life });
  }

  setConditions(c: NetConditions): void {
    this.conditions = c;
  }

  partition(a: string, b: string): void {
    this.cut.add(linkKey(a, b));
  }

  heal(): void {
    this.cut.clear();
    this.conditions = CALM;
  }

  isCut(a: string, b: string): boolean {
    return this.cut.has(linkKey(a, b));
  }

  /** The transport `from` calls through; `nameOf` maps an endpoint URL to a served name. */
  transport(from: string, life: Incarnation, nameOf: (endpoint: string) => string, defaultTimeoutMs: number): WireTransport {
    return { call: (endpoint, operation, body, opts) => this.call(from, life, nameOf(endpoint), endpoint, operation, body, opts?.timeoutMs ?? defaultTimeoutMs) };
  }

  private delay(): number {
    return this.rng.int(this.conditions.minDelayMs, this.conditions.maxDelayMs);
  }

  private call(
    from: string, life: Incarnation, to: string, endpoint: string, operation: string, body: WireObject, timeoutMs: number,
  ): Promise<WireObject> {
    const id = ++this.seq;
    const clock = life.clock(this.clock);
    return life.guard(new Promise<WireObject>((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        timer.cancel();
        fn();
      };
      const timer = clock.setTimer(timeoutMs, () => settle(() => reject(WireErrors.make('PeerTimeout', { peer: endpoint, operation, timeoutMs }))));
      const target = this.endpoints.get(to);
      if (!target || !target.life.isAlive) {
        this.trace(`net ${id} ${from}->${to} ${operation} refused`);
        clock.setTimer(this.delay(), () => settle(() => reject(WireErrors.make('PeerUnreachable', { peer: endpoint, detail: 'ECONNREFUSED' }))));
        return;
      }
      if (this.isCut(from, to) || this.rng.chance(this.conditions.loss)) {
        this.trace(`net ${id} ${from}->${to} ${operation} lost`);
        return;
      }
      const copies = this.rng.chance(this.conditions.duplicate) ? 2 : 1;
      for (let copy = 0; copy < copies; copy++) {
        const wire = structuredClone(body);
        const deliver = (): void => {
          // A paused server (a frozen CC replica) takes the request when it runs again.
          if (target.life.isPaused) {
            void target.life.whenRunning().then(() => deliver());
            return;
          }
          if (!target.life.isAlive) {
            this.trace(`net ${id} ${from}->${to} ${operation} reset`);
            settle(() => reject(WireErrors.make('PeerUnreachable', { peer: endpoint, detail: 'ECONNRESET' })));
            return;
          }
          this.trace(`net ${id} ${from}->${to} ${operation} delivered${copy > 0 ? ' (duplicate)' : ''}`);
          for (const fn of this.onDeliver) fn({ from, to, operation, body: wire });
          const handler = target.handlers[operation];
          const handled = handler
            ? handler(wire, { peer: from })
            : Promise.reject(WireErrors.make('UnknownOperation', { operation }));
          void handled.then(
            (res) => this.reply(id, from, to, target, life, () => settle(() => resolve(structuredClone(res)))),
            (e: unknown) => {
              if (!isFerryError(e)) this.uncoded.push({ to, operation, error: e });
              const fault = isFerryError(e) ? e : WireErrors.make('InternalError', { detail: String(e) });
              const err = WireErrors.make('RemoteFault', {
                peer: endpoint, operation, remoteCode: fault.code, remoteMessage: fault.message, remoteStatus: fault.status,
              });
              this.reply(id, from, to, target, life, () => settle(() => reject(err)));
            },
          );
        };
        this.clock.setTimer(this.delay(), () => {
          // A paused sender (a frozen VM) sends nothing: what it had not put on the wire leaves when it resumes.
          if (life.isPaused) {
            void life.whenRunning().then(() => deliver());
            return;
          }
          deliver();
        });
      }
    }));
  }

  /** The answer travels back: lost if the server died meanwhile, the link is cut, or by chance. */
  private reply(id: number, from: string, to: string, target: Endpoint, caller: Incarnation, deliver: () => void): void {
    if (!target.life.isAlive || !caller.isAlive || this.isCut(from, to) || this.rng.chance(this.conditions.loss)) {
      this.trace(`net ${id} reply lost`);
      return;
    }
    this.clock.setTimer(this.delay(), () => {
      if (caller.isAlive) deliver();
    });
  }
}

function linkKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}
