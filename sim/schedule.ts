/**
 * The seed's plan for one run: workload operations and faults, each at a simulated time. It is
 * plain data, generated up front from its own stream, so a run can be replayed with events removed
 * (shrinking) without changing any other draw. Instances and migrations are named by `pick`, an
 * index resolved when the event runs (modulo what exists then).
 */
import type { NodeState } from '../shared/protocol/common.js';
import type { SwitchoverCut } from './migrationNet.js';
import { Prng } from './prng.js';
import type { SimSettings } from './settings.js';
import type { BmcMode } from './simBmc.js';

export const WORKLOAD_KINDS: ReadonlySet<string> = new Set(['run', 'terminate', 'modify', 'drain', 'migrateOne', 'cancel', 'haSetup', 'haSwitch', 'fenceHost', 'confirmFenced', 'quarantine',
  'createVolume', 'attachVolume', 'detachVolume', 'deleteVolume', 'stopInstance', 'startInstance', 'rebootInstance']);

/** Device names the workload attaches volumes as (a few, so two attaches to one instance may clash). */
export const SIM_DEVICES = ['/dev/sdf', '/dev/sdg', '/dev/sdh'] as const;

export type HypervisorMode = 'normal' | 'slow' | 'failing';

export type WorkloadEvent =
  | { readonly kind: 'run'; readonly count: number; readonly minCount: number; readonly large: boolean }
  | { readonly kind: 'terminate'; readonly pick: number }
  | { readonly kind: 'modify'; readonly host: string; readonly state: NodeState }
  | { readonly kind: 'drain'; readonly host: string; readonly destinations: readonly string[]; readonly allowHosts: boolean; readonly partial: boolean; readonly reserve: boolean }
  | { readonly kind: 'migrateOne'; readonly pick: number; readonly destinations: readonly string[]; readonly allowHosts: boolean }
  | { readonly kind: 'cancel'; readonly pick: number }
  /** The admin configures host HA for the partition and every host's BMC, then switches it on. */
  | { readonly kind: 'haSetup'; readonly maxUnhealthy: string; readonly recoverFailureThreshold: number }
  | { readonly kind: 'haSwitch'; readonly host: string; readonly enabled: boolean }
  | { readonly kind: 'fenceHost'; readonly host: string }
  /** The operator confirms a host being fenced is off — only if it is, unless `careless` (never in CI seeds). */
  | { readonly kind: 'confirmFenced'; readonly host: string; readonly careless: boolean }
  /** The admin quarantines a node (issue 18), or lifts its quarantine; a drain of it and an instance of it named come with it. */
  | { readonly kind: 'quarantine'; readonly host: string; readonly quarantined: boolean }
  /** Volumes (issue 18): created in a partition; volumes and instances are named by `pick`s, resolved when the event runs. */
  | { readonly kind: 'createVolume'; readonly partition: string; readonly sizeGiB: number }
  | { readonly kind: 'attachVolume'; readonly volume: number; readonly pick: number; readonly device: string }
  | { readonly kind: 'detachVolume'; readonly volume: number; readonly force: boolean }
  | { readonly kind: 'deleteVolume'; readonly volume: number }
  /** The user stops, starts or reboots an instance (issue 18 part 5). */
  | { readonly kind: 'stopInstance'; readonly pick: number; readonly force: boolean }
  /** `disableFirst`: the admin disables the stopped instance's node first, so the start re-homes it. */
  | { readonly kind: 'startInstance'; readonly pick: number; readonly disableFirst: boolean }
  | { readonly kind: 'rebootInstance'; readonly pick: number };

