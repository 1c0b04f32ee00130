/**
 * Runs the host-HA machines (hostHaMachine.ts): feeds them ticks and results one at a time (a
 * Mailbox), writes every step to the store before acting on it, and executes the effects through
 * the narrow interfaces (haProvider.ts) on bounded pools (workPool.ts). Level-based after Cluster
 * API's reconcile: each tick reads the store, takes `now` once, judges the storm per partition (and
 * any suspension per host), steps every host, writes once, then acts.
 */
import { haHealthCheck, haHeld, haPowerAction, haTransition, haWorkRefused } from '../../shared/metrics/channels.js';
import type { Clock } from '../../shared/clock.js';
import { Mailbox } from '../../shared/mailbox.js';
import type { Store } from '../../shared/store/store.js';
import type { ClcState } from '../state/clcStore.js';
import type { HaHostRef, HaProvider, HaServiceActions, RepairOutcome } from './haProvider.js';
import { appendHaEvents, type HaLogEvent, type HaSection } from './haState.js';
import { step, type HaContext } from './hostHaMachine.js';
import { ProbeOverlay } from './probeOverlay.js';
import { newHostHaRecord, type HaEffect, type HaEvent, type HealthOutcome, type HostHaRecord } from './hostHaState.js';
import { compileHaSettings, DEFAULT_HA_POOLS, type HaOperationKind, type HaPoolLimits } from './settings.js';
import { countedUnhealthy, DEFAULT_MAX_UNHEALTHY, formatMaxUnhealthy, judgeStorm, maxUnhealthySchema, unhealthyRangeSchema } from './stormGuard.js';
import { remediationFor, suspensionReason } from './suspension.js';
import { WorkPool } from './workPool.js';
import type { ExternalRemediator } from './externalRemediator.js';

/** The runner's view of the store: the HA section of clc.json. */
export interface HaSectionStore {
  read(): HaSection;
  update<R>(mutate: (ha: HaSection) => R): Promise<R>;
}

export function haSectionOf(store: Store<ClcState>): HaSectionStore {
  return { read: () => store.read().ha, update: (mutate) => store.update((d) => mutate(d.ha)) };
}

export interface HaRunnerOptions {
  readonly store: HaSectionStore;
  readonly provider: HaProvider;
  readonly actions: HaServiceActions;
  readonly clock: Clock;
  readonly pools?: Readonly<Record<HaOperationKind, HaPoolLimits>>;
  /** The host's partition's external remediator (strategy external), or undefined when none is configured. */
  readonly remediator?: (ref: HaHostRef) => ExternalRemediator | undefined;
  /**
   * Whether this CLC replica leads with a live lease (issue 21), read right before a fence agent or a
   * power cycle is started: a replica that does not lead powers nothing off and leaves the record as
   * it is (FENCING, its operation in flight), for the next leader to resume. Absent: always.
   */
  readonly leading?: () => boolean;
}

type Batch = ReadonlyMap<string, readonly HaEvent[]>;

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

function toLog(host: string, effects: readonly HaEffect[], at: number): HaLogEvent[] {
  const out: HaLogEvent[] = [];
  for (const e of effects) {
    if (e.kind === 'transition') out.push({ at, host, kind: 'transition', level: 'info', from: e.from, to: e.to, message: e.reason });
    else if (e.kind === 'alert') out.push({ at, host, kind: 'alert', level: e.level, message: e.message });
  }
  return out;
}

/** Metrics of one host's step (shared/metrics/channels.ts): its transitions, and a recovery or fence newly held back. */
function reportMetrics(before: HostHaRecord | undefined, after: HostHaRecord, effects: readonly HaEffect[]): void {
  for (const e of effects) if (e.kind === 'transition') haTransition.publish({ from: e.from, to: e.to });
  if (after.blocked && (before?.blocked?.target !== after.blocked.target || before.blocked.reason !== after.blocked.reason)) {
    haHeld.publish({ target: after.blocked.target });
  }
}

