/**
 * Issue 19's `drain` case: a source host with 50 instances of mixed sizes and dirty rates drained onto
 * 100 destinations through the real CLC, CC and NCs of the whole-cloud simulator (sim/simCloud.ts:
 * the real services over the simulated network and the simulated hypervisor's pre-copy model,
 * nc/hypervisor/sim/migrationModel.ts), on its manual clock: the makespan is simulated time, so it
 * measures Ferry's scheduling (concurrency limits, hand-shakes, polls, reservations) and not this
 * machine's load (the CPU cost of a migration is the `migration-sim` case's).
 *
 * The physical bound: every guest's pre-copy job at one stream's bandwidth (the same model), the
 * source's link carrying two such streams at once (the CC's default per-source limit, KubeVirt's;
 * more streams share the link, SimHostConfig.nicMbps): no schedule ends before
 * max(Σ jobs / 2, the longest job). Baselines run in the same call: serial (one stream)
 * and all at once without reservations (no concurrency limit, destinations not reserved). Every step
 * of every run checks every host: what its NC holds (records plus incoming reservations) and what its
 * hypervisor holds never exceed its capacity.
 */
import type { DomainSpec } from '../nc/hypervisor/driver.js';
import { MIGRATION_DEFAULTS, planMigration } from '../nc/hypervisor/sim/migrationModel.js';
import type { NcSnapshot } from '../nc/ncStore.js';
import type { Limits } from '../cc/migration/settings.js';
import { DEFAULT_TIMEOUTS } from '../cc/migration/settings.js';
import { FINAL_ITEM_STATES } from '../shared/protocol/migrationProtocol.js';
import type { Resources } from '../shared/model/resources.js';
import { findVmType } from '../shared/model/vmTypes.js';
import { committedOn } from '../sim/invariants.js';
import { simSettings, type SimSettings } from '../sim/settings.js';
import { SimCloud } from '../sim/simCloud.js';
import { readTruth } from '../sim/truth.js';

/** The drained guests: type × count (50 in all) and each type's dirty rate while it migrates (MiB/s). */
export const DRAIN_MIX: readonly { readonly type: string; readonly count: number; readonly dirtyRateMiBps: number }[] = Object.freeze([
  { type: 'm1.small', count: 14, dirtyRateMiBps: 4 },
  { type: 'm1.medium', count: 12, dirtyRateMiBps: 16 },
  { type: 'm1.xlarge', count: 10, dirtyRateMiBps: 32 },
  { type: 'c1.xlarge', count: 8, dirtyRateMiBps: 64 },
  { type: 'm2.2xlarge', count: 6, dirtyRateMiBps: 24 },
]);
const DESTINATIONS = 100;
/** Destinations are small: room for a few guests each, so placement and reservations matter. */
const DESTINATION_CAPACITY: Resources = { cores: 4, memoryMiB: 4096, diskGiB: 60 };
const SOURCE_CAPACITY: Resources = { cores: 128, memoryMiB: 131072, diskGiB: 2000 };

export interface DrainVariant {
  readonly name: string;
  readonly limits: Limits;
  readonly reserve: boolean;
}

export const DRAIN_VARIANTS: readonly DrainVariant[] = Object.freeze([
  { name: 'ferry', limits: { perSource: 2, perDestination: 2, perCluster: 8 }, reserve: true },
  { name: 'serial', limits: { perSource: 1, perDestination: 1, perCluster: 1 }, reserve: true },
  { name: 'all-at-once', limits: { perSource: 64, perDestination: 64, perCluster: 64 }, reserve: false },
]);

export interface DrainRun {
  readonly variant: string;
  /** From MigrateInstances acknowledged to every item final, simulated ms. */
  readonly makespanMs: number;
  readonly completed: number;
  readonly failed: number;
  /** Steps × hosts checked, and those found over capacity. */
  readonly checks: number;
  readonly overCommits: number;
}

function over(a: Resources, cap: Resources): boolean {
  return a.cores > cap.cores || a.memoryMiB > cap.memoryMiB || a.diskGiB > cap.diskGiB;
}

/** Guest memory → its dirty rate, by the mix's types (every type of the mix has its own memory size). */
function dirtyRateOf(spec: DomainSpec): number | undefined {
  return DRAIN_MIX.find((m) => findVmType(m.type)?.memoryMiB === spec.resources.memoryMiB)?.dirtyRateMiBps;
}

/** The two-stream physical bound and the jobs it is built from, in ms. */
export function physicalBound(streams = 2): { readonly boundMs: number; readonly jobsMs: number } {
  const jobs = DRAIN_MIX.flatMap((m) => Array.from({ length: m.count }, () => planMigration({
    ...MIGRATION_DEFAULTS, memoryMiB: findVmType(m.type)!.memoryMiB, dirtyRateMiBps: m.dirtyRateMiBps,
  }).totalMs));
  const sum = jobs.reduce((a, b) => a + b, 0);
  return { boundMs: Math.max(sum / streams, ...jobs), jobsMs: sum };
}