export type FaultEvent =
  | { readonly kind: 'netChaos'; readonly loss: number; readonly duplicate: number; readonly maxDelayMs: number }
  | { readonly kind: 'netCalm' }
  | { readonly kind: 'partitionCc'; readonly host: string }
  | { readonly kind: 'partitionMig'; readonly a: string; readonly b: string }
  | { readonly kind: 'hangMig'; readonly a: string; readonly b: string }
  /** The next switch-over to or from `host` breaks: the final state is lost, or the destination's answer is. */
  | { readonly kind: 'breakSwitchover'; readonly host: string; readonly phase: SwitchoverCut }
  | { readonly kind: 'healNet' }
  | { readonly kind: 'crashNc'; readonly host: string }
  | { readonly kind: 'restartNc'; readonly host: string }
  | { readonly kind: 'crashNcAfterWrites'; readonly host: string; readonly writes: number }
  /** The NC dies and its nc.json is deleted (its identity file stays): it must come back disabled (issue 16). */
  | { readonly kind: 'loseNcStore'; readonly host: string }
  /** CC faults name their CC (`cc`, `cc2`, …); without `cc` (schedules recorded with one CC) the first. */
  | { readonly kind: 'crashCcAfterCalls'; readonly calls: number; readonly cc?: string }
  | { readonly kind: 'crashCc'; readonly cc?: string }
  | { readonly kind: 'restartCc'; readonly cc?: string }
  | { readonly kind: 'powerOff'; readonly host: string }
  | { readonly kind: 'powerOn'; readonly host: string }
  | { readonly kind: 'tune'; readonly host: string; readonly mode: HypervisorMode }
  /** An NTP step: the named process's wall clock ('cc', 'cc2', 'nc <host>', 'hv <host>') jumps by deltaMs. */
  | { readonly kind: 'clockStep'; readonly clock: string; readonly deltaMs: number }
  /** The hypervisor answers slowly (up to maxMs per call): the NC's mailbox backs up, calls to it time out. */
  | { readonly kind: 'slowHv'; readonly host: string; readonly maxMs: number }
  | { readonly kind: 'partitionClc'; readonly cc?: string }
  /** With one CLC: kill -9 of it; with replicas, of the one that leads (restartClc starts every replica that is down). */
  | { readonly kind: 'crashClc' }
  | { readonly kind: 'restartClc' }
  /** CLC replicas (issue 21): the leader cannot reach etcd for `cutMs`; past its lease, another replica takes over. */
  | { readonly kind: 'clcLeaderChange'; readonly cutMs: number }
  /** CLC replicas: the leader is paused for `pauseMs` (past its lease), then resumes with its work under way. */
  | { readonly kind: 'clcStaleLeader'; readonly pauseMs: number }
  /** CC replicas: the partition's CC leader cannot reach etcd for `cutMs`; past its lease, the other replica takes over. */
  | { readonly kind: 'ccLeaderChange'; readonly cutMs: number; readonly cc?: string }
  /** CC replicas: the partition's CC leader is paused for `pauseMs` (past its lease) right after its next change to an NC, then resumes. */
  | { readonly kind: 'ccStaleLeader'; readonly pauseMs: number; readonly cc?: string }
  /** The host's BMC turns dead, slow, or lying (or ok again). */
  | { readonly kind: 'bmc'; readonly host: string; readonly mode: BmcMode };

export type SimEvent = (WorkloadEvent | FaultEvent) & { readonly at: number };

export interface Schedule {
  /** In time order; the index is the event's name in traces and shrunk replays. */
  readonly events: readonly SimEvent[];
}

/** How often each fault is drawn (a kind listed twice is twice as likely). */
const FAULT_WEIGHTS = [
  'netChaos', 'netChaos', 'netChaos', 'partitionCc', 'partitionCc', 'partitionMig', 'partitionMig',
  'crashNc', 'crashNcAfterWrites', 'crashNcAfterWrites', 'crashNcAfterWrites', 'crashCc', 'crashCcAfterCalls', 'crashCcAfterCalls', 'powerOff',
  'slowHv', 'slowHv', 'hangMig', 'hangMig', 'breakSwitchover', 'breakSwitchover',
  'clockStep', 'clockStep', 'partitionClc', 'crashClc', 'powerOff', 'powerOff', 'bmc', 'bmc',
] as const;

/** NTP steps: small corrections up to a badly set clock (a minute and a half either way). */
const CLOCK_STEPS_MS = [-90_000, -20_000, -3000, 3000, 20_000, 90_000] as const;

const BMC_FAULTS: readonly BmcMode[] = ['dead', 'slow', 'slow', 'liesOff', 'liesFailed'];