/** Per partition: its compiled settings and the storm verdict, as every step of a tick sees them. */
export function haContexts(ha: HaSection): Map<string, HaContext> {
  const out = new Map<string, HaContext>();
  const byPartition = new Map<string, HostHaRecord[]>();
  for (const r of Object.values(ha.hosts)) {
    const recs = byPartition.get(r.partition);
    if (recs) recs.push(r);
    else byPartition.set(r.partition, [r]);
  }
  for (const [partition, recs] of byPartition) {
    const cfg = ha.partitions[partition];
    const settings = compileHaSettings(ha.global.settings, cfg?.settings);
    const max = cfg?.maxUnhealthy ?? ha.global.maxUnhealthy;
    const range = cfg?.unhealthyRange ?? ha.global.unhealthyRange;
    const verdict = judgeStorm(partition, recs.map((r) => ({ state: r.state, startupOverdue: r.startupOverdue })), max === undefined ? DEFAULT_MAX_UNHEALTHY : maxUnhealthySchema.parse(max),
      range === undefined ? undefined : unhealthyRangeSchema.parse(range));
    const bound = range === undefined ? `maxUnhealthy ${max ?? formatMaxUnhealthy(DEFAULT_MAX_UNHEALTHY)}` : `unhealthyRange ${range}`;
    // Stable while the storm lasts (the allowance's reason carries the counts): an owed drain is held once, said once.
    const stormHold = verdict.allowance.allowed ? undefined : `storm protection: the unhealthy hosts of ${partition} are beyond ${bound}; owed drains wait`;
    out.set(partition, {
      settings, remediation: verdict.allowance, remediationIfNewlyUnhealthy: verdict.ifOneMore, strategy: cfg?.remediation?.strategy ?? 'fence',
      ...(stormHold !== undefined ? { stormHold } : {}),
    });
  }
  return out;
}

/** A host's context: its partition's, with any suspension of it (suspension.ts) folded in. */
export function hostContext(partitionCtx: HaContext, ha: HaSection, rec: HostHaRecord, now: number): HaContext {
  const remediation = remediationFor(partitionCtx.remediation, ha.suspended, rec, now);
  const newly = countedUnhealthy(rec) ? partitionCtx.remediation : (partitionCtx.remediationIfNewlyUnhealthy ?? partitionCtx.remediation);
  const remediationIfNewlyUnhealthy = remediationFor(newly, ha.suspended, rec, now);
  const suspended = suspensionReason(ha.suspended, rec, now);
  return { ...partitionCtx, remediation, remediationIfNewlyUnhealthy, ...(suspended !== undefined ? { suspended } : {}) };
}

export class HaRunner {
  readonly pools: Readonly<Record<HaOperationKind, WorkPool>>;
  private readonly mailbox = new Mailbox();
  private readonly background = new Set<Promise<unknown>>();
  /** Results waiting for the next step, by host (see deliverBatched). */
  private inbox = new Map<string, HaEvent[]>();
  private inboxRun: Promise<void> | undefined;
  /** Partitions whose last health check got no answer from the source (alerted once, until one does). */
  private readonly unansweredPartitions = new Set<string>();
  /** Probe bookkeeping ahead of the store (never written for itself: a restart re-checks health at once). */
  private readonly overlay = new ProbeOverlay();

  constructor(private readonly opts: HaRunnerOptions) {
    const limits = opts.pools ?? DEFAULT_HA_POOLS;
    this.pools = {
      health: new WorkPool('health', limits.health),
      activity: new WorkPool('activity', limits.activity),
      recovery: new WorkPool('recovery', limits.recovery),
      remediation: new WorkPool('remediation', limits.remediation),
      fence: new WorkPool('fence', limits.fence),
      power: new WorkPool('power', limits.power),
    };
  }

