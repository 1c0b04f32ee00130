/**
 * The simulated cloud's shape and pacing. Timeouts are shortened (seconds, not minutes) so one
 * seed covers many migrations, time-outs and recoveries in a few simulated minutes.
 */
import type { Limits, Timeouts } from '../cc/migration/settings.js';
import type { Resources } from '../shared/model/resources.js';
import type { DomainSpec } from '../nc/hypervisor/driver.js';
import type { SkewSettings } from './clockSkew.js';

/** One cluster: its CC's network name and its partition's hosts (each host in exactly one). */
export interface SimCluster {
  readonly cc: string;
  readonly partition: string;
  readonly hosts: readonly string[];
}

export interface SimSettings {
  /** 1..k CCs, each with its own partition and at least two hosts; the first CC is named `cc`. */
  readonly clusters: readonly SimCluster[];
  readonly hosts: readonly string[];
  readonly capacity: Resources;
  readonly limits: Limits;
  readonly timeouts: Timeouts;
  readonly ncTimeoutMs: number;
  readonly pollIntervalMs: number;
  /** The CLC's call timeout to its CC, and host HA's pass interval. */
  readonly clcTimeoutMs: number;
  readonly haTickMs: number;
  /** How often a host's VMs and heartbeat write to shared storage (what activity checks read). */
  readonly activityWriteMs: number;
  /** Upper bounds of the seeded latencies of one store write and one hypervisor call. */
  readonly storeLatencyMs: number;
  readonly driverLatencyMs: number;
  /** The clock's start (epoch ms). */
  readonly startMs: number;
  /**
   * How long the workload and the faults run. After healing, migrations queue behind the
   * concurrency limits, so liveness is judged by progress: some item must change state within
   * `stuckMs` until all are final (and everything must settle within `healMs`).
   */
  readonly chaosMs: number;
  readonly stuckMs: number;
  readonly healMs: number;
  /** Workload and fault events in the chaos phase (upper bounds; the seed picks). */
  readonly maxOps: number;
  readonly maxFaults: number;
  /** Upper bound of the runs in the first 2 s, so there is something to migrate. */
  readonly earlyRuns: number;
  /** Each process's clock offset and drift (clockSkew.ts); a `clockStep` fault adds NTP steps. */
  readonly skew: SkewSettings;
  /**
   * The CCs issue per-migration credentials and the NCs require them, as in a mutual-TLS cloud; the
   * migration channel checks them as the TLS stream does (simCredentials.ts, migrationNet.ts).
   */
  readonly migrationCredentials: boolean;
  /** Hosts whose capacity is not `capacity` (the bench's drain: one big source, tight destinations). */
  readonly capacities?: Readonly<Record<string, Resources>>;
  /** Each guest's dirty rate while it migrates (SimHostConfig.dirtyRateOf); default: the host's tuning. */
  readonly dirtyRateOf?: (spec: DomainSpec) => number | undefined;
  /** Each host's migration link, shared by its outgoing streams (SimHostConfig.nicMbps); default: none. */
  readonly nicMbps?: number;
  /**
   * CLC replicas (issue 21): one (the default) is the file-store CLC, no election and no epochs; two or
   * three elect a leader through the simulated etcd and stamp every change to a CC with its epoch.
   */
  readonly clcReplicas?: number;
  /**
   * CC replicas per partition (issue 21): one (the default) is the file-store CC, no election and no
   * epochs to the NCs; two elect a leader per partition through the simulated etcd, and every change
   * the leader sends to an NC carries its epoch, checked by the NC's guard.
   */
  readonly ccReplicas?: number;
}

export const M1_SMALL = Object.freeze({ name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 });
export const M1_LARGE = Object.freeze({ name: 'm1.large', cores: 2, memoryMiB: 512, diskGiB: 10 });

/** 127.0.50.1 … 127.0.50.250, then 127.0.51.1 …: names only (nothing listens in the simulator). */
export function hostName(_: unknown, i: number): string {
  return `127.0.${50 + Math.floor(i / 250)}.${(i % 250) + 1}`;
}

/**
 * Splits the hosts into `ccCount` clusters of consecutive hosts (sim01 behind `cc`, sim02 behind
 * `cc2`, …); fewer when there are too few hosts for two per partition.
 */
export function splitClusters(hosts: readonly string[], ccCount: number): SimCluster[] {
  const k = Math.max(1, Math.min(ccCount, Math.floor(hosts.length / 2)));
  return Array.from({ length: k }, (_, i) => ({
    cc: i === 0 ? 'cc' : `cc${i + 1}`,
    partition: `sim${String(i + 1).padStart(2, '0')}`,
    hosts: hosts.slice(Math.floor((i * hosts.length) / k), Math.floor(((i + 1) * hosts.length) / k)),
  }));
}

export function simSettings(hostCount: number, ccCount = 1): SimSettings {
  const hosts = Array.from({ length: hostCount }, hostName);
  return Object.freeze({
    clusters: splitClusters(hosts, ccCount),
    hosts,
    capacity: { cores: 4, memoryMiB: 1024, diskGiB: 40 },
    limits: { perSource: 2, perDestination: 2, perCluster: 4 },
    timeouts: { prepareMs: 4000, readyMs: 4000, migratingBaseMs: 10_000, migratingPerGiBMs: 40_000, stallMs: 15_000 },
    ncTimeoutMs: 500,
    pollIntervalMs: 1000,
    clcTimeoutMs: 2000,
    haTickMs: 2000,
    activityWriteMs: 2000,
    storeLatencyMs: 3,
    driverLatencyMs: 2,
    startMs: 1_700_000_000_000,
    chaosMs: 40_000,
    stuckMs: 120_000,
    healMs: 1_800_000,
    maxOps: 50,
    maxFaults: 30,
    earlyRuns: 3,
    skew: { maxOffsetMs: 2000, maxDriftPpm: 100 },
    migrationCredentials: true,
  });
}

/** The cluster a host belongs to. */
export function clusterOf(s: SimSettings, host: string): SimCluster {
  const c = s.clusters.find((x) => x.hosts.includes(host));
  // A scenario naming a host its settings lack: a developer's error in the simulator, never a client's.
  if (!c) throw new Error(`no simulated cluster has host ${host}`);
  return c;
}
