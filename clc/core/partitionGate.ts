/**
 * Runs the pure change gate (gate.ts) for the whole CLC: one state that admin requests and host HA's
 * changes share, tickets as promises, deadlines on the injected clock, refusals as PartitionBusy.
 * Tickets are taken per request through requestGate.ts, which also makes sure no change reaches a
 * CC without one.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import { gateWait } from '../../shared/metrics/channels.js';
import {
  DEFAULT_GATE_LIMITS, EMPTY_GATE, step, waitingByPartition,
  type GateEffect, type GateEvent, type GateKind, type GateLimits, type GateState,
} from './gate.js';
import { ClcErrors } from './errors.js';

/** One request's place in the gate. */
export interface Ticket {
  readonly kind: GateKind;
  readonly label: string;
  /** Narrows the claim to `partitions` when given, then resolves once granted; rejects with PartitionBusy. */
  ready(partitions?: readonly string[]): Promise<void>;
  /** Keeps only these of the claimed partitions (after a routing read); others' waiters may go on. */
  narrow(partitions: readonly string[]): void;
  /** Granted, and `partition` is still claimed: changes to it may be sent. */
  holds(partition: string): boolean;
  /**
   * Before this request sends its first change into `partition`: a request that queued waits until
   * every granted request that queued before it in that partition has sent its own (or left), so
   * queued changes reach the CC in the order they queued, not in the order their reads finished.
   */
  sendTurn(partition: string): Promise<void>;
  /** Leaves the gate, granted or not; idempotent. */
  leave(): void;
}

/** Told when a change starts waiting and when a waiting (or refused) one leaves: the event stream's gate events. */
export interface GateObserver {
  queued(w: { readonly label: string; readonly kind: GateKind; readonly partitions: readonly string[] }): void;
  released(w: { readonly label: string; readonly kind: GateKind; readonly outcome: 'admitted' | 'refused'; readonly waitedMs: number; readonly partitions: readonly string[]; readonly reason?: string }): void;
}

interface Entry {
  readonly label: string;
  /** It waited (the observer was told): its release is told too. */
  queued?: boolean;
  readonly partitions: readonly string[];
  status: 'waiting' | 'granted' | 'refused' | 'left';
  readonly kind: GateKind;
  /** When it entered (the clock's time): how long it waited is reported for metrics. */
  readonly enteredAt: number;
  readonly granted: Promise<void>;
  /** Partitions it has sent a change into (its turn there is over). */
  readonly sent: Set<string>;
  resolve(): void;
  reject(e: Error): void;
  timer?: TimerHandle;
}

export interface PartitionGateOptions {
  readonly clock: Clock;
  readonly limits?: GateLimits;
  readonly logger?: Logger;
  readonly observer?: GateObserver;
}

export class PartitionGate {
  private state: GateState = EMPTY_GATE;
  private nextId = 1;
  private readonly entries = new Map<number, Entry>();
  /** Requests waiting for their turn to send (sendTurn), checked whenever an earlier one sends or goes. */
  private turnWaiters: { readonly id: number; readonly partition: string; readonly resolve: () => void }[] = [];
  private readonly clock: Clock;
  private readonly logger: Logger | undefined;
  private readonly observer: GateObserver | undefined;
  readonly limits: GateLimits;

  constructor(opts: PartitionGateOptions) {
    this.clock = opts.clock;
    this.limits = Object.freeze({ ...(opts.limits ?? DEFAULT_GATE_LIMITS) });
    this.logger = opts.logger;
    this.observer = opts.observer;
  }

  /** Takes a place in the gate now; the returned ticket's `ready()` says when the request may go on. */
  enter(kind: GateKind, label: string, partitions: readonly string[]): Ticket {
    const id = this.nextId++;
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const granted = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
    // A refused ticket whose request never awaits it must not become an unhandled rejection.
    granted.catch(() => {});
    const entry: Entry = { kind, label, partitions: [...partitions], status: 'waiting', enteredAt: this.clock.now(), granted, sent: new Set(), resolve, reject };
    this.entries.set(id, entry);
    this.apply({ type: 'enter', id, kind, label, partitions });
    // Said once per waiting request: an operator (and a test) sees what queues behind a DisableService.
    if (entry.status === 'waiting') {
      this.logger?.info({ label, kind, partitions }, 'a request waits in the change gate');
      entry.queued = true;
      this.observer?.queued({ label, kind, partitions });
    }

    const ticket: Ticket = {
      kind,
      label,
      ready: async (narrowTo) => {
        if (narrowTo) ticket.narrow(narrowTo);
        await entry.granted;
      },
      narrow: (ps) => {
        if (entry.status === 'waiting' || entry.status === 'granted') this.apply({ type: 'narrow', id, partitions: ps });
        this.wakeTurns();
      },
      holds: (p) => entry.status === 'granted' && (this.state.tickets.find((t) => t.id === id)?.partitions.includes(p) ?? false),
      sendTurn: async (p) => {
        if (entry.queued === true && !entry.sent.has(p) && this.earlierUnsent(id, p)) {
          await new Promise<void>((resolve) => this.turnWaiters.push({ id, partition: p, resolve }));
        }
        entry.sent.add(p);
        this.wakeTurns();
      },
      leave: () => {
        if (entry.status === 'left' || entry.status === 'refused') return;
        entry.status = 'left';
        entry.timer?.cancel();
        this.entries.delete(id);
        this.apply({ type: 'leave', id });
        this.wakeTurns();
      },
    };
    return ticket;
  }