  /** Adds a record (INELIGIBLE) for every host not known yet. */
  syncHosts(refs: readonly HaHostRef[]): Promise<void> {
    return this.mailbox.run(async () => {
      const now = this.opts.clock.now();
      const missing = refs.filter((r) => !this.opts.store.read().hosts[r.host]);
      if (missing.length === 0) return;
      await this.opts.store.update((ha) => {
        for (const r of missing) ha.hosts[r.host] = newHostHaRecord(r.host, r.partition, now);
      });
    });
  }

  /** Switches HA on or off per host and partition as configured, then lets time pass for every host. */
  tick(): Promise<void> {
    return this.mailbox.run(() => {
      const ha = this.opts.store.read();
      const batch = new Map<string, HaEvent[]>();
      for (const rec of Object.values(ha.hosts)) {
        const on = (ha.partitions[rec.partition]?.enabled ?? false) && !ha.hostDisabled.includes(rec.host);
        const events: HaEvent[] = [];
        if (!on && rec.state !== 'DISABLED') events.push({ type: 'haDisabled', reason: ha.partitions[rec.partition]?.enabled ? 'HA disabled for the host' : 'HA disabled for the partition' });
        if (on && rec.state === 'DISABLED') events.push({ type: 'haEnabled' });
        events.push({ type: 'tick' });
        batch.set(rec.host, events);
      }
      return this.apply(batch);
    });
  }

  /** After a CLC restart: every host re-issues what was in flight and re-checks its health. */
  resume(): Promise<void> {
    return this.mailbox.run(() => this.apply(new Map(Object.keys(this.opts.store.read().hosts).map((h) => [h, [{ type: 'resumed' } as HaEvent]]))));
  }

  /** Asks the provider whether each host HA watches (or each of `only`) can be acted on; the verdicts are stepped together. */
  async evaluateEligibility(only?: readonly string[]): Promise<void> {
    const recs = Object.values(this.opts.store.read().hosts).filter((r) => r.state !== 'DISABLED' && (only === undefined || only.includes(r.host)));
    await Promise.all(recs.map(async (r) => {
      const ref = { host: r.host, partition: r.partition };
      const verdict = await this.opts.provider.isEligible(ref).catch((e: unknown) => ({ eligible: false, reason: `eligibility unknown: ${message(e)}` }));
      await this.deliverBatched(r.host, { type: 'eligibility', ...verdict });
    }));
  }

  /**
   * Asks the provider once, outside the machine, whether the host's NC answers now (FenceHost's
   * "up and healthy" check), within the partition's health-check timeout; any failure is "no".
   */
  async probeHealth(host: string): Promise<{ readonly healthy: boolean; readonly detail: string }> {
    const ha = this.opts.store.read();
    const rec = ha.hosts[host];
    const ctx = rec ? haContexts(ha).get(rec.partition) : undefined;
    if (!rec || !ctx) return { healthy: false, detail: 'unknown to HA' };
    const deadline = this.opts.clock.now() + ctx.settings.healthCheckTimeoutMs;
    return this.opts.provider.isHealthy({ host, partition: rec.partition }, deadline).catch((e: unknown) => ({ healthy: false, detail: message(e) }));
  }

  /** One event for one host (a result, or an operator's command: those may throw IllegalHaEventError). */
  deliver(host: string, event: HaEvent): Promise<void> {
    return this.mailbox.run(() => this.apply(new Map([[host, [event]]])));
  }

  /** Events for many hosts stepped together (one store write): switching HA on or off for a partition. */
  deliverAll(events: Batch): Promise<void> {
    return this.mailbox.run(() => this.apply(events));
  }

