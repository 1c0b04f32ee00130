/**
 * Runs move repair (moveRepair.ts): after every significant view change (a poll, a pushed event, the
 * CC's own changes) the pure rules pick the copies to forget; each is an ncTerminateInstance, at most
 * one per copy at a time, its answer applied to the view. A failing one is retried after a doubling
 * pause (an NC that refuses is not hammered), or at a later change once that pause is over. Nothing is kept
 * across a CC restart: the rules read everything they need from the NCs' records.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { isFerryError } from '../shared/errors/registry.js';
import { forgetKey, moveRepairs, type ForgetCopy } from './moveRepair.js';
import { failedPace, type Pace } from './retryPace.js';
import type { NodeClient } from './nodeClient.js';
import { applyInstanceState, listNodes } from './view.js';
import type { ViewKeeper } from './viewKeeper.js';

export interface MoveRepairDriverOptions {
  readonly keeper: ViewKeeper;
  readonly nodes: NodeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Timeout of the re-read of a node after a repair. */
  readonly refreshTimeoutMs: number;
  /** Nothing is forgotten until the CLC has said which hosts it fences (a restarted CC knows none). */
  readonly awaitFencedHosts?: boolean;
}

export class MoveRepairDriver {
  private readonly running = new Map<string, Promise<void>>();
  private readonly pace = new Map<string, Pace>();
  private unsubscribe: (() => void) | undefined;
  private readonly timers = new Set<TimerHandle>();
  private queued = false;
  private stopped = false;

  constructor(private readonly o: MoveRepairDriverOptions) {}

  /** Starts repairing; again after stop() (a CC replica's next term). */
  start(): void {
    if (this.unsubscribe) return;
    this.stopped = false;
    this.unsubscribe = this.o.keeper.subscribe(() => this.poke());
    this.poke();
  }

  poke(): void {
    if (!this.unsubscribe || this.stopped || this.queued) return;
    this.queued = true;
    queueMicrotask(() => {
      this.queued = false;
      if (!this.stopped) this.pass();
    });
  }

  /** Resolves once no repair is under way (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.queued || this.running.size > 0) {
      await new Promise<void>((r) => setImmediate(r));
      await Promise.all(this.running.values());
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const t of this.timers) t.cancel();
    this.timers.clear();
    await Promise.all(this.running.values());
  }

  private pass(): void {
    const { keeper, clock } = this.o;
    if (this.o.awaitFencedHosts === true && !keeper.fencedListHeard()) return;
    const now = clock.now();
    const due = new Set<string>();
    for (const f of moveRepairs(listNodes(keeper.get()), keeper.fencedHosts())) {
      const key = forgetKey(f);
      due.add(key);
      if (this.running.has(key) || (this.pace.get(key)?.until ?? 0) > now) continue;
      const task = this.forget(key, f).finally(() => this.running.delete(key));
      this.running.set(key, task);
    }
    for (const key of [...this.pace.keys()]) if (!due.has(key) && !this.running.has(key)) this.pace.delete(key);
  }

  /** Never rejects: a failure is logged and paced. */
  private async forget(key: string, f: ForgetCopy): Promise<void> {
    const { keeper, nodes, clock, logger } = this.o;
    try {
      await keeper.change(f.host, async () => {
        const r = await nodes.terminateInstance(f.host, f.instanceId, f.reason);
        keeper.update(f.host, (v) => applyInstanceState(v, f.host, f.instanceId, r.currentState));
      });
      logger.warn({ host: f.host, instanceId: f.instanceId, reason: f.reason, why: f.why }, 'move repair: an obsolete copy forgotten');
      this.pace.delete(key);
    } catch (e) {
      const { retryInMs, ...pace } = failedPace(this.pace.get(key), clock.now());
      this.pace.set(key, pace);
      if (!this.stopped) {
        const t = clock.setTimer(retryInMs, () => { this.timers.delete(t); this.poke(); });
        this.timers.add(t);
      }
      logger.warn({ host: f.host, instanceId: f.instanceId, code: isFerryError(e) ? e.code : 'InternalError', msg: (e as Error)?.message, retryInMs }, 'move repair: forgetting a copy failed');
    }
    await keeper.refresh(f.host, this.o.refreshTimeoutMs);
  }
}