function settingsFor(v: DrainVariant): SimSettings {
  const base = simSettings(DESTINATIONS + 1);
  const source = base.hosts[0]!;
  return Object.freeze({
    ...base,
    capacity: DESTINATION_CAPACITY,
    capacities: { [source]: SOURCE_CAPACITY },
    dirtyRateOf,
    // Two full-speed streams' worth: a third stream, and every one after, shares the link.
    nicMbps: 2 * MIGRATION_DEFAULTS.bandwidthMbps,
    limits: v.limits,
    // The product's migration deadlines and poll period (the simulator's own are short, for chaos).
    timeouts: DEFAULT_TIMEOUTS,
    pollIntervalMs: 5000,
    ncTimeoutMs: 5000,
    clcTimeoutMs: 30_000,
    skew: { maxOffsetMs: 0, maxDriftPpm: 0 },
    storeLatencyMs: 3,
    driverLatencyMs: 2,
  });
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs one variant on a fresh simulated cloud (same seed: same ids, same latencies). */
export async function runDrain(v: DrainVariant, seed = 19): Promise<DrainRun> {
  const settings = settingsFor(v);
  const cloud = new SimCloud(seed, settings, () => undefined);
  const [source, ...destinations] = settings.hosts as [string, ...string[]];
  const capacityOf = (h: string): Resources => settings.capacities?.[h] ?? settings.capacity;
  let checks = 0;
  let overCommits = 0;
  const check = (): void => {
    for (const t of readTruth(cloud)) {
      checks++;
      const held = t.domains.reduce((a, d) => ({ cores: a.cores + d.resources.cores, memoryMiB: a.memoryMiB + d.resources.memoryMiB, diskGiB: a.diskGiB + d.resources.diskGiB }), { cores: 0, memoryMiB: 0, diskGiB: 0 });
      if (over(committedOn(t), capacityOf(t.host)) || over(held, capacityOf(t.host))) overCommits++;
    }
  };
  /** Runs the cloud's timers until `done` holds (or `limitMs` of simulated time pass: the bench then says so). */
  const runUntil = async (done: () => boolean, what: string, limitMs = 3_600_000): Promise<void> => {
    const until = cloud.clock.now() + limitMs;
    for (;;) {
      await settle();
      await settle();
      check();
      if (done()) return;
      const next = cloud.clock.nextTimerAt();
      if (next === undefined || next > until) throw new Error(`drain bench (${v.name}): ${what} did not happen within ${limitMs / 1000} s of simulated time`);
      cloud.clock.advance(Math.max(0, next - cloud.clock.now()));
    }
  };
  const act = async (action: string, pairs: [string, string][]): Promise<Record<string, unknown>> => {
    let answer: Record<string, unknown> | undefined;
    let failure: unknown;
    const clc = cloud.clc!;
    void clc.act(action, pairs).then((r) => { answer = r as Record<string, unknown>; }, (e: unknown) => { failure = e; });
    await runUntil(() => answer !== undefined || failure !== undefined, action);
    if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure));
    return answer!;
  };
  const nc = (h: string): NcSnapshot | undefined => cloud.disk.read(`nc/${h}`) as NcSnapshot | undefined;

  await cloud.boot();
  await runUntil(() => cloud.clc?.core !== undefined, 'the CLC start');
  const partition = settings.clusters[0]!.partition;
  // The guests go to the source: every destination is out of service while they start.
  for (const h of destinations) await act('DisableService', [['Type', 'node'], ['Host', h], ['Partition', partition]]);
  for (const m of DRAIN_MIX) {
    await act('RunInstances', [['ImageId', 'emi-00000001'], ['InstanceType', m.type], ['MinCount', String(m.count)], ['MaxCount', String(m.count)]]);
  }
  const total = DRAIN_MIX.reduce((a, m) => a + m.count, 0);
  const runningOnSource = (): number => readTruth(cloud).find((t) => t.host === source)!.domains.filter((d) => d.state === 'running').length;
  await runUntil(() => runningOnSource() === total, `${total} guests running on the source`);
  for (const h of destinations) await act('EnableService', [['Type', 'node'], ['Host', h], ['Partition', partition]]);
  // The CC plans from its view: wait until it has seen every destination enabled.
  const cc = cloud.ccs.get('cc')!;
  await runUntil(() => destinations.every((h) => cc.keeper.get().entries.find((e) => e.node.host === h)?.node.nodeState === 'enabled'), 'the CC seeing the destinations enabled');

  const answer = await act('MigrateInstances', [['SourceHost', source], ['ReserveDestinations', String(v.reserve)]]);
  const started = cloud.clock.now();
  const migrationId = answer.migrationId as string;
  const items = (): readonly { readonly state: string }[] => nc(source)?.plans[migrationId]?.items ?? [];
  await runUntil(() => items().length === total && items().every((i) => FINAL_ITEM_STATES.includes(i.state as never)), 'every item final');
  const makespanMs = cloud.clock.now() - started;
  const completed = items().filter((i) => i.state === 'completed').length;
  return { variant: v.name, makespanMs, completed, failed: total - completed, checks, overCommits };
}
