/**
 * Host HA in the running CLC (issue 6): builds the provider (CC-backed health and activity, host
 * facts, a fence-agent PowerDriver per host from the BMC store), the service actions (the CLC's own
 * DisableService / MigrateInstances paths and the restart through the CC) and the HaRunner; then
 * syncs the hosts the CCs report, resumes whatever was in flight before a restart, and runs one pass
 * per tick on the injected clock until stopped. A pass: sync hosts, evaluate eligibility, tick, then
 * look after fenced hosts (keep them in maintenance, destroy obsolete copies once they are back).
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import type { Store } from '../../shared/store/store.js';
import type { Clusters } from '../clusters/clusters.js';
import type { HaNodeHooks } from '../core/nodeHooks.js';
import type { PartitionGate } from '../core/partitionGate.js';
import type { VolumeBackend } from '../core/volumeBackend.js';
import type { ClcState } from '../state/clcStore.js';
import { ccActivitySource, ccHealthSource, ccHostFacts, freshNodes, sharedNodes, withDeadline } from './cloud/ccSources.js';
import { NodeHealthReader } from './cloud/nodeHealthReader.js';
import { cloudHaActions, type CloudHaActions, type RepairPolicies } from './cloud/serviceActions.js';
import { composeProvider } from './composedProvider.js';
import { HaErrors } from './errors.js';
import type { HaHostRef, HaProvider } from './haProvider.js';
import { externalRemediator } from './externalRemediator.js';
import { HaRunner, haSectionOf } from './haRunner.js';
import { FENCE_STATES, fencedHostsOf } from './hostHaState.js';
import { fenceConfigFor, type BmcEntry, type BmcState } from './power/bmcStore.js';
import { FenceAgentDriver } from './power/fenceAgentDriver.js';
import { driverPerEntry, type PowerDriver } from './power/powerDriver.js';
import { compileHaSettings, type HaPoolLimits, type HaOperationKind } from './settings.js';
import type { EventSink } from '../events/eventSink.js';

export interface HaRuntimeDeps {
  readonly store: Store<ClcState>;
  readonly bmc: Store<BmcState>;
  readonly clusters: Clusters;
  readonly gate: PartitionGate;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Interval between passes. */
  readonly tickMs: number;
  readonly policies?: RepairPolicies;
  /** The event stream (clc/events): HA's own node changes and drains are recorded there. */
  readonly events?: EventSink;
  /** The host's power management from its BMC entry, asked at every use (default: the fence agent it names, one driver per entry). */
  readonly powerDriver?: (host: string, entry: BmcEntry) => PowerDriver;
  readonly pools?: Readonly<Record<HaOperationKind, HaPoolLimits>>;
  /** Where volumes live: restarts fence the dead host from them (issue 18 part 4). */
  readonly volumes?: VolumeBackend;
  /** Whether this CLC replica leads (issue 21): a pass runs only while it does; absent: always. */
  readonly leading?: () => boolean;
}