/** `carelessOperator`: ConfirmHostFenced without looking (outside Ferry's safety envelope; not in CI seeds). */
export function generateSchedule(seed: number, s: SimSettings, o: { readonly carelessOperator?: boolean } = {}): Schedule {
  const r = Prng.fork(seed, 'schedule');
  const events: SimEvent[] = [];
  const hosts = s.hosts;
  const host = (): string => r.pick(hosts) as string;
  const time = (): number => r.int(0, s.chaosMs);
  // With one CC nothing is drawn, so one-CC schedules are what they were before there were several.
  const ccs = s.clusters.map((c) => c.cc);
  const cc = (): { cc?: string } => (ccs.length > 1 ? { cc: r.pick(ccs) as string } : {});
  const peers = (h: string): readonly string[] => (s.clusters.find((c) => c.hosts.includes(h)) ?? { hosts }).hosts;
  // Hypervisor modes hold from the start (a host's tuning is read when it powers on).
  for (const h of hosts) {
    const mode = r.pick(['normal', 'normal', 'normal', 'slow', 'failing'] as const) as HypervisorMode;
    if (mode !== 'normal') events.push({ at: 0, kind: 'tune', host: h, mode });
  }
  // A few runs early, so there is something to migrate.
  for (let i = r.int(1, s.earlyRuns); i > 0; i--) events.push({ at: r.int(0, 2000), kind: 'run', count: r.int(1, 4), minCount: 1, large: r.chance(0.25) });
  // Host HA is switched on early in most runs; its operator commands come at random times.
  const ha = r.chance(0.85);
  if (ha) {
    events.push({ at: r.int(100, 1500), kind: 'haSetup', maxUnhealthy: r.pick(['1', '2', '34%', '50%']) as string, recoverFailureThreshold: r.int(0, 2) });
    for (let i = r.int(0, 3); i > 0; i--) events.push({ at: time(), kind: 'haSwitch', host: host(), enabled: r.chance(0.5) });
    for (let i = r.int(0, 2); i > 0; i--) events.push({ at: time(), kind: 'fenceHost', host: host() });
    for (let i = r.int(2, 8); i > 0; i--) events.push({ at: time() + r.int(0, 20_000), kind: 'confirmFenced', host: host(), careless: o.carelessOperator === true && r.chance(0.5) });
  }
  // Operations come in bursts, so they overlap each other and the faults.
  const bursts = Array.from({ length: r.int(2, 6) }, time);
  for (let i = r.int(s.maxOps / 3, s.maxOps); i > 0; i--) {
    const at = r.chance(0.6) ? Math.min(s.chaosMs, (r.pick(bursts) as number) + r.int(0, 800)) : time();
    events.push({ at, ...workload(r, hosts, host, peers, s.clusters.length > 1) });
  }
  for (let i = r.int(0, s.maxFaults); i > 0; i--) {
    const at = time();
    const down = r.int(200, 15_000);
    switch (r.pick(FAULT_WEIGHTS)) {
      case 'netChaos': events.push({ at, kind: 'netChaos', loss: r.pick([0.05, 0.2, 0.5]) as number, duplicate: r.pick([0, 0.1, 0.3]) as number, maxDelayMs: r.pick([20, 300, 1500]) as number }, { at: at + down, kind: 'netCalm' }); break;
      case 'partitionCc': events.push({ at, kind: 'partitionCc', host: host() }, { at: at + down, kind: 'healNet' }); break;
      case 'partitionMig': {
        const [a, b] = [host(), host()];
        if (a !== b) events.push({ at, kind: 'partitionMig', a, b }, { at: at + down, kind: 'healNet' });
        break;
      }
      case 'hangMig': {
        const [a, b] = [host(), host()];
        if (a !== b) events.push({ at, kind: 'hangMig', a, b }, { at: at + down, kind: 'healNet' });
        break;
      }
      case 'breakSwitchover': events.push({ at, kind: 'breakSwitchover', host: host(), phase: r.pick(['final-lost', 'reply-lost'] as const) as SwitchoverCut }); break;
      case 'clockStep': {
        const clock = r.pick([ccs.length > 1 ? (r.pick(ccs) as string) : 'cc', `nc ${host()}`, `hv ${host()}`]) as string;
        events.push({ at, kind: 'clockStep', clock, deltaMs: r.pick(CLOCK_STEPS_MS) as number });
        break;
      }
      case 'crashNc': { const h = host(); events.push({ at, kind: 'crashNc', host: h }, { at: at + down, kind: 'restartNc', host: h }); break; }
      case 'crashNcAfterWrites': { const h = host(); events.push({ at, kind: 'crashNcAfterWrites', host: h, writes: r.int(1, 6) }, { at: at + down, kind: 'restartNc', host: h }); break; }
      case 'crashCc': { const which = cc(); events.push({ at, kind: 'crashCc', ...which }, { at: at + down, kind: 'restartCc', ...which }); break; }
      case 'crashCcAfterCalls': { const which = cc(); events.push({ at, kind: 'crashCcAfterCalls', calls: r.int(1, 8), ...which }, { at: at + down, kind: 'restartCc', ...which }); break; }
      case 'slowHv': { const h = host(); events.push({ at, kind: 'slowHv', host: h, maxMs: r.pick([300, 2000]) as number }, { at: at + down, kind: 'slowHv', host: h, maxMs: s.driverLatencyMs }); break; }
      case 'powerOff': { const h = host(); events.push({ at, kind: 'powerOff', host: h }, { at: at + down * 2, kind: 'powerOn', host: h }); break; }
      case 'partitionClc': events.push({ at, kind: 'partitionClc', ...cc() }, { at: at + down, kind: 'healNet' }); break;
      case 'crashClc': events.push({ at, kind: 'crashClc' }, { at: at + down, kind: 'restartClc' }); break;
      case 'bmc': { const h = host(); events.push({ at, kind: 'bmc', host: h, mode: r.pick(BMC_FAULTS) as BmcMode }, { at: at + down * 2, kind: 'bmc', host: h, mode: 'ok' }); break; }
      default: break;
    }
  }
  // A lost nc.json (issue 16), drawn from its own stream so that every other draw stays as it was.
  const loss = Prng.fork(seed, 'storeLoss');
  if (loss.chance(0.3)) {
    const [h, at, down] = [loss.pick(hosts) as string, loss.int(0, s.chaosMs), loss.int(200, 15_000)];
    events.push({ at, kind: 'loseNcStore', host: h }, { at: at + down, kind: 'restartNc', host: h });
  }
  // Quarantines (issue 18), from their own stream too: a node quarantined, drained and named meanwhile, then lifted.
  const q = Prng.fork(seed, 'quarantine');
  for (let i = q.chance(0.5) ? q.int(1, 2) : 0; i > 0; i--) {
    const [h, at, held] = [q.pick(hosts) as string, q.int(0, s.chaosMs), q.int(500, 20_000)];
    events.push({ at, kind: 'quarantine', host: h, quarantined: true });
    events.push({ at: at + q.int(0, held), kind: 'drain', host: h, destinations: [], allowHosts: true, partial: true, reserve: false });
    events.push({ at: at + q.int(0, held), kind: 'migrateOne', pick: q.int(0, 1000), destinations: [h], allowHosts: true });
    events.push({ at: at + held, kind: 'quarantine', host: h, quarantined: false });
  }
  events.push(...volumeEvents(seed, s), ...powerEvents(seed, s), ...leaderEvents(seed, s), ...ccLeaderEvents(seed, s));
  // Stable sort: same-time events keep their generation order.
  return { events: events.map((e, i) => [e, i] as const).sort((x, y) => x[0].at - y[0].at || x[1] - y[1]).map(([e]) => e) };
}

