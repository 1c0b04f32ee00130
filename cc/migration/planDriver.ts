/**
 * Runs the coordinator: reconcile (pure, coordinator.ts), execute the effects through the node
 * client, apply each answer to the view, refresh the node touched, reconcile again. Passes are
 * coalesced and run one at a time (a mailbox); effects run concurrently, at most one per key, and
 * a repeated effect is paced (a failing NC is not hammered). Triggered by ccNodeEvent, by every
 * applied poll (the safety net), by each finished effect and by a timer at the next deadline.
 *
 * The driver's memory (marks.ts: phase start times, refusals, give-ups) lives only here. After a
 * CC restart a new driver starts with none: every plan resumes from what the NCs report, and phase
 * timers start again from `now` — timeouts then run from the restart, late rather than early.
 */
import { performance } from 'node:perf_hooks';
import { ccMigrationStep } from '../../shared/metrics/channels.js';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import { isFerryError } from '../../shared/errors/registry.js';
import { CcErrors } from '../errors.js';
import type { z } from 'zod';
import type { ccNodeEventRequestSchema, MigrationPlan, NcMigrateRequest } from '../../shared/protocol/migrationProtocol.js';
import type { NcMigrateResponse, NodeClient } from '../nodeClient.js';
import type { Mailbox } from '../../shared/mailbox.js';
import { applyIncoming, applyPlan, findEntry, migrationInputs, type ClusterView } from '../view.js';
import type { ViewKeeper } from '../viewKeeper.js';
import { reconcile } from './coordinator.js';
import { CredentialPrefetch } from './credentialPrefetch.js';
import type { CredentialIssuer } from './credentialIssuer.js';
import { effectHost, effectKey, toNcRequest, type Effect } from './effects.js';
import { credentialLifetimeMs, noteFailure, type CallFailure, type Marks } from './marks.js';
import { migrationNodes } from './nodes.js';
import { itemKey, plansOf } from './plans.js';
import type { Limits } from './settings.js';
import { failedPace, RETRY_MIN_MS, type Pace } from '../retryPace.js';

export type NodeEvent = z.infer<typeof ccNodeEventRequestSchema>;

/** Pause before an effect is sent again: after success (its answer should have moved things on) and, doubling, after failures. */
export { RETRY_MAX_MS, RETRY_MIN_MS } from '../retryPace.js';

export interface PlanDriverOptions {
  readonly keeper: ViewKeeper;
  readonly nodes: NodeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly limits: Limits;
  readonly uriTemplate: string;
  /** Re-plans go through the CC's placement queue: they never race a RunInstances for a slot. */
  readonly placement: Mailbox;
  /** Timeout of one NC call, and of the refresh that follows it. */
  readonly callTimeoutMs: number;
  /** Issues each prepare and commit its per-migration credential; absent only in a plaintext cloud. */
  readonly credentials?: CredentialIssuer;
  /**
   * No item starts (prepares) until the CLC has said which hosts host HA fences (ccSetFencedHosts):
   * a CC restarts knowing none, and a fenced host whose NC came back enabled looks like any other
   * (found by simulator seed 730). Items already under way go on; queued ones wait, they do not fail.
   */
  readonly awaitFencedHosts?: boolean;
}

/** A node's answer, applied to the view at once so the next pass sees it before any poll. */
export function applyAnswer(view: ClusterView, e: Effect, res: NcMigrateResponse): ClusterView {
  if (e.kind === 'prepareDestination') return applyIncoming(view, e.destination, e.migrationId, e.instanceId, res.incoming);
  if (e.kind === 'rollback' && e.side === 'destination') {
    return e.instanceId === undefined ? view : applyIncoming(view, e.host, e.migrationId, e.instanceId, res.incoming);
  }
  return res.plan ? applyPlan(view, effectHost(e), res.plan) : view;
}

/** The hosts an event concerns: the sender, and the other side of the migration it names. */
export function relatedHosts(view: ClusterView, ev: NodeEvent): string[] {
  const hosts = new Set([ev.host]);
  if (ev.migrationId !== undefined) {
    const plan = plansOf(migrationInputs(view)).find((p) => p.migrationId === ev.migrationId);
    if (plan) {
      hosts.add(plan.source);
      for (const i of plan.items) if (i.destination !== '' && (ev.instanceId === undefined || i.instanceId === ev.instanceId)) hosts.add(i.destination);
    }
    for (const r of findEntry(view, ev.host)?.incoming ?? []) if (r.migrationId === ev.migrationId) hosts.add(r.source);
  }
  return [...hosts].filter((h) => findEntry(view, h) !== undefined);
}