  /**
   * A result (or verdict) for one host, stepped with every other that arrives before the next step
   * runs: one store write and one storm judgement per batch instead of per host. At 10,000 hosts a
   * health pass brings 10,000 results; each stepped alone cloned and wrote the whole state.
   * Results cannot be refused (unlike operator commands, which go through deliver()).
   */
  private deliverBatched(host: string, event: HaEvent): Promise<void> {
    const events = this.inbox.get(host);
    if (events) events.push(event);
    else this.inbox.set(host, [event]);
    this.inboxRun ??= this.mailbox.run(() => {
      const batch = this.inbox;
      this.inbox = new Map();
      this.inboxRun = undefined;
      return this.apply(batch);
    });
    return this.inboxRun;
  }

  /** Resolves once no step is queued and no work runs or waits (for tests and shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      await this.mailbox.idle();
      await Promise.all([...Object.values(this.pools).map((p) => p.idle()), ...this.background]);
      const pools = Object.values(this.pools).map((p) => p.stats());
      if (this.mailbox.size === 0 && this.background.size === 0 && pools.every((s) => s.running === 0 && s.pending === 0)) return;
    }
  }

  /**
   * The HA section as it stands, with the probe bookkeeping kept in memory (probeOverlay.ts): what
   * DescribeHostHA shows (when each host's next health check is due).
   */
  liveSection(): HaSection {
    const ha = this.opts.store.read();
    return this.overlay.size === 0 ? ha : { ...ha, hosts: this.overlay.overlaid(ha.hosts) };
  }

  /** A host's record as HA steps it: the stored one, or its probe bookkeeping ahead of it in memory. */
  liveHost(host: string): HostHaRecord | undefined {
    const stored = this.opts.store.read().hosts[host];
    return stored && this.overlay.current(stored);
  }

  /**
   * Steps each host through its events, writes at once what must be durable (probeOverlay.ts: a step
   * that only moves a host's probe bookkeeping is kept in memory), then acts.
   */
  private async apply(batch: Batch): Promise<void> {
    const now = this.opts.clock.now();
    const ha = this.opts.store.read();
    const ctxs = haContexts(ha);
    const stepped: { stored: HostHaRecord; from: HostHaRecord; rec: HostHaRecord; effects: HaEffect[]; log: HaLogEvent[]; write: boolean }[] = [];
    for (const [host, events] of batch) {
      const stored = ha.hosts[host];
      if (!stored) {
        this.overlay.drop(host);
        continue;
      }
      const from = this.overlay.current(stored);
      const partitionCtx = ctxs.get(stored.partition);
      if (!partitionCtx) continue;
      let rec = from;
      const ctx = hostContext(partitionCtx, ha, rec, now);
      const effects: HaEffect[] = [];
      for (const event of events) {
        const r = step(rec, event, now, ctx);
        rec = r.next;
        effects.push(...r.effects);
      }
      const log = toLog(host, effects, now);
      stepped.push({ stored, from, rec, effects, log, write: ProbeOverlay.mustWrite(stored, rec, log.length > 0) });
    }
    const changed = stepped.filter((s) => s.rec !== s.from || s.effects.length > 0);
    if (changed.length === 0) return;
    const written = changed.filter((s) => s.write);
    if (written.length > 0) {
      await this.opts.store.update((d) => {
        for (const { rec, log } of written) {
          d.hosts[rec.host] = rec;
          appendHaEvents(d, log);
        }
      });
    }
    for (const s of changed) {
      if (s.write) this.overlay.drop(s.rec.host);
      else this.overlay.keep(s.rec, s.stored);
    }
    for (const { stored, rec, effects } of changed) {
      reportMetrics(stored, rec, effects);
      this.dispatch({ host: rec.host, partition: rec.partition }, effects);
    }
  }

