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
import type { CcNode } from '../shared/protocol/ccProtocol.js';
import type { NcNode } from '../shared/protocol/ncProtocol.js';
import type { NodeClient } from './nodeClient.js';
import type { NodeWatch } from './nodeWatch.js';
import { nodeTransition } from './nodeTransitions.js';
import { pollPace, type PollPace } from './pollPace.js';
import {
  applyReport, applySeen, bumpEpoch, findEntry, isStale, markUnhealthy, markUnreachable, onlySeenLater, positionOf, type ClusterView,
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
  /**
   * The node watch (cc/nodeWatch.ts): every refresh goes through it, asking whether the NC's report
   * the entry still holds is current (the NC sends its report only when it is not); where the watch
   * cannot ask, the refresh describes. Absent (the simulator, tests): every refresh describes.
   */
  readonly watch?: NodeWatch;
}

/** The version of an NC's report and the node the view made of it: good while the entry holds that very node. */
interface HeldReport {
  readonly version: string;
  readonly node: CcNode;
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
  /** Per host, the NC report the entry's node was made of, while nothing else has changed the entry. */
  private readonly held = new Map<string, HeldReport>();
  /** The CLC's last ccSetFencedHosts; undefined until the first since this CC started. */
  private fenced: ReadonlySet<string> | undefined;

  /** The poll's per-call bound, while polling (startPolling). */
  private pollTimeoutMs = 0;

  constructor(private readonly opts: ViewKeeperOptions) {
    this.view = opts.initial;
    // An NC that hung up its watch is looked at now, not at its next poll: a crashed NC is unreachable
    // within one call instead of up to one interval later (a restarted one is simply read again).
    opts.watch?.onLost((host) => {
      if (this.pollingOn && !this.stopped) void this.refresh(host, this.pollTimeoutMs);
    });
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
    /** Applies `fn` unless a change started since; returns the host's entry it made, if it did. */
    const ifCurrent = (fn: (v: ClusterView, now: number) => ClusterView): CcNode | undefined => {
      if (findEntry(this.view, host)?.epoch !== epoch) return undefined;
      const now = this.opts.clock.now();
      this.update(host, (v) => fn(v, now));
      return findEntry(this.view, host)?.node;
    };
    const held = this.held.get(host);
    const known = held !== undefined && held.node === entry.node ? held.version : undefined;
    const watched = this.opts.watch !== undefined
      ? this.opts.watch.check(host, known, timeoutMs).then((outcome): Promise<void> | void => {
        switch (outcome.kind) {
          case 'same': {
            const node = ifCurrent((v, now) => applySeen(v, host, now));
            if (node && known !== undefined) this.held.set(host, { version: known, node });
            return;
          }
          case 'report': return this.applyDescribed(host, outcome.report, ifCurrent);
          case 'timeout': ifCurrent((v, now) => markUnreachable(v, host, now)); return;
          case 'unavailable': return this.describe(host, timeoutMs, ifCurrent);
        }
      })
      : this.describe(host, timeoutMs, ifCurrent);
    const promise = watched.finally(() => {
      if (this.inFlight.get(host)?.promise === promise) this.inFlight.delete(host);
    });
    this.inFlight.set(host, { epoch, promise, startedAt: this.opts.clock.now() });
    return promise;
  }

  /** The whole report (ncDescribeResource), applied unless a change started since; its version is held for the watch. */
  private describe(host: string, timeoutMs: number, ifCurrent: (fn: (v: ClusterView, now: number) => ClusterView) => CcNode | undefined): Promise<void> {
    return this.opts.nodes.describe(host, { timeoutMs }).then(
      (report) => this.applyDescribed(host, report, ifCurrent),
      (e: unknown) => {
        if (!isFerryError(e)) this.opts.logger.error({ err: e, host }, 'refresh failed unexpectedly');
        else if (e.code !== 'NodeUnreachable') this.opts.logger.warn({ host, code: e.code, msg: e.message }, 'node answered its poll badly');
        ifCurrent((v, now) => markUnreachable(v, host, now));
      },
    );
  }

  private applyDescribed(host: string, report: NcNode, ifCurrent: (fn: (v: ClusterView, now: number) => ClusterView) => CcNode | undefined): void {
    if (report.host !== host) this.opts.logger.warn({ host, reported: report.host }, 'NC reports another host address than it is registered under');
    const node = ifCurrent((v, now) => applyReport(v, host, report, now));
    if (node && report.version !== undefined) this.held.set(host, { version: report.version, node });
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
    this.pollTimeoutMs = timeoutMs;
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
    this.opts.watch?.close();
  }
}