/**
 * Leader changes (issue 21), from their own stream and only with CLC replicas: in most such seeds the
 * leader loses etcd for a while or is paused past its lease, once or a few times, and now and then
 * the leader is killed and restarted, while the workload and the other faults go on.
 */
export function leaderEvents(seed: number, s: SimSettings): SimEvent[] {
  if ((s.clcReplicas ?? 1) < 2) return [];
  const l = Prng.fork(seed, 'leaders');
  const events: SimEvent[] = [];
  for (let i = l.int(0, 3); i > 0; i--) events.push({ at: l.int(1000, s.chaosMs), kind: 'clcLeaderChange', cutMs: l.int(1000, 9000) });
  for (let i = l.int(0, 3); i > 0; i--) events.push({ at: l.int(1000, s.chaosMs), kind: 'clcStaleLeader', pauseMs: l.int(3500, 9000) });
  if (l.chance(0.3)) {
    const at = l.int(1000, s.chaosMs);
    events.push({ at, kind: 'crashClc' }, { at: at + l.int(200, 10_000), kind: 'restartClc' });
  }
  return events;
}

/**
 * CC leader changes (issue 21), from their own stream and only with CC replicas: the leader of a
 * partition loses etcd for a while or is paused past its lease, once or a few times, and now and then
 * it is killed (crashCc kills the leader) and restarted, while everything else goes on.
 */