  private dispatch(ref: HaHostRef, effects: readonly HaEffect[]): void {
    const { provider, actions } = this.opts;
    let disabled: Promise<void> = Promise.resolve();
    for (const e of effects) {
      switch (e.kind) {
        case 'healthCheck':
          // A source that fails (the CC timed out, refused, or is down) could not tell: unknown, never unhealthy.
          this.submit('health', ref, e.token, () => provider.isHealthy(ref, e.deadline).then(
            (r): HaEvent => this.healthAnswered(ref, r.healthy ? 'healthy' : 'unhealthy', e.token, r.detail),
            (err: unknown): HaEvent => this.healthAnswered(ref, 'unknown', e.token, message(err))));
          break;
        case 'activityCheck':
          this.submit('activity', ref, e.token, () => provider.hasActivity(ref, e.since, e.deadline).then(
            (r): HaEvent => ({ type: 'activityResult', token: e.token, outcome: r.outcome, detail: r.detail }),
            (err: unknown): HaEvent => ({ type: 'activityResult', token: e.token, outcome: 'unknown', detail: message(err) })));
          break;
        case 'recover':
          this.notBefore(e.notBefore, () => this.submit('recovery', ref, e.token, () => this.underLease(() => provider.recover(ref, e.deadline).then(
            (): HaEvent => {
              haPowerAction.publish({ action: 'recover', result: 'ok' });
              return { type: 'recoverResult', token: e.token, ok: true, detail: 'power cycled' };
            },
            (err: unknown): HaEvent => {
              haPowerAction.publish({ action: 'recover', result: 'failed' });
              return { type: 'recoverResult', token: e.token, ok: false, detail: message(err) };
            }))));
          break;
        case 'externalRemediation': {
          const job = { host: ref.host, partition: ref.partition, id: e.id, reason: e.reason, deadline: e.deadline };
          const accepted = (detail: string) => this.track(this.deliver(ref.host, { type: 'remediationResult', token: e.token, outcome: 'accepted', detail }));
          this.submit('remediation', ref, e.token, async () => {
            const remediator = this.opts.remediator?.(ref);
            if (!remediator) return { type: 'remediationResult', token: e.token, outcome: 'failed', detail: `no external remediator is configured for ${ref.partition}` };
            return remediator.remediate(job, accepted).then(
              (r): HaEvent => ({ type: 'remediationResult', token: e.token, outcome: r.outcome, detail: r.detail }),
              (err: unknown): HaEvent => ({ type: 'remediationResult', token: e.token, outcome: 'failed', detail: message(err) }));
          });
          break;
        }
        case 'disableHost':
          disabled = actions.disableHost(ref, e.reason).catch((err: unknown) => this.note(ref.host, 'warn', `DisableService of ${ref.host} failed: ${message(err)}; fencing anyway`));
          break;
        case 'fence': {
          const first = disabled;
          // The host is in maintenance (or we tried) before its power goes off.
          this.notBefore(e.notBefore, () => this.submit('fence', ref, e.token, () => first.then(() => this.underLease(() => provider.fence(ref, e.deadline).then(
            (r): HaEvent => {
              haPowerAction.publish({ action: 'fence', result: r.alreadyOff ? 'already-off' : 'ok' });
              return { type: 'fenceResult', token: e.token, ok: true, detail: r.alreadyOff ? 'already off' : 'powered off' };
            },
            (err: unknown): HaEvent => {
              haPowerAction.publish({ action: 'fence', result: 'failed' });
              return { type: 'fenceResult', token: e.token, ok: false, detail: message(err) };
            })))));
          break;
        }
        case 'powerStatus':
          this.submit('power', ref, e.token, () => provider.powerStatus(ref, e.deadline).then(
            (r): HaEvent => ({ type: 'powerStatus', token: e.token, power: r.power, detail: r.detail }),
            (err: unknown): HaEvent => ({ type: 'powerStatus', token: e.token, power: 'unknown', detail: message(err) })));
          break;
        case 'drain':
          this.repair(ref, e.token, () => actions.drain(ref));
          break;
        case 'evacuate':
          this.repair(ref, e.token, () => actions.evacuate(ref, e.fencedBy));
          break;
        case 'powerOn':
          this.repair(ref, e.token, () => actions.powerOn(ref));
          break;
        case 'alert':
        case 'transition':
          break; // Written to the event log with the step.
      }
    }
    this.track(disabled);
  }