function asFailure(e: unknown): CallFailure {
  if (!isFerryError(e)) return { code: 'InternalError', message: e instanceof Error ? e.message : String(e) };
  return { code: e.code, message: e.message, ...(typeof e.fields.maybeDelivered === 'boolean' ? { maybeDelivered: e.fields.maybeDelivered } : {}) };
}

export class PlanDriver {
  private marks: Marks = new Map();
  private readonly pace = new Map<string, Pace>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly background = new Set<Promise<void>>();
  private passQueued = false;
  private timer: { readonly at: number; readonly handle: TimerHandle } | undefined;
  private unsubscribe: (() => void) | undefined;
  private started = false;
  private stopped = false;

  /** The issuer, signing each item's source credential while its destination prepares. */
  private readonly credentials: CredentialPrefetch | undefined;

  constructor(private readonly opts: PlanDriverOptions) {
    this.credentials = opts.credentials ? new CredentialPrefetch(opts.credentials, () => opts.clock.now()) : undefined;
  }

  /** Starts reconciling: now, after every view change, and at every deadline. Again after stop() (a CC replica's next term). */
  start(): void {
    if (this.started && !this.stopped) return;
    this.started = true;
    this.stopped = false;
    this.unsubscribe = this.opts.keeper.subscribe(() => this.poke());
    this.poke();
  }

  /** The driver's memory, for ccDescribeMigrations. */
  currentMarks(): Marks {
    return this.marks;
  }

  /** Asks for a reconcile soon; any number of pokes before it runs make one pass. */
  poke(): void {
    if (!this.started || this.stopped || this.passQueued) return;
    this.passQueued = true;
    // After the I/O of this turn of the event loop: a poll round's answers arrive one callback each,
    // and one pass over all of them replaces a pass (over every node) per answer.
    setImmediate(() => {
      this.passQueued = false;
      if (!this.stopped) this.pass();
    });
  }

  /** ccNodeEvent: look at the nodes concerned now, then reconcile. */
  nodeEvent(ev: NodeEvent): void {
    const hosts = relatedHosts(this.opts.keeper.get(), ev);
    // A refresh that changed anything pokes through the keeper's subscription. The extra pass here is
    // for migration hints only: a pass walks every node, and one per 'node' or 'instance' hint made a
    // burst of 10,000 NCs' start-up hints cost the CC a pass over 10,000 nodes each (issue 19).
    this.track(this.opts.keeper.refreshHosts(hosts, this.opts.callTimeoutMs).then(() => { if (ev.kind === 'migration') this.poke(); }));
  }

