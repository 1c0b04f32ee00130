/**
 * Owns the CC's one current view and keeps it level with the NCs: polls every NC on an interval
 * (the safety net), refreshes on demand, and applies the results of the CC's own changes. Every
 * change to the view goes through set(), which logs node transitions and hands the view to the
 * cache writer. Refreshes never reject: a failed contact is recorded in the view instead.
 */
import { performance } from 'node:perf_hooks';
import { ccPollRound } from '../shared/metrics/channels.js';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { isFerryError } from '../shared/errors/registry.js';
import type { NodeClient } from './nodeClient.js';
import { nodeTransition } from './nodeTransitions.js';
import { pollPace, type PollPace } from './pollPace.js';
import {
  applyReport, bumpEpoch, findEntry, isStale, markUnhealthy, markUnreachable, onlySeenLater, positionOf, type ClusterView,
} from './view.js';

export interface ViewKeeperOptions {
  readonly initial: ClusterView;
  readonly nodes: NodeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * Receives every view whose nodes changed (the cache writer's save); `significant` is false when
   * the only news is that nodes were seen again, saying the same (a steady poll).
   */
  readonly onChange?: (view: ClusterView, significant: boolean) => void;
}

interface InFlight {
  readonly epoch: number;
  readonly promise: Promise<void>;
  /** When it was sent (the keeper's clock): a read waits for it until startedAt + its grace. */
  readonly startedAt: number;
}

const NONE_FENCED: ReadonlySet<string> = new Set();

export class ViewKeeper {
  private view: ClusterView;
  private readonly inFlight = new Map<string, InFlight>();
  private pollTimer: TimerHandle | undefined;
  private polling: Promise<void> | undefined;
  /** Ends the wait between two batches of a round at once (stopPolling, stop). */
  private stepWait: (() => void) | undefined;
  private stopped = false;
  /** Polling between startPolling and stopPolling (a CC replica polls only while it leads). */
  private pollingOn = false;
  private readonly listeners = new Set<(view: ClusterView) => void>();
  /** Instance id → host whose run answer was uncertain and could not be settled (runInstances.ts). */
  private readonly unsettled = new Map<string, string>();
  /** The CLC's last ccSetFencedHosts; undefined until the first since this CC started. */
  private fenced: ReadonlySet<string> | undefined;

  constructor(private readonly opts: ViewKeeperOptions) {
    this.view = opts.initial;
  }

  get(): ClusterView {
    return this.view;
  }

  unsettledRun(instanceId: string): string | undefined {
    return this.unsettled.get(instanceId);
  }

  markUnsettledRun(instanceId: string, host: string | undefined): void {
    if (host === undefined) this.unsettled.delete(instanceId);
    else this.unsettled.set(instanceId, host);
  }

  /** Whether the CLC has told this CC its fenced hosts since the CC started (it keeps them in memory only). */
  fencedListHeard(): boolean {
    return this.fenced !== undefined;
  }

  /** Hosts host HA fences or has fenced (ccSetFencedHosts): never a destination or a placement. */
  fencedHosts(): ReadonlySet<string> {
    return this.fenced ?? NONE_FENCED;
  }

  setFencedHosts(hosts: readonly string[]): void {
    this.fenced = new Set(hosts);
  }

  /** As if never told (a CC replica taking up leadership again: the list it heard in an earlier term may be stale). */
  forgetFencedHosts(): void {
    this.fenced = undefined;
  }

  hosts(): string[] {
    return this.view.entries.map((e) => e.node.host);
  }

  /**
   * Applies a pure update (view.ts) of `host`'s entry, and of no other, to the current view. A
   * steady poll (a node seen again, saying the same) is news only for the cache: reconciling the
   * whole cluster after each of them made a poll round cost O(n²) (1k hosts 375 ms, 4k hosts 5.4 s
   * in bench/pollRound.ts).
   */
  update(host: string, fn: (view: ClusterView) => ClusterView): void {
    const prev = this.view;
    const next = fn(prev);
    if (next === prev) return;
    this.view = next;
    const i = positionOf(next, host);
    const a = prev.entries[i];
    const b = next.entries[i];
    if (i < 0 || !a || !b || a === b) return;
    // Epoch bumps keep node objects as they were: nothing to log, cache or announce for those.
    const nodeChanged = a.node !== b.node;
    const significant = (nodeChanged && !onlySeenLater(a.node, b.node)) || a.plans !== b.plans || a.incoming !== b.incoming;
    if (nodeChanged) {
      const t = nodeTransition(a.node, b.node);
      if (t) this.opts.logger.info(t, 'node changed');
      this.opts.onChange?.(next, significant);
    }
    if (significant) for (const l of this.listeners) l(next);
  }

