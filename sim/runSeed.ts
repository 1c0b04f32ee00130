/**
 * Runs one seed: builds the cloud, plays the schedule (chaos phase), heals everything (network
 * healed, every process restarted, faults stopped) and lets time run until the cloud has settled;
 * a heal phase in which no migration item changes state for `stuckMs` fails liveness. Steps go from one timer to the next on the ManualClock; after
 * each step every promise chain runs to quiescence, then the invariants are checked.
 */
import { createHash } from 'node:crypto';
import { Coverage, type CoverageCounts } from './coverage.js';
import { listInstances, reservationsOfView } from '../cc/view.js';
import { checkSettled, checkStep, type CcBelief, type Violation } from './invariants.js';
import { Ledger } from './ledger.js';
import { Prng } from './prng.js';
import { runFault } from './faults.js';
import { describeEvent, generateSchedule, type SimEvent, type WorkloadEvent } from './schedule.js';
import { simSettings, type SimSettings } from './settings.js';
import { SimCloud } from './simCloud.js';
import { CLC_ELECTION } from './simEtcd.js';
import { readTruth, type HostTruth } from './truth.js';
import { Workload } from './workload.js';
import { checkHaStep, checkRestart, type HaSectionTruth } from './haInvariants.js';
import { checkQuarantineStep, type QuarantineMemory } from './quarantineInvariants.js';
import { checkVolumeStep } from './volumeInvariants.js';
import type { HaState } from '../clc/ha/hostHaState.js';
import { CLC_STORE } from './simClc.js';
import { WORKLOAD_KINDS } from './schedule.js';
import { persistedDomains } from './truth.js';
import type { ClcState } from '../clc/state/clcStore.js';

export interface SeedOptions {
  /** Default: from the seed (3 to 5 hosts). */
  readonly settings?: SimSettings;
  /** Keep only these schedule events (by index): a shrunk replay. */
  readonly keep?: ReadonlySet<number>;
  /** Play this schedule instead of the seed's (a regression's recorded schedule survives generator changes). */
  readonly schedule?: readonly SimEvent[];
  /** Collect the trace lines (for printing a replay), not only their hash. */
  readonly collectTrace?: boolean;
  /** Trace every change of where this instance is (domains and NC records): for debugging a replay. */
  readonly watch?: string;
  /** The operator may confirm a fence without looking (outside the safety envelope; never in CI seeds). */
  readonly carelessOperator?: boolean;
}

export interface SeedViolation extends Violation {
  /** Step number and simulated ms since the start when it was first seen. */
  readonly step: number;
  readonly atMs: number;
}

export interface SeedResult {
  readonly seed: number;
  readonly violations: readonly SeedViolation[];
  readonly traceHash: string;
  readonly steps: number;
  readonly events: readonly SimEvent[];
  readonly coverage: CoverageCounts;
  readonly trace: readonly string[];
  /**
   * Violations that followed a BMC's lie or a careless operator's confirmation (a restart from a host
   * that still ran): outside the safety envelope of any fencing, so not counted as Ferry's.
   */
  readonly unsafe: readonly SeedViolation[];
}

/** In the heal phase, how often the admin looks after fenced hosts (Workload.tendFencedHosts). */
const TEND_EVERY_MS = 5000;

/** A run that cannot make progress (a zero-delay timer loop) stops here and says so. */
const MAX_STEPS = 200_000;

/**
 * The cloud's shape from the seed: 3 to 6 hosts of 2 to 6 cores, the migration limits, 1 to 3
 * CCs (one in about half of the seeds; at least two hosts per partition) and 1 to 3 CLC replicas.
 * Two CC replicas per partition in about two seeds of five. `ccCount`, `clcReplicas` and `ccReplicas` override the seed's (a recorded schedule replays on the cloud it was recorded on).
 */
