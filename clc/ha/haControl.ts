/**
 * The operator's side of host HA (issue 6): one narrow facade over the HA section of clc.json, the
 * BMC store and the HaRunner, behind the admin API's HA actions (clc/api/actions/ha*.ts). Every
 * operation validates first and throws a coded error (clc/ha/errors.ts) before changing anything;
 * every change is written to its store before the call resolves. Operator events (FenceHost,
 * ConfirmHostFenced, HA switched on or off) go through HaRunner.deliver, so they are stepped,
 * persisted and acted on like any other event. BMC passwords go into the BMC store only and come
 * back as `passwordSet`.
 *
 * Configuration changes are logged in the event log too, under the host's name or the scope's
 * (`partition:<name>`, `global`).
 */
import type { Clock } from '../../shared/clock.js';
import type { Store } from '../../shared/store/store.js';
import { HaErrors } from './errors.js';
import { forecast, type HaForecast } from './haDryRun.js';
import { haContexts, hostContext, type HaRunner, type HaSectionStore } from './haRunner.js';
import type { HaContext } from './hostHaMoves.js';
import { appendHaEvents, type HaLogEvent, type HaPartitionConfig, type HaSection } from './haState.js';
import { IllegalHaEventError } from './hostHaMachine.js';
import { fencedHostsOf, type HaEvent, type HostHaRecord } from './hostHaState.js';
import { fenceConfigFor, publicBmcView, setBmc, type BmcEntry, type BmcState, type PublicBmcView } from './power/bmcStore.js';
import { publicRemediationView, remediationConfigSchema, type PublicRemediationView, type RemediationConfig } from './remediation.js';
import { effectiveRepair, type AutoRepair } from './repairPolicy.js';
import { compileHaSettings, type HaSettings, type HaSettingsOverride } from './settings.js';
import { activeSuspension, type Suspension } from './suspension.js';
import { longPoll } from '../../shared/longPoll.js';

export interface HaControlOptions {
  readonly store: HaSectionStore;
  readonly bmc: Store<BmcState>;
  readonly runner: HaRunner;
  readonly clock: Clock;
  /** The configured partitions (Ferry's clusters). */
  readonly partitions: () => readonly string[];
}

export interface BmcInput {
  readonly agent?: string;
  /** The BMC's address (the agent's `ip`). */
  readonly address?: string;
  /** The agent's `ipport`. */
  readonly port?: number;
  readonly username?: string;
  readonly password?: string;
  readonly timeoutMs?: number;
  /** Other agent options (ssl_insecure, systems_uri, ...): a value sets one, null removes it. */
  readonly options?: Readonly<Record<string, string | null>>;
}

export interface ConfigureHostInput {
  readonly host: string;
  /** The host's partition (the API finds it through the CCs). */
  readonly partition: string;
  readonly bmc: BmcInput;
  readonly by: string;
}

export interface ConfigureClusterInput {
  /** Undefined: the global layer every partition inherits. */
  readonly partition?: string;
  readonly settings: HaSettingsOverride;
  readonly maxUnhealthy?: string;
  /** "[2-5]" sets Cluster API's unhealthyRange (it takes precedence over maxUnhealthy); null removes it. */
  readonly unhealthyRange?: string | null;
  readonly autoRepair?: AutoRepair;
  /** The partition's remediation (remediation.ts): only what is given changes. */
  readonly remediation?: RemediationInput;
  readonly by: string;
}

/**
 * A change of a partition's remediation. A command or webhook implies strategy external and
 * replaces the other one; strategy fence drops both. `secret`: set, or '' to remove.
 */
export interface RemediationInput {
  readonly strategy?: 'fence' | 'external';
  readonly command?: { readonly path: string; readonly args: readonly string[] };
  readonly webhook?: string;
  readonly secret?: string;
}

export type SuspendScope = { readonly kind: 'host' | 'cluster' | 'partition'; readonly name: string };

export interface HostHaView {
  readonly host: string;
  readonly partition: string;
  /** What the configuration asks: partition enabled and host not disabled. */
  readonly haEnabled: boolean;
  readonly record: HostHaRecord;
  readonly suspension: { readonly key: string; readonly until: number | null; readonly reason: string; readonly by: string } | null;
  readonly bmc: PublicBmcView | null;
  readonly lastEvents: readonly HaLogEvent[];
  readonly dryRun?: HaForecast;
}