  /** Resolves once no pass, effect or event refresh is pending (for shutdown and tests). */
  async idle(): Promise<void> {
    for (;;) {
      await new Promise<void>((r) => setImmediate(r));
      if (!this.passQueued && this.running.size === 0 && this.background.size === 0) return;
      await Promise.all([...this.running.values(), ...this.background]);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.timer?.handle.cancel();
    this.timer = undefined;
    await Promise.all([...this.running.values(), ...this.background]);
  }

  private track(p: Promise<void>): void {
    const t = p.catch((e: unknown) => this.opts.logger.error({ err: e }, 'migration background task failed')).finally(() => this.background.delete(t));
    this.background.add(t);
  }

  private pass(): void {
    const { clock, keeper, limits } = this.opts;
    const now = clock.now();
    this.credentials?.sweep();
    const held = this.opts.awaitFencedHosts === true && !keeper.fencedListHeard();
    const result = reconcile({
      nodes: migrationNodes(keeper.get(), keeper.fencedHosts()), marks: this.marks, limits: held ? { ...limits, perCluster: 0 } : limits, now, fencedUnknown: held,
    });
    this.marks = result.marks;
    let next = result.wakeAt;
    const due = new Set<string>();
    for (const e of result.effects) {
      const key = effectKey(e);
      due.add(key);
      if (this.running.has(key)) continue;
      const pace = this.pace.get(key);
      if (pace && pace.until > now) {
        next = Math.min(next ?? pace.until, pace.until);
        continue;
      }
      this.dispatch(key, e);
    }
    // An effect no longer asked for has done its job (or is moot): forget its pacing.
    for (const key of [...this.pace.keys()]) if (!due.has(key) && !this.running.has(key)) this.pace.delete(key);
    this.arm(next, now);
  }

  private arm(at: number | undefined, now: number): void {
    if (this.timer && this.timer.at === at) return;
    this.timer?.handle.cancel();
    this.timer = undefined;
    if (at === undefined || this.stopped) return;
    const handle = this.opts.clock.setTimer(Math.max(0, at - now), () => {
      this.timer = undefined;
      this.poke();
    });
    this.timer = { at, handle };
  }

  private dispatch(key: string, e: Effect): void {
    const run = (): Promise<void> => this.execute(key, e);
    const task = (e.kind === 'replan' ? this.opts.placement.run(run) : run()).finally(() => {
      this.running.delete(key);
      this.poke();
    });
    this.running.set(key, task);
  }

  /**
   * Prepare (destination) and commit (source) carry a fresh credential for that side of the item, of
   * the generation the effect names (a re-join's re-issue) or the first.
   */
  private async withCredential(e: Effect, req: NcMigrateRequest): Promise<NcMigrateRequest> {
    const issuer = this.credentials;
    if (!issuer || (e.kind !== 'prepareDestination' && e.kind !== 'commit')) return req;
    const side = e.kind === 'commit' ? 'source' : 'destination';
    const item = { migrationId: e.migrationId, instanceId: e.instanceId, lifetimeMs: e.credentialLifetimeMs, generation: e.credentialGeneration ?? 0 };
    const source = { ...item, side: 'source', host: e.source, peerHost: e.destination } as const;
    try {
      const credential = await issuer.issue(side === 'source' ? source : { ...item, side: 'destination', host: e.destination, peerHost: e.source });
      // The commit's credential is signed while the destination prepares (CredentialPrefetch).
      if (side === 'destination') issuer.prefetch(source);
      return { ...req, credential } as NcMigrateRequest;
    } catch (err) {
      throw CcErrors.make('MigrationCredentialFailed', { side, migrationId: e.migrationId, instanceId: e.instanceId, detail: (err as Error)?.message ?? String(err) });
    }
  }

  /**
   * Signs the credentials of the items of `plan` that can start at once (up to its per-source limit)
   * while the source NC persists it: the destination's prepare and the source's commit then only send.
   */
  signAhead(plan: MigrationPlan): void {
    const issuer = this.credentials;
    if (!issuer) return;
    const first = plan.items.filter((i) => i.state === 'queued' && i.destination !== '' && i.cold !== true).slice(0, plan.limits.perSource);
    for (const item of first) {
      const base = { migrationId: plan.migrationId, instanceId: item.instanceId, lifetimeMs: credentialLifetimeMs(plan, item), generation: item.credentialGeneration ?? 0 };
      issuer.prefetch({ ...base, side: 'destination', host: item.destination, peerHost: plan.source });
      issuer.prefetch({ ...base, side: 'source', host: plan.source, peerHost: item.destination });
    }
  }

  /** Never rejects: a failure is logged, folded into the marks and paced. */
  private async execute(key: string, e: Effect): Promise<void> {
    const { keeper, nodes, clock, logger, uriTemplate, callTimeoutMs } = this.opts;
    const host = effectHost(e);
    const t0 = performance.now();
    const step = e.kind === 'rollback' ? `rollback-${e.side}` : e.kind;
    try {
      let credentialMs = 0;
      let callMs = 0;
      await keeper.change(host, async () => {
        const c0 = performance.now();
        const req = await this.withCredential(e, toNcRequest(e, uriTemplate));
        const n0 = performance.now();
        credentialMs = n0 - c0;
        const res = await nodes.migrate(host, req, { timeoutMs: callTimeoutMs });
        callMs = performance.now() - n0;
        keeper.update(host, (v) => applyAnswer(v, e, res));
      });
      const seconds = (performance.now() - t0) / 1000;
      ccMigrationStep.publish({ step, result: 'ok', seconds });
      logger.info({ effect: key, migrationId: e.migrationId, ms: Math.round(seconds * 1000), credentialMs: Math.round(credentialMs), callMs: Math.round(callMs) }, 'migration step done');
      this.pace.set(key, { until: clock.now() + RETRY_MIN_MS, failures: 0 });
    } catch (err) {
      ccMigrationStep.publish({ step, result: 'failed', seconds: (performance.now() - t0) / 1000 });
      const failure = asFailure(err);
      if ('instanceId' in e && e.instanceId !== undefined) {
        this.marks = noteFailure(this.marks, itemKey(e.migrationId, e.instanceId), e, failure, clock.now());
      }
      const { retryInMs, ...pace } = failedPace(this.pace.get(key), clock.now());
      this.pace.set(key, pace);
      const log = isFerryError(err) ? logger.warn.bind(logger) : logger.error.bind(logger);
      log({ effect: key, migrationId: e.migrationId, code: failure.code, msg: failure.message, retryInMs }, 'migration step failed');
    }
    // The answer is in the view already: the next step (the commit after a prepare) need not wait for
    // this re-read of the node, which picks up whatever else changed there (it pokes when it changes
    // the view). A repeat of this very effect is paced meanwhile (this.pace).
    this.track(keeper.refresh(host, callTimeoutMs));
  }
}