export function settingsFor(seed: number, ccCount?: number, clcReplicas?: number, ccReplicas?: number): SimSettings {
  const r = Prng.fork(seed, 'shape');
  const hosts = r.int(3, 6);
  const cores = r.int(2, 6);
  // Its own stream, so the rest of the shape is what it was with one CC.
  const k = Prng.fork(seed, 'ccs');
  const base = simSettings(hosts, ccCount ?? (k.chance(0.5) ? 1 : k.int(2, 3)));
  // CLC replicas (issue 21), from their own stream too: one CLC in about half of the seeds, two or three replicas in the rest.
  const c = Prng.fork(seed, 'clcs');
  // CC replicas (issue 21), from their own stream: one CC per partition, or two replicas of each.
  const ccr = ccReplicas ?? (Prng.fork(seed, 'ccReplicas').chance(0.4) ? 2 : 1);
  return Object.freeze({
    ...base,
    clcReplicas: clcReplicas ?? (c.chance(0.5) ? 1 : c.int(2, 3)),
    ...(ccr > 1 ? { ccReplicas: ccr } : {}),
    capacity: { cores, memoryMiB: 256 * cores, diskGiB: 10 * cores },
    limits: { perSource: r.int(1, 3), perDestination: r.int(1, 2), perCluster: r.int(1, 6) },
  });
}