  /**
   * Calls `fn` after every change of a node or of its migrations, but not after a node was merely
   * seen again saying the same; returns the unsubscribe.
   */
  subscribe(fn: (view: ClusterView) => void): () => void {
    this.listeners.add(fn);
    return () => { this.listeners.delete(fn); };
  }

  /**
   * Runs one change the CC makes on `host`. The epoch moves before and after it, so a poll that
   * was in flight across the change is dropped instead of undoing the change's result.
   */
  async change<T>(host: string, fn: () => Promise<T>): Promise<T> {
    this.update(host, (v) => bumpEpoch(v, host));
    try {
      return await fn();
    } finally {
      this.update(host, (v) => bumpEpoch(v, host));
    }
  }

  /** Asks one NC for its state. Joins a refresh already in flight unless a change has happened since it started. */
  refresh(host: string, timeoutMs: number): Promise<void> {
    const entry = findEntry(this.view, host);
    if (!entry) return Promise.resolve();
    const running = this.inFlight.get(host);
    if (running && running.epoch === entry.epoch) return running.promise;
    const epoch = entry.epoch;
    const ifCurrent = (fn: (v: ClusterView, now: number) => ClusterView): void => {
      if (findEntry(this.view, host)?.epoch !== epoch) return;
      const now = this.opts.clock.now();
      this.update(host, (v) => fn(v, now));
    };
    const promise = this.opts.nodes.describe(host, { timeoutMs }).then(
      (report) => {
        if (report.host !== host) this.opts.logger.warn({ host, reported: report.host }, 'NC reports another host address than it is registered under');
        ifCurrent((v, now) => applyReport(v, host, report, now));
      },
      (e: unknown) => {
        if (!isFerryError(e)) this.opts.logger.error({ err: e, host }, 'refresh failed unexpectedly');
        else if (e.code !== 'NodeUnreachable') this.opts.logger.warn({ host, code: e.code, msg: e.message }, 'node answered its poll badly');
        ifCurrent((v, now) => markUnreachable(v, host, now));
      },
    ).finally(() => {
      if (this.inFlight.get(host)?.promise === promise) this.inFlight.delete(host);
    });
    this.inFlight.set(host, { epoch, promise, startedAt: this.opts.clock.now() });
    return promise;
  }

  async refreshHosts(hosts: readonly string[], timeoutMs: number): Promise<void> {
    await Promise.all(hosts.map((h) => this.refresh(h, timeoutMs)));
  }

  /** Refreshes, in parallel, the given hosts (default all) whose data is at least maxAgeMs old. */
  async refreshStale(maxAgeMs: number, timeoutMs: number, hosts: readonly string[] = this.hosts()): Promise<void> {
    const now = this.opts.clock.now();
    // One pass over the view, not a search per host: every operation calls this for every node.
    const entries = new Map(this.view.entries.map((e) => [e.node.host, e]));
    const stale = hosts.filter((h) => {
      const e = entries.get(h);
      return e !== undefined && isStale(e, now, maxAgeMs);
    });
    await this.refreshHosts(stale, timeoutMs);
  }

  /**
   * A read's refresh (the describes): asks again every node (or every one of `only`) whose data is at least maxAgeMs old, but
   * waits only for nodes that answer. A node whose last contact failed is not waited for (its refresh
   * goes on in the background); any other is waited for until graceMs after its refresh was sent (a
   * poll already under way counts from when it went out), so one stopped NC costs a read at most the
   * grace, once. A node never heard from since the CC started is waited for until its first refresh
   * ends. Returns the hosts the answer has no current word from (not reachable, or still silent):
   * their data is their last known state, and the caller marks them stale.
   */
  async refreshForRead(maxAgeMs: number, graceMs: number, timeoutMs: number, only?: readonly string[]): Promise<ReadonlySet<string>> {
    const now = this.opts.clock.now();
    const silent = new Set<string>();
    const timers: TimerHandle[] = [];
    const waits: Promise<void>[] = [];
    const asked = only === undefined ? undefined : new Set(only);
    for (const e of this.view.entries) {
      if (asked !== undefined && !asked.has(e.node.host)) continue;
      if (!isStale(e, now, maxAgeMs)) continue;
      const host = e.node.host;
      const refreshed = this.refresh(host, timeoutMs);
      if (e.checkedAt === null) {
        waits.push(refreshed);
        continue;
      }
      if (!e.node.reachable) continue;
      const left = (this.inFlight.get(host)?.startedAt ?? now) + graceMs - now;
      silent.add(host);
      const answered = refreshed.then(() => { silent.delete(host); });
      if (left <= 0) continue;
      waits.push(new Promise<void>((resolve) => {
        timers.push(this.opts.clock.setTimer(left, resolve));
        void answered.then(resolve, resolve);
      }));
    }
    try {
      await Promise.all(waits);
    } finally {
      for (const t of timers) t.cancel();
    }
    return new Set(this.view.entries.filter((e) => !e.node.reachable || silent.has(e.node.host)).map((e) => e.node.host));
  }