export function ccLeaderEvents(seed: number, s: SimSettings): SimEvent[] {
  if ((s.ccReplicas ?? 1) < 2) return [];
  const l = Prng.fork(seed, 'ccLeaders');
  const ccs = s.clusters.map((c) => c.cc);
  const cc = (): { cc?: string } => (ccs.length > 1 ? { cc: l.pick(ccs) as string } : {});
  const events: SimEvent[] = [];
  for (let i = l.int(0, 3); i > 0; i--) events.push({ at: l.int(1000, s.chaosMs), kind: 'ccLeaderChange', cutMs: l.int(1000, 9000), ...cc() });
  for (let i = l.int(0, 3); i > 0; i--) events.push({ at: l.int(1000, s.chaosMs), kind: 'ccStaleLeader', pauseMs: l.int(4000, 15_000), ...cc() });
  if (l.chance(0.3)) {
    const [at, which] = [l.int(1000, s.chaosMs), cc()];
    events.push({ at, kind: 'crashCc', ...which }, { at: at + l.int(200, 10_000), kind: 'restartCc', ...which });
  }
  return events;
}

/**
 * Volumes (issue 18), from their own stream (every other draw of a seed stays as it was): in most
 * seeds a few volumes are created early, attached to instances, and some detached (now and then
 * forced) and deleted later, while the faults, drains and fences go on.
 */
export function volumeEvents(seed: number, s: SimSettings): SimEvent[] {
  const v = Prng.fork(seed, 'volumes');
  if (!v.chance(0.6)) return [];
  const events: SimEvent[] = [];
  const partitions = s.clusters.map((c) => c.partition);
  for (let i = v.int(1, 3); i > 0; i--) events.push({ at: v.int(0, 4000), kind: 'createVolume', partition: v.pick(partitions) as string, sizeGiB: v.int(1, 8) });
  for (let i = v.int(1, 5); i > 0; i--) events.push({ at: v.int(2000, s.chaosMs), kind: 'attachVolume', volume: v.int(0, 1000), pick: v.int(0, 1000), device: v.pick(SIM_DEVICES) as string });
  for (let i = v.int(1, 4); i > 0; i--) events.push({ at: v.int(4000, s.chaosMs), kind: 'detachVolume', volume: v.int(0, 1000), force: v.chance(0.2) });
  for (let i = v.int(0, 2); i > 0; i--) events.push({ at: v.int(6000, s.chaosMs), kind: 'deleteVolume', volume: v.int(0, 1000) });
  return events;
}

/**
 * Stop, start and reboot (issue 18 part 5), from their own stream: in most seeds an instance or a
 * few are stopped and, most of them, started again later (some after their node was disabled, so
 * the start re-homes them); a few reboots.
 */
export function powerEvents(seed: number, s: SimSettings): SimEvent[] {
  const p = Prng.fork(seed, 'power');
  if (!p.chance(0.6)) return [];
  const events: SimEvent[] = [];
  for (let i = p.int(1, 4); i > 0; i--) {
    const at = p.int(1000, s.chaosMs);
    events.push({ at, kind: 'stopInstance', pick: p.int(0, 1000), force: p.chance(0.3) });
    if (p.chance(0.75)) events.push({ at: at + p.int(200, 15_000), kind: 'startInstance', pick: p.int(0, 1000), disableFirst: p.chance(0.4) });
  }
  for (let i = p.int(0, 2); i > 0; i--) events.push({ at: p.int(1000, s.chaosMs), kind: 'rebootInstance', pick: p.int(0, 1000) });
  return events;
}

/** Destinations come from the source's partition (`peers`); a migrateOne's from one partition, drawn when there are several. */
function workload(r: Prng, hosts: readonly string[], host: () => string, peers: (h: string) => readonly string[], several: boolean): WorkloadEvent {
  switch (r.int(0, 9)) {
    case 0: case 1: return { kind: 'run', count: r.int(1, 3), minCount: 1, large: r.chance(0.25) };
    case 2: return { kind: 'terminate', pick: r.int(0, 1000) };
    case 3: case 4: return { kind: 'modify', host: host(), state: r.chance(0.6) ? 'disabled' : 'enabled' };
    case 5: case 6: {
      const source = host();
      const allowHosts = r.chance(0.5);
      return { kind: 'drain', host: source, destinations: r.subset(peers(source).filter((h) => h !== source), allowHosts ? 0.6 : 0.3), allowHosts, partial: r.chance(0.5), reserve: r.chance(0.3) };
    }
    case 7: case 8: {
      const allowHosts = r.chance(0.5);
      return { kind: 'migrateOne', pick: r.int(0, 1000), destinations: r.subset(several ? peers(host()) : hosts, 0.3), allowHosts };
    }
    default: return { kind: 'cancel', pick: r.int(0, 1000) };
  }
}

export function describeEvent(e: SimEvent): string {
  const { at, kind, ...rest } = e;
  return `t+${at}ms ${kind} ${JSON.stringify(rest)}`;
}