function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export async function runSeed(seed: number, o: SeedOptions = {}): Promise<SeedResult> {
  const settings = o.settings ?? settingsFor(seed);
  const all = o.schedule ?? generateSchedule(seed, settings, { carelessOperator: o.carelessOperator === true }).events;
  const events = all.filter((_, i) => o.keep === undefined || o.keep.has(i));
  const hash = createHash('sha256');
  const lines: string[] = [];
  let start = settings.startMs;
  const trace = (line: string): void => {
    const text = `${cloud.clock.now() - start} ${line}`;
    hash.update(text).update('\n');
    if (o.collectTrace) lines.push(text);
  };
  const cloud = new SimCloud(seed, settings, trace);
  const ledger = new Ledger();
  const workload = new Workload(cloud, ledger, trace);
  const coverage = new Coverage();
  const violations: SeedViolation[] = [];
  const unsafe: SeedViolation[] = [];
  let step = 0;
  const haStates = new Map<string, HaState>();
  const quarantines: QuarantineMemory = new Map();
  const haTruth = (): HaSectionTruth | undefined => (cloud.disk.read(CLC_STORE) as ClcState | undefined)?.ha;
  /** Hosts put outside the safety envelope (a lying BMC, a careless confirmation); `tainted` once a restart from one was sent. */
  const outside = (): Set<string> => new Set([...cloud.bmcLies.map((l) => l.host), ...ledger.carelessConfirms]);
  let tainted = false;
  const record = (v: { invariant: string; detail: string }): void => {
    const at = { ...v, step, atMs: cloud.clock.now() - start };
    if (tainted || (v.invariant.startsWith('4') && [...outside()].some((h) => v.detail.includes(`${h} `)))) unsafe.push(at);
    else violations.push(at);
  };
  cloud.beforePowerOff.push((host) => {
    // Its VMs die with it: set aside by "never lost" (Host HA may restart them elsewhere).
    for (const id of [...persistedDomains(cloud, host), ...(cloud.node(host).slot.current?.list().filter((d) => d.state === 'running').map((d) => d.id) ?? [])]) {
      ledger.lostWithHost.add(id);
    }
  });
  cloud.onClcSend.push((op, body) => {
    const from = body.restartFrom as string[] | undefined;
    if (op !== 'ccRunInstances' || !from) return;
    const ids = body.instanceIds as string[];
    const out = outside();
    if (from.some((h) => out.has(h))) tainted = true;
    trace(`clc restarts ${ids.join(',')} from ${from.join(',')}`);
    for (const v of checkRestart(haTruth(), readTruth(cloud), from, ids)) record(v);
    // A user-stopped instance is not lost: host HA leaves it stopped where it is (issue 18 part 5).
    const stopped = ids.filter((id) => ledger.isStopped(id));
    if (stopped.length > 0) record({ invariant: '4 restart of a stopped instance', detail: `restart of ${stopped.join(',')} from ${from.join(',')}, stopped by their user` });
  });

  let watched = '';
  /** Checks the step's invariants; returns the truth it read (the settled check reuses it). */
  const check = (): HostTruth[] => {
    const truth = readTruth(cloud);
    if (o.watch !== undefined) {
      const id = o.watch;
      const now = truth.map((t) => {
        const d = t.domains.find((x) => x.id === id);
        const r = t.nc?.instances[id];
        const inc = t.nc?.incoming[id];
        return d || r || inc ? `${t.host}[${d?.state ?? '-'} ${r ? `${r.phase}/${r.migrationState}` : '-'}${inc ? ` in:${inc.state}` : ''}]` : '';
      }).filter((x) => x !== '').join(' ');
      if (now !== watched) lines.push(`${cloud.clock.now() - start} watch ${id}: ${now || 'nowhere'}`);
      watched = now;
    }
    const ha = haTruth();
    coverage.observe(truth, ha);
    for (const v of checkStep(truth, ledger, settings.capacity)) record(v);
    for (const v of checkHaStep(ha, truth, haStates)) record(v);
    for (const v of checkQuarantineStep(truth, quarantines)) record(v);
    for (const v of checkVolumeStep(truth, cloud.volumes)) record(v);
    for (const u of cloud.net.uncoded.splice(0)) record({ invariant: 'coded errors', detail: `${u.to} ${u.operation} threw ${String(u.error)}` });
    for (const u of ledger.uncoded.splice(0)) record({ invariant: 'coded errors', detail: `clc ${u}` });
    // Invariant 10, leadership (issue 21): no power action off the lease, no CC acting on an older CLC epoch.
    for (const v of cloud.leaseViolations.splice(0)) record(v);
    for (const v of cloud.epochs.violations.splice(0)) record(v);
    // 10c, 10d with CC replicas: no NC acting on an older CC epoch, no deposed CC's write committed.
    for (const v of cloud.ncEpochs.violations.splice(0)) record(v);
    for (const v of cloud.ccStores.violations.splice(0)) record(v);
    return truth;
  };

  // Hypervisor tuning holds from power-on; everything else runs on the clock.
  let next = 0;
  while (events[next]?.kind === 'tune' && events[next]?.at === 0) await runFault(cloud, events[next++] as Extract<SimEvent, { kind: 'tune' }>, ledger);
  await cloud.boot();
  cloud.net.onDeliver.push((d) => {
    if (d.operation === 'ncModifyNode') ledger.modifyDelivered(d.to, d.body.stateName as 'enabled' | 'disabled');
    // A quarantine disables the node (a release leaves its state as it is).
    if (d.operation === 'ncQuarantineNode' && d.body.quarantined === true) ledger.modifyDelivered(d.to, 'disabled');
    // An attach routed to a node grants it the volume (a host fenced from it gets it back only this way, or by a migration's connect).
    if (d.operation === 'ncAttachVolume') cloud.volumes.granted(d.body.volumeId as string, d.to);
  });
  start = cloud.clock.now();
  const chaosEnd = start + settings.chaosMs;
  const deadline = chaosEnd + settings.healMs;
  let healedAt: number | undefined;
  let progress: { readonly signature: string; readonly at: number } | undefined;
  let settled = false;
  let tendAt = 0;

  while (step++ < MAX_STEPS) {
    await settle();
    const now = cloud.clock.now();
    for (let e = events[next]; e !== undefined && start + e.at <= now; e = events[++next]) {
      trace(`event ${describeEvent(e)}`);
      if (isWorkload(e)) workload.run(e);
      else await runFault(cloud, e, ledger);
      await settle();
    }
    if (healedAt === undefined && now >= chaosEnd) {
      trace('heal');
      await heal(cloud);
      healedAt = now;
      await settle();
    }
    if (healedAt !== undefined && now >= tendAt) {
      workload.tendFencedHosts();
      tendAt = now + TEND_EVERY_MS;
      await settle();
    }
    const truth = check();
    if (violations.length > 0 || unsafe.length > 0) break;
    if (healedAt !== undefined) {
      const belief = ccBelief(cloud);
      // With CC replicas a partition must have a leader again (its view is the leader's) before the cloud counts as settled.
      if (now - healedAt >= settings.timeouts.prepareMs && (belief !== undefined || cloud.ccReplicaCount === 1) && checkSettled(truth, ledger, belief).length === 0) {
        settled = true;
        break;
      }
      const signature = itemStates(truth);
      if (progress === undefined || signature !== progress.signature) progress = { signature, at: now };
      if (now - progress.at >= settings.stuckMs) break;
    }
    if (now >= deadline) break;
    const due = [cloud.clock.nextTimerAt(), events[next] ? start + (events[next] as SimEvent).at : undefined, healedAt === undefined ? chaosEnd : tendAt, deadline]
      .filter((t): t is number => t !== undefined);
    cloud.clock.advance(Math.max(0, Math.min(...due) - now));
  }
  if (violations.length === 0 && unsafe.length === 0 && !settled) {
    const atMs = cloud.clock.now() - start;
    const left = step >= MAX_STEPS ? [{ invariant: 'progress', detail: `no end after ${MAX_STEPS} steps` }] : checkSettled(readTruth(cloud), ledger, ccBelief(cloud));
    for (const v of left) (tainted ? unsafe : violations).push({ ...v, step, atMs });
  }
  coverage.leadership(leadershipCounts(cloud, events));
  return { seed, violations, unsafe, traceHash: hash.digest('hex').slice(0, 16), steps: step, events, coverage: coverage.counts, trace: lines };
}