export interface PartitionConfigView {
  readonly partition: string;
  readonly enabled: boolean;
  readonly maxUnhealthy: string | null;
  readonly unhealthyRange: string | null;
  readonly autoRepair: AutoRepair | null;
  readonly remediation: PublicRemediationView;
  readonly overrides: HaSettingsOverride;
  readonly effective: HaSettings;
}

/** An instance's auto-repair: its own level (null: inherits), its cluster's, and the one that applies. */
export interface InstanceRepairView {
  readonly instanceId: string;
  readonly partition: string;
  readonly autoRepair: AutoRepair | null;
  readonly clusterAutoRepair: AutoRepair | null;
  readonly effective: AutoRepair;
}

export interface ConfigurationsView {
  readonly global: { readonly maxUnhealthy: string | null; readonly unhealthyRange: string | null; readonly overrides: HaSettingsOverride; readonly effective: HaSettings };
  readonly partitions: readonly PartitionConfigView[];
  readonly hosts: readonly { readonly host: string; readonly partition: string; readonly hostDisabled: boolean; readonly bmc: PublicBmcView | null }[];
  readonly suspended: readonly { readonly key: string; readonly until: number | null; readonly reason: string; readonly by: string }[];
  /** Instances with a level of their own (ConfigureHAForInstance). */
  readonly instances: readonly { readonly instanceId: string; readonly autoRepair: AutoRepair }[];
}

export interface EventQuery {
  readonly host?: string;
  readonly level?: HaLogEvent['level'];
  readonly since?: number;
  readonly limit?: number;
  /** Only events with a larger id (a cursor): then `limit` keeps the oldest, so a follower misses none. */
  readonly after?: number;
}

/** How often a waiting DescribeHAEvents looks at the log (in memory: cheap). */
const EVENT_POLL_MS = 100;