export interface HaRuntime {
  readonly runner: HaRunner;
  readonly actions: CloudHaActions;
  /** For the admin API's action context (clc/api/app.ts `ha`). */
  readonly hooks: HaNodeHooks;
  /** One pass now (the loop runs them by itself; tests call it to step). */
  pass(): Promise<void>;
  /**
   * Syncs the hosts, resumes what was in flight (from the store, as it is now) and starts the loop.
   * Again after stop(): a replica that leads again resumes from what the leader before it stored.
   */
  start(): Promise<void>;
  /** Stops the loop at once (no pass starts after this), waits for the pass in progress; work already submitted settles on its own deadline. */
  stop(): Promise<void>;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The partition's health-check interval as configured (ConfigureHAForCluster, else the global settings). */
function healthIntervalOf(ha: ClcState['ha'], partition: string): number {
  return compileHaSettings(ha.global.settings, ha.partitions[partition]?.settings).healthCheckIntervalMs;
}

/**
 * Every host the CCs report, with its partition; a CC that does not answer is skipped for now. The
 * host list is all a pass needs here, so the CCs answer from their views and poll no NC for it: with
 * HA switched off everywhere, a pass costs the nodes nothing (issue 19).
 */
async function reportedHosts(clusters: Clusters, reader: NodeHealthReader, logger: Logger): Promise<HaHostRef[]> {
  const out: HaHostRef[] = [];
  await Promise.all(clusters.partitions.map(async (p) => {
    try {
      for (const n of (await reader.read(p.name, { cached: true })).hosts) out.push({ host: n.host, partition: p.name });
    } catch (e) {
      logger.warn({ partition: p.name, err: message(e) }, 'host HA: the CC did not list its nodes; its hosts are synced later');
    }
  }));
  return out;
}

/** Builds host HA and starts it (the single CLC, the simulator, tests). */
export async function startHaRuntime(deps: HaRuntimeDeps): Promise<HaRuntime> {
  const runtime = createHaRuntime(deps);
  await runtime.start();
  return runtime;
}

/** Builds host HA without starting it: a replica starts it when it leads and stops it when it does not (issue 21). */
export function createHaRuntime(deps: HaRuntimeDeps): HaRuntime {
  const { store, clusters, clock, logger } = deps;
  const leads = deps.leading ?? (() => true);
  // The fence agents' drivers are made once per BMC entry; an injected factory (tests, the simulator) is asked every time.
  const makeDriver = deps.powerDriver ?? driverPerEntry((host: string, entry: BmcEntry) => new FenceAgentDriver(fenceConfigFor(host, entry), { clock }));
  const haStateOf = (host: string) => store.read().ha.hosts[host]?.state;
  // Host HA's reads of the nodes, versioned per partition and kind (issue 19): one reader for all of them.
  const nodeHealth = new NodeHealthReader(clusters, clock);
  const composed = composeProvider({
    // A health check looks at the CC's data from within the partition's check interval (issue 19).
    health: ccHealthSource(clusters, clock, freshNodes(nodeHealth, (partition) => healthIntervalOf(store.read().ha, partition))),
    activity: ccActivitySource(clusters, clock),
    facts: ccHostFacts(clusters, clock, haStateOf, sharedNodes(nodeHealth, clock, Math.min(1000, Math.max(1, Math.floor(deps.tickMs / 2))))),
    power: (host) => {
      const entry = deps.bmc.read().hosts[host];
      return entry ? makeDriver(host, entry) : undefined;
    },
  });
  // Every power action settles by its effect's deadline, whatever the agent does (a dead BMC).
  const provider: HaProvider = {
    ...composed,
    recover: (ref, deadline) => withDeadline(clock, deadline, `power cycle of ${ref.host}`, composed.recover(ref, deadline)),
    fence: (ref, deadline) => withDeadline(clock, deadline, `fence of ${ref.host}`, composed.fence(ref, deadline)),
    powerStatus: (ref, deadline) => withDeadline(clock, deadline, `power status of ${ref.host}`, composed.powerStatus(ref, deadline)),
  };
  const actions = cloudHaActions({
    clusters, gate: deps.gate, store, clock, logger, ...(deps.policies ? { policies: deps.policies } : {}), ...(deps.events ? { events: deps.events } : {}),
    ...(deps.volumes ? { volumes: deps.volumes } : {}),
  });
  // Read at dispatch: a ConfigureHAForCluster takes effect for the next remediation handed out.
  const remediator = (ref: HaHostRef) => {
    const cfg = store.read().ha.partitions[ref.partition]?.remediation;
    return cfg?.strategy === 'external' ? externalRemediator(cfg, deps.bmc.read().remediationSecrets[ref.partition] ?? '', clock) : undefined;
  };
  const runner = new HaRunner({ store: haSectionOf(store), provider, actions, clock, remediator, leading: leads, ...(deps.pools ? { pools: deps.pools } : {}) });

  /** FENCING/FENCED hosts: in maintenance whenever their NC answers; obsolete copies gone once FENCED. */
  const lookAfterFenced = async (): Promise<void> => {
    const fenced = (host: string): boolean => {
      const state = haStateOf(host);
      return state !== undefined && FENCE_STATES.has(state);
    };
    const recs = Object.values(store.read().ha.hosts).filter((r) => fenced(r.host));
    for (const r of recs) {
      const ref = { host: r.host, partition: r.partition };
      try {
        const node = (await nodeHealth.read(r.partition, {})).hosts.find((n) => n.host === r.host);
        if (!node?.reachable) continue;
        await actions.keepInMaintenance(ref, () => fenced(r.host));
        if (haStateOf(r.host) === 'FENCED') await actions.clearObsolete(ref);
      } catch (e) {
        logger.warn({ host: r.host, err: message(e) }, 'host HA: looking after a fenced host failed; retried next pass');
      }
    }
  };

  /** Every CC learns, each pass, which of its hosts HA fences or has fenced (never a destination or a placement there). */
  const tellFenced = async (): Promise<void> => {
    const records = store.read().ha.hosts;
    await Promise.all(clusters.partitions.map(async (p) => {
      const hosts = fencedHostsOf(records, p.name);
      try {
        await clusters.call(p.name, 'ccSetFencedHosts', { hosts });
      } catch (e) {
        logger.warn({ partition: p.name, err: message(e) }, 'host HA: telling the CC its fenced hosts failed; retried next pass');
      }
    }));
  };

  let running: Promise<void> | undefined;
  const pass = (): Promise<void> => {
    // A replica whose lease may have run out acts on nothing (its loop is being stopped too).
    if (!leads()) return running ?? Promise.resolve();
    running ??= (async () => {
      try {
        await runner.syncHosts(await reportedHosts(clusters, nodeHealth, logger));
        await runner.evaluateEligibility();
        await runner.tick();
        await tellFenced();
        await lookAfterFenced();
      } catch (e) {
        logger.error({ err: message(e) }, 'host HA pass failed');
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  /** Bumped by every start and stop: a pass of an earlier run schedules nothing. */
  let run = 0;
  let timer: TimerHandle | undefined;
  const schedule = (mine: number): void => {
    if (mine !== run) return;
    timer = clock.setTimer(deps.tickMs, () => { void pass().finally(() => schedule(mine)); });
  };
  const start = async (): Promise<void> => {
    const mine = ++run;
    await runner.syncHosts(await reportedHosts(clusters, nodeHealth, logger));
    // A restart mid-recovery (or a new leader): what was in flight is issued again, under new tokens;
    // an owed drain or restart elsewhere (owedRepair.ts) starts its next attempt on the first pass.
    if (mine === run) await runner.resume();
    if (mine !== run) return;
    schedule(mine);
    logger.info({ tickMs: deps.tickMs, hosts: Object.keys(store.read().ha.hosts).length }, 'host HA runtime started');
  };

  const hooks: HaNodeHooks = {
    async beforeEnable(host, partition) {
      const state = haStateOf(host);
      if (state === 'FENCING') {
        throw HaErrors.make('EnableWhileFencing', { action: 'EnableService', detail: `host ${host}: host HA is fencing it; confirm the fence or wait for it first` });
      }
      if (state !== 'FENCED') return;
      const left = await actions.clearObsolete({ host, partition });
      if (left === undefined) {
        throw HaErrors.make('FencedHostSilent', { action: 'EnableService', detail: `fenced host ${host}: its NC does not answer, so the copies of instances restarted elsewhere cannot be destroyed yet` });
      }
    },
    async afterEnable(host) {
      // EnableService is the operator's word: a fenced host is unfenced, an owed drain is dropped.
      await runner.deliver(host, { type: haStateOf(host) === 'FENCED' ? 'unfenced' : 'serviceEnabled' });
    },
    fencedHosts: () => new Set(fencedHostsOf(store.read().ha.hosts)),
  };

  return {
    runner, actions, hooks, pass, start,
    async stop() {
      run++;
      timer?.cancel();
      await running;
    },
  };
}