  /**
   * Refuses every waiting ticket with `error()` (a leader that lost its lease, issue 21): none of them
   * ran or was acknowledged, so each client gets the refusal and retries at the new leader. Granted
   * tickets go on; their writes are refused by the store's fence. Returns how many were refused.
   */
  refuseWaiting(error: () => Error, reason: string): number {
    let refused = 0;
    for (const [id, entry] of [...this.entries]) {
      if (entry.status !== 'waiting') continue;
      entry.status = 'refused';
      entry.timer?.cancel();
      this.entries.delete(id);
      this.apply({ type: 'leave', id });
      gateWait.publish({ kind: entry.kind, outcome: 'refused', seconds: (this.clock.now() - entry.enteredAt) / 1000 });
      this.observer?.released({ label: entry.label, kind: entry.kind, outcome: 'refused', waitedMs: this.clock.now() - entry.enteredAt, partitions: entry.partitions, reason });
      entry.reject(error());
      refused++;
    }
    return refused;
  }

  /** Tickets waiting now, in one partition or in all. */
  waiting(partition?: string): number {
    const byPartition = waitingByPartition(this.state);
    if (partition !== undefined) return byPartition.get(partition) ?? 0;
    return this.state.tickets.filter((t) => !t.granted).length;
  }

  /** A granted request that queued before `id` in `partition` and has not sent there yet. */
  private earlierUnsent(id: number, partition: string): boolean {
    for (const [other, e] of this.entries) {
      if (other >= id) continue;
      if (e.queued === true && e.status === 'granted' && !e.sent.has(partition) && this.claims(other, partition)) return true;
    }
    return false;
  }

  private claims(id: number, partition: string): boolean {
    return this.state.tickets.find((t) => t.id === id)?.partitions.includes(partition) ?? false;
  }

  private wakeTurns(): void {
    if (this.turnWaiters.length === 0) return;
    const still: typeof this.turnWaiters = [];
    for (const w of this.turnWaiters) {
      if (this.entries.has(w.id) && this.earlierUnsent(w.id, w.partition)) still.push(w);
      else w.resolve();
    }
    this.turnWaiters = still;
  }

  private apply(event: GateEvent): void {
    const { next, effects } = step(this.state, event, this.clock.now(), this.limits);
    this.state = next;
    for (const e of effects) this.perform(e);
  }

  private perform(e: GateEffect): void {
    const entry = this.entries.get(e.id);
    if (!entry) return;
    switch (e.type) {
      case 'grant':
        entry.status = 'granted';
        entry.timer?.cancel();
        gateWait.publish({ kind: entry.kind, outcome: 'admitted', seconds: (this.clock.now() - entry.enteredAt) / 1000 });
        if (entry.queued === true) this.observer?.released({ label: entry.label, kind: entry.kind, outcome: 'admitted', waitedMs: this.clock.now() - entry.enteredAt, partitions: entry.partitions });
        // Rare (DisableService, MigrateInstances) and what every other change then waits for: said.
        if (entry.kind === 'exclusive') {
          const partitions = this.state.tickets.find((t) => t.id === e.id)?.partitions ?? [];
          this.logger?.info({ label: entry.label, partitions }, 'an exclusive change holds its partitions');
        }
        entry.resolve();
        return;
      case 'deadline':
        entry.timer = this.clock.setTimer(e.at - this.clock.now(), () => this.apply({ type: 'tick' }));
        return;
      case 'refuse': {
        entry.status = 'refused';
        entry.timer?.cancel();
        gateWait.publish({ kind: entry.kind, outcome: 'refused', seconds: (this.clock.now() - entry.enteredAt) / 1000 });
        this.observer?.released({ label: entry.label, kind: entry.kind, outcome: 'refused', waitedMs: this.clock.now() - entry.enteredAt, partitions: [e.partition], reason: e.reason });
        this.entries.delete(e.id);
        const detail = e.reason === 'queue-full'
          ? `${this.limits.maxWaiting} requests already wait for it; retry later`
          : `it waited ${this.limits.maxWaitMs} ms; retry later`;
        this.logger?.warn({ partition: e.partition, reason: e.reason, blockedBy: e.blockedBy }, `a change to partition ${e.partition} was refused: ${detail}`);
        entry.reject(ClcErrors.make('PartitionBusy', { partition: e.partition, holder: e.blockedBy, detail, reason: e.reason }));
        return;
      }
    }
  }
}