  /** An NC said its hypervisor is unavailable: stop scheduling there until a poll says otherwise. */
  noteUnhealthy(host: string): void {
    this.update(host, (v) => markUnhealthy(v, host));
  }

  /**
   * Polls every NC now, spread over at most half the interval (pollPace.ts), then a round every
   * `intervalMs` from the start of the one before, so each node is polled once per interval; a round
   * that takes longer is followed at once by the next (rounds never overlap).
   */
  startPolling(intervalMs: number, timeoutMs: number): void {
    if (this.pollingOn || this.stopped) return;
    this.pollingOn = true;
    const round = async (): Promise<void> => {
      const hosts = this.hosts();
      const t0 = performance.now();
      const startedAt = this.opts.clock.now();
      await this.pacedRound(hosts, timeoutMs, pollPace(hosts.length, intervalMs));
      ccPollRound.publish({ seconds: (performance.now() - t0) / 1000, hosts: hosts.length });
      const next = Math.max(0, startedAt + intervalMs - this.opts.clock.now());
      if (!this.stopped && this.pollingOn) this.pollTimer = this.opts.clock.setTimer(next, () => { this.polling = round(); });
    };
    // After the previous term's last round (stopPolling waits for it, but a start may come first).
    this.polling = this.polling === undefined ? round() : this.polling.then(round);
  }

  /**
   * One round: `pace.batch` polls every `pace.stepMs`, at most `pace.maxInFlight` unanswered (then it
   * waits for answers); stops sending when polling stops, and waits for what it sent.
   */
  private async pacedRound(hosts: readonly string[], timeoutMs: number, pace: PollPace): Promise<void> {
    const sent: Promise<void>[] = [];
    let unanswered = 0;
    const answered: (() => void)[] = [];
    const sending = (): boolean => this.pollingOn && !this.stopped;
    for (let i = 0; i < hosts.length; i += pace.batch) {
      if (i > 0 && !(await this.nextStep(pace.stepMs))) break;
      for (const h of hosts.slice(i, i + pace.batch)) {
        while (unanswered >= pace.maxInFlight && sending()) await new Promise<void>((r) => answered.push(r));
        if (!sending()) break;
        unanswered++;
        const poll = this.refresh(h, timeoutMs);
        sent.push(poll);
        void poll.finally(() => {
          unanswered--;
          answered.shift()?.();
        });
      }
      if (!sending()) break;
    }
    await Promise.all(sent);
  }

  /** Waits one step of a round; false when polling stopped meanwhile (stopPolling ends the wait at once). */
  private nextStep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (go: boolean): void => {
        this.stepWait = undefined;
        resolve(go && this.pollingOn && !this.stopped);
      };
      const timer = this.opts.clock.setTimer(ms, () => done(true));
      this.stepWait = () => { timer.cancel(); done(false); };
    });
  }

  /** Stops polling (the timer at once) and waits for the round under way; startPolling starts it again (issue 21: a replica that lost its leadership). */
  async stopPolling(): Promise<void> {
    this.pollingOn = false;
    this.pollTimer?.cancel();
    this.pollTimer = undefined;
    this.stepWait?.();
    await this.polling;
  }

  /** Resolves once no refresh is in flight (refreshes started meanwhile included). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()].map((f) => f.promise));
  }

  /** Stops polling and waits for refreshes in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pollTimer?.cancel();
    this.stepWait?.();
    await this.polling;
    await this.idle();
  }
}