/** Every unfinished migration item's state: when this stops changing, nothing moves. */
function itemStates(truth: readonly HostTruth[]): string {
  return truth.flatMap((t) => Object.values(t.nc?.plans ?? {}).flatMap((p) => p.items.map((i) => `${p.migrationId}/${i.instanceId}:${i.state}`))).join(' ');
}

/** The CCs' views as DescribeInstances and the schedulers see them, each host's from its own CC (none while a CC is down). */
function ccBelief(cloud: SimCloud): CcBelief | undefined {
  const instances: { instanceId: string; host: string }[] = [];
  const reservedOn = new Set<string>();
  for (const { cc: name } of cloud.settings.clusters) {
    // With CC replicas, the leader's (a follower does not poll); none while the partition has no leader.
    const cc = cloud.ccReplicaCount > 1 ? cloud.ccLeader(name) : cloud.ccs.get(name);
    const view = cc?.life.isAlive ? cc.keeper.get() : undefined;
    if (!view) return undefined;
    instances.push(...listInstances(view).filter((i) => i.state !== 'terminated').map((i) => ({ instanceId: i.instanceId, host: i.host })));
    const reservations = reservationsOfView(view);
    for (const h of [...reservations.byHost.keys(), ...reservations.reservedHosts]) reservedOn.add(h);
  }
  return { instances, reservedOn: [...reservedOn] };
}

/** What a run with CLC or CC replicas exercised of leadership, for the coverage report (nothing with one CLC and one CC per partition). */
function leadershipCounts(cloud: SimCloud, events: readonly SimEvent[]): Record<string, number> {
  cloud.etcd.observe();
  const count = (kind: string): number => events.filter((e) => e.kind === kind).length;
  const clc: Record<string, number> = (cloud.settings.clcReplicas ?? 1) < 2 ? {} : {
    'seeds with CLC replicas': 1,
    'clcLeaderChange faults': count('clcLeaderChange'),
    'clcStaleLeader faults': count('clcStaleLeader'),
    'leaderships granted by etcd': cloud.etcd.terms.filter((t) => t.election === CLC_ELECTION).length,
    'changes a CC acted on with an epoch': cloud.epochs.accepted,
    'changes a CC refused StaleLeaderEpoch': cloud.epochs.staleRefused,
    'admin requests answered NotLeader': cloud.notLeaderAnswers,
  };
  const cc: Record<string, number> = cloud.ccReplicaCount < 2 ? {} : {
    'seeds with CC replicas': 1,
    'ccLeaderChange faults': count('ccLeaderChange'),
    'ccStaleLeader faults': count('ccStaleLeader'),
    'crashCc faults (of a CC leader)': count('crashCc'),
    'CC leaderships granted by etcd': cloud.etcd.terms.filter((t) => t.election !== CLC_ELECTION).length,
    'NC changes acted on with a CC epoch': cloud.ncEpochs.accepted,
    'NC changes refused StaleLeaderEpoch': cloud.ncEpochs.staleRefused,
    'changes a CC follower refused NotLeader': cloud.ccNotLeader,
    'CC shared-store writes committed': cloud.ccStores.committed,
    'CC shared-store writes refused StoreNotLeader': cloud.ccStores.refused,
  };
  return { ...clc, ...cc };
}

function isWorkload(e: SimEvent): e is Extract<SimEvent, WorkloadEvent> {
  return WORKLOAD_KINDS.has(e.kind);
}

/** Faults stop: the network heals and every host, NC and CC runs again. */
async function heal(cloud: SimCloud): Promise<void> {
  cloud.disarmCrashes();
  cloud.net.heal();
  cloud.mig.heal();
  for (const n of cloud.nodes.values()) {
    await cloud.powerOn(n.host);
    cloud.startNc(n.host);
  }
  for (const c of cloud.settings.clusters) cloud.startCc(c.cc);
  cloud.leaderFaults.healAll();
  for (const f of cloud.ccLeaderFaults.values()) f.healAll();
  cloud.startClc();
}