/** Default number of events per host in DescribeHostHA. */
export const LAST_EVENTS_PER_HOST = 5;
const DEFAULT_BMC_TIMEOUT_MS = 20_000;

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export class HaControl {
  constructor(private readonly opts: HaControlOptions) {}

  /** The section with the runner's probe bookkeeping (kept in memory, probeOverlay.ts): when each check is due. */
  private read(): HaSection {
    return this.opts.runner.liveSection();
  }

  private requirePartition(partition: string): void {
    const known = this.opts.partitions();
    if (!known.includes(partition)) throw HaErrors.make('UnknownPartition', { zone: partition, known: known.join(', ') });
  }

  /** The host's record; InvalidHost.NotFound for a host HA does not know (ConfigureHAForHost adds it). */
  requireHost(host: string): HostHaRecord {
    const rec = this.opts.runner.liveHost(host);
    if (!rec) throw HaErrors.make('UnknownHost', { host, scope: 'host HA (configure it first with ConfigureHAForHost)' });
    return rec;
  }

  private log(ha: HaSection, host: string, text: string): void {
    appendHaEvents(ha, [{ at: this.opts.clock.now(), host, kind: 'alert', level: 'info', message: text }]);
  }

  /** ConfigureHAForHost: BMC settings (merged into the host's current ones) and the host's HA record. */
  async configureHost(input: ConfigureHostInput): Promise<HostHaView> {
    this.requirePartition(input.partition);
    const existing = this.opts.runner.liveHost(input.host);
    if (existing && existing.partition !== input.partition) {
      throw HaErrors.make('HostInOtherPartition', { detail: `host ${input.host} is known to HA in partition ${existing.partition}, not ${input.partition}` });
    }
    const entry = this.mergeBmc(input.host, input.bmc);
    if (entry) {
      try {
        fenceConfigFor(input.host, entry);
      } catch (e) {
        throw HaErrors.make('InvalidBmcSettings', { parameter: 'Agent/Address/Port/Username/Password/TimeoutMs', value: '(BMC settings)', detail: message(e) });
      }
      await setBmc(this.opts.bmc, input.host, entry);
    }
    await this.opts.runner.syncHosts([{ host: input.host, partition: input.partition }]);
    await this.follow([input.host]);
    await this.opts.store.update((ha) => this.log(ha, input.host, `HA configured by ${input.by}${entry ? ` (BMC agent ${entry.agent}, password ${entry.password ? 'set' : 'not set'})` : ''}`));
    return this.hostView(this.read(), input.host);
  }

  private mergeBmc(host: string, bmc: BmcInput): BmcEntry | undefined {
    const old = this.opts.bmc.read().hosts[host];
    const given = Object.values(bmc).some((v) => v !== undefined);
    if (!given) return undefined;
    const agent = bmc.agent ?? old?.agent;
    if (agent === undefined) throw HaErrors.make('MissingBmcSetting', { parameter: 'Agent' });
    const options: Record<string, string> = { ...(old?.options ?? {}) };
    if (bmc.address !== undefined) options.ip = bmc.address;
    if (bmc.port !== undefined) options.ipport = String(bmc.port);
    if (bmc.username !== undefined) options.username = bmc.username;
    for (const [k, v] of Object.entries(bmc.options ?? {})) {
      if (v === null) delete options[k];
      else options[k] = v;
    }
    if (options.ip === undefined) throw HaErrors.make('MissingBmcSetting', { parameter: 'Address' });
    return { agent, options, password: bmc.password ?? old?.password ?? '', timeoutMs: bmc.timeoutMs ?? old?.timeoutMs ?? DEFAULT_BMC_TIMEOUT_MS };
  }

  /** ConfigureHAForCluster: settings over the global ones (or the global layer), maxUnhealthy, auto-repair. */
  async configureCluster(input: ConfigureClusterInput): Promise<ConfigurationsView> {
    if (input.partition !== undefined) this.requirePartition(input.partition);
    else if (input.autoRepair !== undefined) {
      throw HaErrors.make('AutoRepairNeedsPartition', { detail: 'AutoRepair is set per cluster: give Partition' });
    } else if (input.remediation !== undefined) {
      throw HaErrors.make('RemediationNeedsPartition', { detail: 'the remediation strategy, command, webhook and secret are set per cluster: give Partition' });
    }
    const partition = input.partition;
    const remediation = partition !== undefined && input.remediation !== undefined ? nextRemediation(this.read().partitions[partition]?.remediation, input.remediation) : undefined;
    const apply = (ha: HaSection): void => {
      if (input.partition === undefined) {
        ha.global.settings = { ...ha.global.settings, ...input.settings };
        if (input.maxUnhealthy !== undefined) ha.global.maxUnhealthy = input.maxUnhealthy;
        if (input.unhealthyRange === null) delete ha.global.unhealthyRange;
        else if (input.unhealthyRange !== undefined) ha.global.unhealthyRange = input.unhealthyRange;
        return;
      }
      const cfg = partitionConfig(ha, input.partition);
      cfg.settings = { ...cfg.settings, ...input.settings };
      if (input.maxUnhealthy !== undefined) cfg.maxUnhealthy = input.maxUnhealthy;
      if (input.unhealthyRange === null) delete cfg.unhealthyRange;
      else if (input.unhealthyRange !== undefined) cfg.unhealthyRange = input.unhealthyRange;
      if (input.autoRepair !== undefined) cfg.autoRepair = input.autoRepair;
      if (remediation !== undefined) cfg.remediation = remediation;
    };
    // Tried on a copy first: every layer must still compile with the others (e.g. initial delay within the interval).
    const trial = structuredClone(this.read());
    apply(trial);
    for (const p of [undefined, ...Object.keys(trial.partitions)]) {
      try {
        compileHaSettings(trial.global.settings, p === undefined ? undefined : trial.partitions[p]?.settings);
      } catch (e) {
        throw HaErrors.make('SettingsWouldNotHold', { detail: `the settings would not hold for ${p ?? 'the global layer'}: ${zodText(e)}` });
      }
    }
    const secret = input.remediation?.secret;
    if (partition !== undefined && secret !== undefined) {
      await this.opts.bmc.update((b) => {
        if (secret === '') delete b.remediationSecrets[partition];
        else b.remediationSecrets[partition] = secret;
      });
    }
    // The secret is never logged: the log says only whether one is set.
    const shown = remediation === undefined && secret === undefined ? undefined
      : publicRemediationView(remediation ?? this.read().partitions[partition ?? '']?.remediation, this.opts.bmc.read().remediationSecrets[partition ?? '']);
    await this.opts.store.update((d) => {
      apply(d);
      this.log(d, input.partition === undefined ? 'global' : `partition:${input.partition}`, `HA configuration changed by ${input.by}: ${JSON.stringify({ ...input.settings, maxUnhealthy: input.maxUnhealthy, unhealthyRange: input.unhealthyRange, autoRepair: input.autoRepair, remediation: shown })}`);
    });
    return this.configurations();
  }

  /** EnableHAForCluster / DisableHAForCluster: the partition's switch, then every host of it follows. */
  async setClusterEnabled(partition: string, enabled: boolean, by: string): Promise<HostHaView[]> {
    this.requirePartition(partition);
    await this.opts.store.update((ha) => {
      partitionConfig(ha, partition).enabled = enabled;
      // A fence cannot be un-issued: those hosts stay HA's until EnableService returns them (hostHaMachine.ts onHaDisabled).
      const fencing = enabled ? [] : fencedHostsOf(ha.hosts, partition);
      const waits = fencing.length > 0 ? `; ${fencing.join(', ')} fenced or being fenced: HA switches off for them once EnableService returns them` : '';
      this.log(ha, `partition:${partition}`, `HA ${enabled ? 'enabled' : 'disabled'} for partition ${partition} by ${by}${waits}`);
    });
    const hosts = Object.values(this.opts.store.read().hosts).filter((r) => r.partition === partition).map((r) => r.host);
    await this.follow(hosts);
    const ha = this.read();
    return hosts.map((h) => this.hostView(ha, h));
  }

  /** EnableHAForHost / DisableHAForHost. */
  async setHostEnabled(host: string, enabled: boolean, by: string): Promise<HostHaView> {
    this.requireHost(host);
    const state = this.opts.runner.liveHost(host)?.state;
    if (!enabled && state === 'FENCING') throw HaErrors.make('FenceInProgress', { host, state });
    await this.opts.store.update((ha) => {
      ha.hostDisabled = ha.hostDisabled.filter((h) => h !== host);
      if (!enabled) ha.hostDisabled.push(host);
      this.log(ha, host, `HA ${enabled ? 'enabled' : 'disabled'} for host ${host} by ${by}`);
    });
    await this.follow([host]);
    return this.hostView(this.read(), host);
  }

  /**
   * Brings the hosts' machines in line with their switches now, as the next tick would, and evaluates
   * the eligibility of those switched on. One step and one eligibility round for all of them: one
   * by one, enabling HA for a partition of 2,000 hosts was 2,000 steps, each writing the store.
   */
  private async follow(hosts: readonly string[]): Promise<void> {
    const ha = this.opts.store.read();
    const events = new Map<string, HaEvent[]>();
    const on: string[] = [];
    for (const host of hosts) {
      const rec = this.opts.runner.liveHost(host);
      if (!rec) continue;
      if (!isOn(ha, rec)) {
        if (rec.state !== 'DISABLED') events.set(host, [{ type: 'haDisabled', reason: ha.partitions[rec.partition]?.enabled ? 'HA disabled for the host' : 'HA disabled for the partition' }]);
        continue;
      }
      on.push(host);
      if (rec.state === 'DISABLED') events.set(host, [{ type: 'haEnabled' }]);
    }
    if (events.size > 0) await this.opts.runner.deliverAll(events);
    // Switched on (or added under a partition that is on): say at once whether HA can act on them.
    const ineligible = on.filter((h) => this.opts.runner.liveHost(h)?.state === 'INELIGIBLE');
    if (ineligible.length > 0) await this.opts.runner.evaluateEligibility(ineligible);
  }

  /**
   * FenceHost: fence now (or retry a failed fence). A host HA finds AVAILABLE is probed first: if its
   * NC answers, it is up and healthy and only `force` fences it (HostHealthy otherwise).
   */
  async fenceHost(host: string, by: string, force = false): Promise<HostHaView> {
    const rec = this.requireHost(host);
    const answering = rec.state === 'AVAILABLE' ? (await this.opts.runner.probeHealth(host)).healthy : false;
    return this.operatorEvent(host, { type: 'fenceRequested', operator: by, force, answering });
  }

  /** ConfirmHostFenced: only for a host being fenced (typically one whose fence needs an operator). */
  confirmFenced(host: string, by: string): Promise<HostHaView> {
    return this.operatorEvent(host, { type: 'operatorConfirmedFenced', operator: by });
  }

  private async operatorEvent(host: string, event: HaEvent): Promise<HostHaView> {
    const rec = this.requireHost(host);
    try {
      await this.opts.runner.deliver(host, event);
    } catch (e) {
      if (e instanceof IllegalHaEventError) {
        if (e.healthy) throw HaErrors.make('HostUpAndHealthy', { host });
        const now = this.opts.runner.liveHost(host) ?? rec;
        if (e.refusal === 'notRemediating') throw HaErrors.make('RemediationNotInProgress', { host, state: now.state, detail: e.detail });
        if (e.refusal === 'staleRemediation') throw HaErrors.make('StaleRemediationReport', { host, detail: `${e.detail}; a report from an earlier episode changes nothing` });
        throw HaErrors.make('IllegalOperatorEvent', { host, state: now.state, detail: e.message });
      }
      throw e;
    }
    return this.hostView(this.read(), host);
  }

  /**
   * CompleteHostRemediation: the external remediator (or an operator) reports remediation `id` of
   * `host` done or failed. Refused (and nothing changes) when no remediation is in flight or the id
   * is another one's (a stale report from an earlier episode).
   */
  completeRemediation(host: string, id: string, result: 'succeeded' | 'failed', message: string, by: string): Promise<HostHaView> {
    return this.operatorEvent(host, { type: 'remediationReported', id, result, message, operator: by });
  }

  /** SuspendHA: automation paused for a host, cluster or partition, until `until` (or until lifted). */
  async suspend(scope: SuspendScope, until: number | null, reason: string, by: string): Promise<Suspension & { key: string }> {
    this.requireScope(scope);
    if (until !== null && until <= this.opts.clock.now()) {
      throw HaErrors.make('SuspensionInPast', { parameter: 'Until', value: new Date(until).toISOString(), detail: 'must be in the future' });
    }
    const key = `${scope.kind}:${scope.name}`;
    const s: Suspension = { until, reason, by };
    await this.opts.store.update((ha) => {
      ha.suspended[key] = s;
      this.log(ha, scope.kind === 'host' ? scope.name : key, `HA automation suspended for ${key} by ${by} ${until === null ? 'until lifted' : `until ${new Date(until).toISOString()}`}: ${reason}`);
    });
    return { key, ...s };
  }

  /** ResumeHA: lifts the suspension of exactly that scope; says whether there was one. */
  async resume(scope: SuspendScope, by: string): Promise<{ key: string; wasSuspended: boolean }> {
    this.requireScope(scope);
    const key = `${scope.kind}:${scope.name}`;
    if (!(key in this.read().suspended)) return { key, wasSuspended: false };
    await this.opts.store.update((ha) => {
      delete ha.suspended[key];
      this.log(ha, scope.kind === 'host' ? scope.name : key, `HA automation resumed for ${key} by ${by}`);
    });
    return { key, wasSuspended: true };
  }

  private requireScope(scope: SuspendScope): void {
    if (scope.kind === 'host') this.requireHost(scope.name);
    else this.requirePartition(scope.name);
  }

  /** ListHostHAConfigurations. */
  configurations(): ConfigurationsView {
    const ha = this.read();
    const bmc = this.opts.bmc.read().hosts;
    return {
      global: { maxUnhealthy: ha.global.maxUnhealthy ?? null, unhealthyRange: ha.global.unhealthyRange ?? null, overrides: ha.global.settings, effective: compileHaSettings(ha.global.settings) },
      partitions: this.opts.partitions().map((p) => {
        const cfg = ha.partitions[p];
        return {
          partition: p, enabled: cfg?.enabled ?? false, maxUnhealthy: cfg?.maxUnhealthy ?? ha.global.maxUnhealthy ?? null,
          unhealthyRange: cfg?.unhealthyRange ?? ha.global.unhealthyRange ?? null,
          autoRepair: cfg?.autoRepair ?? null, remediation: publicRemediationView(cfg?.remediation, this.opts.bmc.read().remediationSecrets[p]),
          overrides: cfg?.settings ?? {}, effective: compileHaSettings(ha.global.settings, cfg?.settings),
        };
      }),
      hosts: Object.values(ha.hosts).sort(byHost).map((r) => {
        const b = bmc[r.host];
        return { host: r.host, partition: r.partition, hostDisabled: ha.hostDisabled.includes(r.host), bmc: b ? publicBmcView(b) : null };
      }),
      suspended: Object.entries(ha.suspended).map(([key, s]) => ({ key, ...s })),
      instances: Object.entries(ha.instanceAutoRepair).sort(([a], [b]) => a.localeCompare(b)).map(([instanceId, autoRepair]) => ({ instanceId, autoRepair })),
    };
  }

  /**
   * ConfigureHAForInstance: the instance's own auto-repair level, or `inherit` to drop it; the least
   * destructive of it and its cluster's applies (repairPolicy.ts). The caller checked the instance exists.
   */
  async configureInstance(input: { instanceId: string; partition: string; autoRepair: AutoRepair | 'inherit'; by: string }): Promise<InstanceRepairView> {
    const { instanceId, autoRepair } = input;
    await this.opts.store.update((ha) => {
      if (autoRepair === 'inherit') delete ha.instanceAutoRepair[instanceId];
      else ha.instanceAutoRepair[instanceId] = autoRepair;
      this.log(ha, `instance:${instanceId}`, `auto-repair of ${instanceId} set to ${autoRepair} by ${input.by}`);
    });
    const own = this.read().instanceAutoRepair[instanceId] ?? null;
    const cluster = this.read().partitions[input.partition]?.autoRepair ?? null;
    return { instanceId, partition: input.partition, autoRepair: own, clusterAutoRepair: cluster, effective: effectiveRepair(own ?? undefined, cluster ?? undefined) };
  }

  /** DescribeHostHA: every host HA knows (or those named, or one partition's), with a dry run if asked. */
  describeHosts(q: { hosts?: readonly string[]; partition?: string; dryRun?: boolean; events?: number }): HostHaView[] {
    if (q.partition !== undefined) this.requirePartition(q.partition);
    const ha = this.read();
    for (const h of q.hosts ?? []) {
      if (!ha.hosts[h]) this.requireHost(h);
    }
    const only = q.hosts !== undefined && q.hosts.length > 0 ? new Set(q.hosts) : undefined;
    const recs = Object.values(ha.hosts)
      .filter((r) => (only === undefined || only.has(r.host)) && (q.partition === undefined || r.partition === q.partition))
      .sort(byHost);
    // One pass over the event log and one set of partition contexts for the whole answer, not one per
    // host: at 10,000 hosts a per-host filter of the log was quadratic (issue 19).
    const shared: ViewShared = {
      now: this.opts.clock.now(),
      events: lastEventsByHost(ha.events, new Set(recs.map((r) => r.host)), q.events ?? LAST_EVENTS_PER_HOST),
      contexts: q.dryRun === true ? haContexts(ha) : undefined,
    };
    return recs.map((r) => this.hostView(ha, r.host, shared));
  }

  /** DescribeHAEvents: oldest first, the newest `limit`. */
  events(q: EventQuery): HaLogEvent[] {
    const out = this.read().events.filter((e) => (q.host === undefined || e.host === q.host)
      && (q.level === undefined || e.level === q.level) && (q.since === undefined || e.at >= q.since)
      && (q.after === undefined || (e.id ?? 0) > q.after));
    if (q.limit === undefined) return out;
    return q.after !== undefined ? out.slice(0, q.limit) : out.slice(Math.max(0, out.length - q.limit));
  }

  /** DescribeHAEvents with WaitSeconds: answers as soon as a matching event exists, or empty after `waitMs` (long poll). */
  waitEvents(q: EventQuery, waitMs: number): Promise<HaLogEvent[]> {
    return longPoll(() => this.events(q), { clock: this.opts.clock, waitMs, recheckMs: EVENT_POLL_MS });
  }

  /** One host's view (an action's answer): its newest events, no dry run. */
  private hostView(ha: HaSection, host: string, shared: ViewShared = {
    now: this.opts.clock.now(), events: lastEventsByHost(ha.events, new Set([host]), LAST_EVENTS_PER_HOST), contexts: undefined,
  }): HostHaView {
    const rec = ha.hosts[host] as HostHaRecord;
    const { now } = shared;
    const active = activeSuspension(ha.suspended, rec, now);
    const b = this.opts.bmc.read().hosts[host];
    const view: HostHaView = {
      host, partition: rec.partition, haEnabled: isOn(ha, rec), record: rec,
      suspension: active ? { key: active.key, ...active.s } : null,
      bmc: b ? publicBmcView(b) : null,
      lastEvents: shared.events.get(host) ?? [],
    };
    const partitionCtx = shared.contexts?.get(rec.partition);
    if (!partitionCtx) return view;
    return { ...view, dryRun: forecast(rec, hostContext(partitionCtx, ha, rec, now), now) };
  }
}