  /**
   * Runs a power action only while this replica leads (issue 21). Checked synchronously before the
   * action starts: the provider spawns the agent without awaiting anything first, so no lease can
   * run out between the check and the spawn. Not leading: no result at all (undefined), so the
   * record stays as the store has it and the next leader's resume() issues the action again.
   */
  private underLease(action: () => Promise<HaEvent>): Promise<HaEvent | undefined> {
    if (this.opts.leading !== undefined && !this.opts.leading()) return Promise.resolve(undefined);
    return action();
  }

  /**
   * Submits at `at` (a resumed power action waits out the previous CLC's agent), at once without it.
   * Not tracked by idle(): a held action is the machine's to time out; when it comes due, the pool
   * drops it if the record moved on meanwhile (isStale), and underLease() refuses it off the lease.
   */
  private notBefore(at: number | undefined, submit: () => void): void {
    const wait = at === undefined ? 0 : at - this.opts.clock.now();
    if (wait <= 0) submit();
    else this.opts.clock.setTimer(wait, submit);
  }

  private submit(kind: HaOperationKind, ref: HaHostRef, token: number, work: () => Promise<HaEvent | undefined>): void {
    const isStale = () => {
      const r = this.liveHost(ref.host);
      if (kind === 'health') return r?.health?.token !== token;
      return kind === 'power' ? r?.powerProbe?.token !== token : r?.operation?.token !== token;
    };
    const accepted = this.pools[kind].submit({
      isStale,
      run: async () => {
        const result = await work();
        if (result !== undefined) await this.deliverBatched(ref.host, result);
      },
    });
    if (accepted === 'full') {
      haWorkRefused.publish({ kind });
      this.track(this.deliverBatched(ref.host, { type: 'dispatchRefused', token }));
    }
  }

  /** Runs one attempt at an owed repair and feeds its outcome back (a throw is a failed attempt, retried later). */
  private repair(ref: HaHostRef, token: number, attempt: () => Promise<RepairOutcome>): void {
    const outcome = attempt().then(
      (r): HaEvent => ({ type: 'repairResult', token, done: r.done, detail: r.detail }),
      (err: unknown): HaEvent => ({ type: 'repairResult', token, done: false, detail: message(err) }));
    this.track(outcome.then((ev) => this.deliverBatched(ref.host, ev)));
  }

  /**
   * Counts a health check's outcome, and alerts once when a partition's health checks stop getting
   * answers (its hosts keep their HA state meanwhile) and once when they get answers again.
   */
  private healthAnswered(ref: HaHostRef, outcome: HealthOutcome, token: number, detail: string): HaEvent {
    haHealthCheck.publish({ outcome });
    const silent = this.unansweredPartitions.has(ref.partition);
    if (outcome === 'unknown' && !silent) {
      this.unansweredPartitions.add(ref.partition);
      this.track(this.note(ref.host, 'warn', `host HA cannot tell the health of the hosts of ${ref.partition} (${ref.host}: ${detail}); they keep their HA state until their CC answers`));
    } else if (outcome !== 'unknown' && silent) {
      this.unansweredPartitions.delete(ref.partition);
      this.track(this.note(ref.host, 'info', `host HA's health checks of ${ref.partition} are answered again`));
    }
    return { type: 'healthResult', token, outcome, detail };
  }

  private note(host: string, level: HaLogEvent['level'], text: string): Promise<void> {
    const at = this.opts.clock.now();
    return this.opts.store.update((d) => appendHaEvents(d, [{ at, host, kind: 'alert', level, message: text }]));
  }

  private track(p: Promise<unknown>): void {
    const settled = p.catch(() => undefined).finally(() => this.background.delete(settled));
    this.background.add(settled);
  }
}