/** What every host's view of one DescribeHostHA answer shares. */
interface ViewShared {
  readonly now: number;
  readonly events: ReadonlyMap<string, readonly HaLogEvent[]>;
  /** Present for a dry run only. */
  readonly contexts: ReadonlyMap<string, HaContext> | undefined;
}

/** The newest `perHost` events of each of `hosts`, oldest first, in one pass from the log's end. */
export function lastEventsByHost(log: readonly HaLogEvent[], hosts: ReadonlySet<string>, perHost: number): Map<string, HaLogEvent[]> {
  const out = new Map<string, HaLogEvent[]>();
  if (perHost <= 0) return out;
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log[i]!;
    if (!hosts.has(e.host)) continue;
    const mine = out.get(e.host);
    if (mine === undefined) out.set(e.host, [e]);
    else if (mine.length < perHost) mine.push(e);
  }
  for (const list of out.values()) list.reverse();
  return out;
}

/** The partition's remediation after `change`, validated (InvalidRemediation when it does not hold together). */
function nextRemediation(current: RemediationConfig | undefined, change: RemediationInput): RemediationConfig {
  const target = change.command !== undefined || change.webhook !== undefined;
  const strategy = change.strategy ?? (target ? 'external' : current?.strategy ?? 'fence');
  let next: Record<string, unknown> = { strategy };
  if (strategy === 'external') {
    if (change.command !== undefined) next = { ...next, command: { path: change.command.path, args: [...change.command.args] } };
    else if (change.webhook !== undefined) next = { ...next, webhook: { url: change.webhook } };
    else if (current?.command) next = { ...next, command: current.command };
    else if (current?.webhook) next = { ...next, webhook: current.webhook };
  } else if (target) {
    throw HaErrors.make('InvalidRemediation', { detail: 'a remediation command or webhook is only used with Remediation=external' });
  }
  const parsed = remediationConfigSchema.safeParse(next);
  if (!parsed.success) throw HaErrors.make('InvalidRemediation', { detail: zodText(parsed.error) });
  return parsed.data;
}

function partitionConfig(ha: HaSection, partition: string): HaPartitionConfig {
  const cfg = ha.partitions[partition] ?? { enabled: false, settings: {} };
  ha.partitions[partition] = cfg;
  return cfg;
}

function isOn(ha: HaSection, rec: HostHaRecord): boolean {
  return (ha.partitions[rec.partition]?.enabled ?? false) && !ha.hostDisabled.includes(rec.host);
}

const byHost = (a: { host: string }, b: { host: string }): number => a.host.localeCompare(b.host, 'en', { numeric: true });

function zodText(e: unknown): string {
  const issues = (e as { issues?: { path: PropertyKey[]; message: string }[] }).issues;
  return issues ? issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).join('; ') : message(e);
}
