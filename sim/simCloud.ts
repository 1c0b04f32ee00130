/**
 * One cloud in one process: the real CcService (its NodeClient the real WireNodeClient over the
 * simulated network), a real NodeController per host over a SimStore, and a real SimHost per host
 * behind the NC's driver, all on one ManualClock and fully determined by the seed. This file only
 * assembles, crashes and restarts processes; what happens to them is decided by the schedule.
 */
import { CcService } from '../cc/service.js';
import { WireNodeClient } from '../cc/nodeClient.js';
import { initialView } from '../cc/view.js';
import { ViewKeeper } from '../cc/viewKeeper.js';
import { WireCcNotifier } from '../nc/ccNotifier.js';
import { MIGRATION_DEFAULTS, type MigrationTuning } from '../nc/hypervisor/sim/migrationModel.js';
import { MemoryDiskIo } from '../nc/hypervisor/sim/diskIo.js';
import { simHvStoreOptions } from '../nc/hypervisor/sim/hostStore.js';
import { SimHost } from '../nc/hypervisor/sim/simHost.js';
import { NC_STORE_OPTIONS, type NcSnapshot } from '../nc/ncStore.js';
import { initialSnapshot, storeOrigin } from '../nc/storeOrigin.js';
import { FINAL_ITEM_STATES } from '../shared/protocol/migrationProtocol.js';
import { NodeController } from '../nc/nodeController.js';
import { ncHandlers } from '../nc/server.js';
import { ManualClock } from '../shared/clock.js';
import { silentLogger } from '../shared/log.js';
import type { Resources } from '../shared/model/resources.js';
import { typedHandlers } from '../shared/protocol/typedServer.js';
import type { WireTransport } from '../shared/wire/transport.js';
import { SERVED_OPS } from '../cc/service.js';
import { HostSlot, SimHostDriver } from './hostDriver.js';
import { ClockSkews } from './clockSkew.js';
import { Incarnation } from './incarnation.js';
import { MigrationNet, hostOfUri } from './migrationNet.js';
import { Prng } from './prng.js';
import { SimDisk, openSimStore } from './simDisk.js';
import { SimNetwork } from './simNetwork.js';
import { clusterOf, type SimCluster, type SimSettings } from './settings.js';
import { memorySharedStorage } from './sharedStorage.js';
import { SimBmc, type BmcMode } from './simBmc.js';
import { SimVolumeStorage } from './simVolumes.js';
import { bootClc, clcReplicaName, type SimClc } from './simClc.js';
import { SimElection } from './simElection.js';
import { SimEtcd } from './simEtcd.js';
import { EpochWatch, epochStoreOptions } from './epochWatch.js';
import { powerOffLease } from './leaseInvariant.js';
import { LeaderFaults } from './leaderFaults.js';
import { bootCcReplica, CcStoreWatch } from './simCcReplica.js';
import { NcEpochWatch } from './ncEpochWatch.js';
import { NC_CHANGE_OPS } from '../shared/protocol/leaderEpoch.js';
import type { PowerDriver } from '../clc/ha/power/powerDriver.js';
import type { Violation } from './invariants.js';
import { simCredentialIssuer, simMigrationCa } from './simCredentials.js';
import { DEFAULT_TLS_URI_TEMPLATE } from '../cc/migration/settings.js';
import type { MigrationCa } from '../cc/migration/credentialIssuer.js';

/** How long an armed ccStaleLeader waits for the CC leader's next change to an NC (changes come only from the CLC and the plans). */
const CC_STALE_ARM_MS = 12_000;

/** The first CC's network name (the default of a CC fault that names none: schedules recorded with one CC). */
export const CC_NAME = 'cc';
const STORAGE_DIR = '/shared';

export interface SimNode {
  readonly host: string;
  readonly slot: HostSlot;
  readonly capacity: Resources;
  tuning: MigrationTuning;
  hv: Incarnation | undefined;
  nc: Incarnation | undefined;
  controller: NodeController | undefined;
  /** How many times each process was started (names incarnations in the trace). */
  ncBoots: number;
  hvBoots: number;
  /** Upper bound of this host's hypervisor call latency (raised by a slow-hypervisor fault). */
  hvLatencyMs: number;
  /** Crash the NC right after this many more durable writes (a crash at an exact step). */
  crashAfterWrites: number | undefined;
  /** When its NC first started: its identity file (nc/storeOrigin.ts), which outlives a lost nc.json. */
  firstNcStartAt: number | undefined;
}

/** A CC's URL as the CLC and NCs are configured with it (names only: nothing listens). */
export function ccUrl(cc: string): string {
  return `http://${cc}.sim:8774`;
}

/** The CC a URL names (the simulated network routes by name). */
function ccOfUrl(url: string): string {
  return new URL(url).hostname.replace(/\.sim$/, '');
}

export interface SimCc {
  /** Its network name: the partition's CC name, or a replica's (`cc-b`). */
  readonly name: string;
  readonly life: Incarnation;
  readonly service: CcService;
  readonly keeper: ViewKeeper;
  /** Its election, when it is one of the partition's CC replicas. */
  readonly election: SimElection | undefined;
}

/** The network names of a partition's CC replicas: its CC's name, then `<cc>-b` (one name with one CC per partition). */
export function ccReplicaNames(cc: string, count: number): string[] {
  return Array.from({ length: Math.max(1, count) }, (_, i) => (i === 0 ? cc : `${cc}-${String.fromCharCode(97 + i)}`));
}

export class SimCloud {
  readonly clock: ManualClock;
  readonly disk = new SimDisk();
  readonly net: SimNetwork;
  readonly mig: MigrationNet;
  /** Each process's view of the clock (offset, drift, NTP steps). */
  readonly skews: ClockSkews;
  readonly nodes = new Map<string, SimNode>();
  /** By network name (settings.clusters' CC names, and with CC replicas their replicas' too); absent until first started. */
  readonly ccs = new Map<string, SimCc>();
  /** CC replicas per partition (settings.ccReplicas; one: the file-store CC, no election, no epochs to the NCs). */
  readonly ccReplicaCount: number;
  /** With CC replicas: each partition's leader faults (ccLeaderChange, ccStaleLeader), by its CC name. */
  readonly ccLeaderFaults = new Map<string, LeaderFaults>();
  /** With CC replicas: the NCs' epoch guards, watched (invariant 10c, and the refusals for the coverage report). */
  readonly ncEpochs: NcEpochWatch;
  /** With CC replicas: their shared stores' writes, committed and refused (invariant 10d, coverage). */
  readonly ccStores = new CcStoreWatch();
  private readonly ccEtcdRng: Prng;
  /** Changes held by a CC leader paused right after sending them (ccStaleLeader): where they go and with which epoch. */
  private readonly heldChanges: { readonly cc: string; readonly replica: SimCc; readonly host: string; readonly epoch: bigint }[] = [];
  /** CC replicas' NotLeader refusals (a follower asked for a change; coverage). */
  ccNotLeader = 0;
  /** The CLC replicas by index (settings.clcReplicas, one by default); absent until first started. */
  readonly clcs: (SimClc | undefined)[] = [];
  /** The etcd the CLC replicas elect their leader through and keep clc.json in (unused with one replica). */
  readonly etcd: SimEtcd;
  /** Breaches of the leadership invariants seen as they happened (runSeed records them). */
  readonly leaseViolations: Violation[] = [];
  /** Admin requests a CLC replica answered NotLeader (coverage). */
  notLeaderAnswers = 0;
  /** The CCs' epoch guards, watched (invariant 10a, and the refusals for the coverage report). */
  readonly epochs: EpochWatch;
  /** Per host: how its BMC behaves now (the seed's BMC faults change it). */
  readonly bmcModes = new Map<string, BmcMode>();
  /** Lies BMCs told: outside the safety envelope of any fencing (invariant 4). */
  readonly bmcLies: { readonly host: string; readonly what: string; readonly at: number }[] = [];
  /** Called just before a host loses power (by a fault or by its BMC): its VMs die. */
  readonly beforePowerOff: ((host: string) => void)[] = [];
  /** Every CLC→CC call as the CLC sends it (the invariants watch restarts). */
  readonly onClcSend: ((op: string, body: Readonly<Record<string, unknown>>) => void)[] = [];
  private readonly ccBoots = new Map<string, number>();
  private readonly clcBoots: number[] = [];
  private readonly etcdRng: Prng;
  private readonly replicaCount: number;
  /** clcLeaderChange and clcStaleLeader (leaderFaults.ts). */
  readonly leaderFaults: LeaderFaults;
  private readonly ccCrashCountdown = new Map<string, number>();
  private readonly latency: Prng;
  private readonly crashes: Prng;
  private readonly ids: Prng;
  /** Serials of the per-migration credentials the CCs issue. */
  private readonly serials: Prng;
  /** The run's migration CA, when the CCs issue per-migration credentials (settings.migrationCredentials). */
  private readonly migrationCa: MigrationCa | undefined;
  private readonly storage: MemoryDiskIo;
  /** The volume storage every host mounts (the CLC's backend, each NC's connector). */
  readonly volumes: SimVolumeStorage;
  /** Start-ups still running (a booting NC connects to its hypervisor in the background). */
  readonly starting = new Set<Promise<unknown>>();

  constructor(readonly seed: number, readonly settings: SimSettings, private readonly trace: (line: string) => void) {
    this.clock = new ManualClock(settings.startMs);
    this.net = new SimNetwork(this.clock, Prng.fork(seed, 'net'), trace);
    this.mig = new MigrationNet(trace);
    this.skews = new ClockSkews(this.clock, Prng.fork(seed, 'skew'), settings.skew);
    this.latency = Prng.fork(seed, 'latency');
    this.crashes = Prng.fork(seed, 'crash');
    this.ids = Prng.fork(seed, 'ids');
    this.serials = Prng.fork(seed, 'serials');
    this.etcd = new SimEtcd(this.clock);
    this.epochs = new EpochWatch(trace);
    this.leaderFaults = new LeaderFaults({ clock: this.clock, etcd: this.etcd, trace, leader: () => this.clcLeader(), replicas: () => this.clcs });
    this.etcdRng = Prng.fork(seed, 'etcd');
    this.replicaCount = Math.max(1, settings.clcReplicas ?? 1);
    this.ccReplicaCount = Math.max(1, settings.ccReplicas ?? 1);
    this.ccEtcdRng = Prng.fork(seed, 'ccEtcd');
    this.ncEpochs = new NcEpochWatch(trace);
    if (this.ccReplicaCount > 1) {
      this.net.onDeliver.push((d) => this.newerCcEpochDelivered(d.to, d.operation, d.body.leaderEpoch));
      for (const c of settings.clusters) {
        this.ccLeaderFaults.set(c.cc, new LeaderFaults({
          clock: this.clock, etcd: this.etcd, trace, leader: () => this.ccLeader(c.cc), replicas: () => this.ccReplicas(c.cc), armMs: CC_STALE_ARM_MS,
        }));
      }
    }
    this.migrationCa = settings.migrationCredentials ? simMigrationCa(settings.startMs) : undefined;
    this.storage = new MemoryDiskIo(this.clock);
    this.volumes = new SimVolumeStorage(STORAGE_DIR, trace);
    for (const host of settings.hosts) {
      this.nodes.set(host, {
        host, slot: new HostSlot(host), capacity: settings.capacities?.[host] ?? settings.capacity, tuning: MIGRATION_DEFAULTS,
        hv: undefined, nc: undefined, controller: undefined, ncBoots: 0, hvBoots: 0, crashAfterWrites: undefined, hvLatencyMs: settings.driverLatencyMs, firstNcStartAt: undefined,
      });
    }
  }

  node(host: string): SimNode {
    const n = this.nodes.get(host);
    // A scenario naming a host that does not exist: a developer's error in the simulator.
    if (!n) throw new Error(`no simulated host ${host}`);
    return n;
  }

  /** Powers every host on and starts every NC, every CC and the CLC. */
  async boot(): Promise<void> {
    for (const n of this.nodes.values()) await this.powerOn(n.host);
    for (const c of this.settings.clusters) this.startCc(c.cc);
    this.startClc();
  }

  /** The CC in charge of a host. */
  ccOf(host: string): string {
    return clusterOf(this.settings, host).cc;
  }

  // --- hypervisor hosts ---

  async powerOn(host: string): Promise<void> {
    const n = this.node(host);
    if (n.hv?.isAlive) return;
    const life = new Incarnation(`hv ${host}`, ++n.hvBoots);
    const clock = life.clock(this.skews.of(`hv ${host}`));
    const store = openSimStore({ disk: this.disk, file: `hv/${host}`, store: simHvStoreOptions, life, clock, rng: this.crashes, maxLatencyMs: 0 });
    const sim = await SimHost.open(
      {
        host, capacity: n.capacity, storageDir: STORAGE_DIR, migration: n.tuning, writeIntervalMs: this.settings.activityWriteMs, timeScale: 1,
        ...(this.settings.dirtyRateOf ? { dirtyRateOf: this.settings.dirtyRateOf } : {}),
        ...(this.settings.nicMbps !== undefined ? { nicMbps: this.settings.nicMbps } : {}),
      },
      { clock, store, disk: this.storage, dialer: this.mig.dialer(host, clock) },
    );
    n.hv = life;
    n.slot.powerOn(sim);
    this.mig.attach(host, sim);
    // Heartbeat and disk writes on shared storage: what a neighbour's activity check reads.
    sim.start();
    this.trace(`hv ${host} powered on (#${n.hvBoots})`);
    this.startNc(host);
  }

  /** The host dies: its VMs are gone and its NC with it (the NC runs on the host). */
  powerOff(host: string): void {
    const n = this.node(host);
    if (!n.hv?.isAlive) return;
    for (const fn of this.beforePowerOff) fn(host);
    this.crashNc(host);
    n.hv.kill();
    n.slot.powerOff();
    this.mig.detach(host);
    this.trace(`hv ${host} powered off`);
  }

  // --- node controllers ---

  startNc(host: string): void {
    const n = this.node(host);
    if (n.nc?.isAlive || !n.hv?.isAlive) return;
    const life = new Incarnation(`nc ${host}`, ++n.ncBoots);
    const clock = life.clock(this.skews.of(`nc ${host}`));
    // As openNcStoreAtStart: a missing nc.json after the first start (the identity file is there) is a lost store.
    const origin = storeOrigin(this.disk.read(`nc/${host}`) !== undefined, n.firstNcStartAt === undefined ? undefined : { host, firstStartAt: n.firstNcStartAt }, clock.now());
    n.firstNcStartAt ??= clock.now();
    const options = origin.kind === 'lost' ? { ...NC_STORE_OPTIONS, initial: () => initialSnapshot(origin) } : NC_STORE_OPTIONS;
    if (origin.kind === 'lost') this.trace(`nc ${host} finds nc.json lost: starts disabled`);
    const store = openSimStore<NcSnapshot>({ disk: this.disk, file: `nc/${host}`, store: options, life, clock, rng: this.crashes, maxLatencyMs: this.settings.storeLatencyMs,
      onDurable: () => {
        if (n.crashAfterWrites === undefined || --n.crashAfterWrites > 0) return;
        n.crashAfterWrites = undefined;
        this.trace(`nc ${host} crashes right after a durable write`);
        this.crashNc(host);
      },
    });
    const cc = this.ccOf(host);
    const replicated = this.ccReplicaCount > 1;
    // With CC replicas the NC knows every replica's URL and hints the leader (nc/ccNotifier.ts's LeaderRoute).
    const transport = this.net.transport(host, life, replicated ? ccOfUrl : () => cc, 1000);
    const ccUrls = replicated ? { ccUrls: ccReplicaNames(cc, this.ccReplicaCount).map(ccUrl) } : {};
    const controller = new NodeController({
      host, hypervisor: 'sim', store, clock, logger: silentLogger(),
      driver: new SimHostDriver(n.slot, life, clock, this.latency, () => n.hvLatencyMs),
      notifier: new WireCcNotifier({ transport, ccUrl: ccUrl(cc), ...ccUrls, logger: silentLogger(), clock }),
      requireMigrationCredentials: this.migrationCa !== undefined,
      volumeConnector: this.volumes.connector(host),
    });
    n.nc = life;
    n.controller = controller;
    const handlers = ncHandlers(controller, memorySharedStorage(this.storage, STORAGE_DIR));
    // With CC replicas every change is checked against the highest CC leader epoch in nc.json (nc/main.ts).
    this.net.serve(host, replicated ? this.ncEpochs.guard(host, handlers, store) : handlers, life);
    this.track(life.guard(controller.start()));
    this.trace(`nc ${host} started (#${n.ncBoots})`);
  }

  /**
   * kill -9 of the NC and its nc.json deleted (issue 16), unless the host is in a migration (a plan
   * not final, an Incoming record, a paused domain): a store lost mid-migration is out of this
   * fault's scope (the re-adoption leaves a paused incoming copy alone). Returns whether it happened.
   */
  loseNcStore(host: string): boolean {
    const n = this.node(host);
    const snap = this.disk.read(`nc/${host}`) as NcSnapshot | undefined;
    const migrating = snap !== undefined && (Object.keys(snap.incoming).length > 0
      || Object.values(snap.plans).some((p) => p.items.some((i) => !FINAL_ITEM_STATES.includes(i.state))));
    if (snap === undefined || migrating || n.slot.current?.list().some((d) => d.state === 'paused')) {
      this.trace(`nc ${host} keeps its store: ${snap === undefined ? 'never started' : 'in a migration'}`);
      return false;
    }
    this.crashNc(host);
    this.disk.delete(`nc/${host}`);
    this.ncEpochs.forget(host);
    this.trace(`nc ${host} lost its nc.json`);
    return true;
  }

  /** Crash the NC right after its n-th next durable write (intent persisted, action not yet taken, …). */
  crashNcAfterWrites(host: string, n: number): void {
    this.node(host).crashAfterWrites = n;
  }

  /** kill -9 of the NC: memory gone, what its store made durable kept, its VMs keep running. */
  crashNc(host: string): void {
    const n = this.node(host);
    if (!n.nc?.isAlive) return;
    n.nc.kill();
    n.controller = undefined;
    this.trace(`nc ${host} crashed`);
  }

  // --- the cluster controller ---

  /** Starts the partition's CC (with CC replicas: every replica of it that is down). */
  startCc(name: string = CC_NAME): void {
    if (this.ccReplicaCount > 1) {
      for (const r of ccReplicaNames(name, this.ccReplicaCount)) this.startCcReplica(name, r);
      return;
    }
    if (this.ccs.get(name)?.life.isAlive) return;
    const cluster = this.cluster(name);
    const boots = (this.ccBoots.get(name) ?? 0) + 1;
    this.ccBoots.set(name, boots);
    const life = new Incarnation(name, boots);
    const clock = life.clock(this.skews.of(name));
    const logger = silentLogger();
    const { ncTimeoutMs, pollIntervalMs } = this.settings;
    const net = this.net.transport(name, life, hostOfUri, ncTimeoutMs);
    const transport: WireTransport = {
      call: (endpoint, op, body, opts) => {
        const p = net.call(endpoint, op, body, opts);
        // Polls are most of the traffic; counting only changes puts the crash inside an operation.
        const left = this.ccCrashCountdown.get(name);
        if (op !== 'ncDescribeResource' && left !== undefined) {
          if (left > 1) this.ccCrashCountdown.set(name, left - 1);
          else {
            this.ccCrashCountdown.delete(name);
            this.trace(`${name} crashes right after sending ${op}`);
            this.crashCc(name);
          }
        }
        return p;
      },
    };
    const nodes = new WireNodeClient(transport, (h) => `http://${h}:8775`);
    // The CC keeps nothing durable that matters (cc.json is a display cache): a restart starts blank.
    const keeper = new ViewKeeper({ initial: initialView(cluster.partition, cluster.hosts), nodes, clock, logger });
    const ca = this.migrationCa;
    const service = new CcService({
      keeper, nodes, clock, logger, policy: 'spread', ncTimeoutMs,
      migration: {
        limits: this.settings.limits, timeouts: this.settings.timeouts, newHex: this.ids.hex8(),
        ...(ca ? { uriTemplate: DEFAULT_TLS_URI_TEMPLATE } : {}),
      },
      ...(ca ? { credentials: simCredentialIssuer(ca, clock, this.serials) } : {}),
      awaitFencedHosts: true,
      freshMs: pollIntervalMs + ncTimeoutMs,
    });
    this.ccs.set(name, { name, life, service, keeper, election: undefined });
    // With CLC replicas the CC guards its changes by the CLC leader's epoch, kept in its own store (cc/daemon.ts).
    const ops = this.replicaCount === 1 ? service.ops : this.epochs.guard(name, cluster.partition, service.ops, openSimStore({
      disk: this.disk, file: `cc/${name}/clc-epoch`, store: epochStoreOptions(cluster.partition), life, clock, rng: this.crashes, maxLatencyMs: this.settings.storeLatencyMs,
    }));
    this.net.serve(name, typedHandlers(SERVED_OPS, ops), life);
    keeper.startPolling(pollIntervalMs, ncTimeoutMs);
    service.planDriver.start();
    service.moveRepair.start();
    this.trace(`${name} started (#${boots})`);
  }

  /** Crash the CC right after it sends its n-th next change (not poll) to an NC: mid-operation. */
  crashCcAfterCalls(name: string, n: number): void {
    this.cluster(name);
    this.ccCrashCountdown.set(name, n);
  }

  /** kill -9 of the partition's CC (with CC replicas: of the one that leads, else the first one up). */
  crashCc(name: string = CC_NAME): void {
    const cc = this.ccReplicaCount > 1 ? this.ccLeader(name) ?? this.ccReplicas(name).find((r) => r?.life.isAlive === true) : this.ccs.get(name);
    if (!cc?.life.isAlive) return;
    cc.life.kill();
    this.trace(`${cc.name} crashed`);
  }

  /** The partition's CC replicas (index order; absent until first started). */
  ccReplicas(cc: string): (SimCc | undefined)[] {
    return ccReplicaNames(cc, this.ccReplicaCount).map((r) => this.ccs.get(r));
  }

  /** The replica of the partition that leads now, if any (with CC replicas). */
  ccLeader(cc: string): SimCc | undefined {
    return this.ccReplicaCount === 1 ? undefined : this.ccReplicas(cc).find((r) => r?.life.isAlive === true && !r.life.isPaused && r.election?.leadsNow() === true);
  }

  /**
   * A change with a newer CC epoch reached `host`: a paused CC leader holding a change for it resumes
   * 20 ms later (its pause may be longer), so its change arrives where the new leader has been: the worst
   * moment for it, and the case the NC's epoch guard is for.
   */
  private newerCcEpochDelivered(host: string, op: string, epoch: unknown): void {
    if (typeof epoch !== 'string' || !NC_CHANGE_OPS.has(op)) return;
    for (const held of this.heldChanges.splice(0)) {
      if (held.host !== host || BigInt(epoch) <= held.epoch || !held.replica.life.isPaused) {
        if (held.replica.life.isPaused) this.heldChanges.push(held);
        continue;
      }
      this.clock.setTimer(20, () => this.ccLeaderFaults.get(held.cc)?.resumeNow(held.replica, `epoch ${epoch} reached ${host}`));
    }
  }

  /** Cuts `peer` off from the partition's CC (from every replica of it). */
  partitionFromCc(cc: string, peer: string): void {
    for (const r of ccReplicaNames(cc, this.ccReplicaCount)) this.net.partition(r, peer);
  }

  /**
   * Starts one CC replica of a partition (cc/daemon.ts with --store etcd, simCcReplica.ts) under the
   * network name `name`; its crash countdown is the partition's (only the leader sends changes).
   */
  private startCcReplica(cc: string, name: string): void {
    if (this.ccs.get(name)?.life.isAlive) return;
    const cluster = this.cluster(cc);
    const boots = (this.ccBoots.get(name) ?? 0) + 1;
    this.ccBoots.set(name, boots);
    const life = new Incarnation(name, boots);
    const clock = life.clock(this.skews.of(name));
    const { ncTimeoutMs, pollIntervalMs } = this.settings;
    const net = this.net.transport(name, life, hostOfUri, ncTimeoutMs);
    const transport: WireTransport = {
      call: (endpoint, op, body, opts) => {
        const p = net.call(endpoint, op, body, opts);
        const left = this.ccCrashCountdown.get(cc);
        if (op !== 'ncDescribeResource' && left !== undefined) {
          if (left > 1) this.ccCrashCountdown.set(cc, left - 1);
          else {
            this.ccCrashCountdown.delete(cc);
            this.trace(`${name} crashes right after sending ${op}`);
            if (life.isAlive) {
              life.kill();
              this.trace(`${name} crashed`);
            }
          }
        }
        // An armed ccStaleLeader pauses the leader right after it sends a change stamped with its epoch.
        // This life's entry (set once it has booted, before it sends anything).
        const self = this.ccs.get(name);
        if (typeof body.leaderEpoch === 'string' && self?.life === life && !life.isPaused) {
          this.ccLeaderFaults.get(cc)?.sent(self, life, `right after sending ${op} of epoch ${body.leaderEpoch}`);
          if (life.isPaused) this.heldChanges.push({ cc, replica: self, host: hostOfUri(endpoint), epoch: BigInt(body.leaderEpoch) });
        }
        return p;
      },
    };
    const ca = this.migrationCa;
    const r = bootCcReplica({
      name, url: ccUrl(name), cluster, life, clock, base: this.clock, transport, net: this.net, etcd: this.etcd, etcdRng: this.ccEtcdRng,
      disk: this.disk, storeRng: this.crashes, storeLatencyMs: this.settings.storeLatencyMs, pollIntervalMs, ncTimeoutMs,
      service: {
        policy: 'spread', ncTimeoutMs,
        migration: { limits: this.settings.limits, timeouts: this.settings.timeouts, newHex: this.ids.hex8(), ...(ca ? { uriTemplate: DEFAULT_TLS_URI_TEMPLATE } : {}) },
        ...(ca ? { credentials: simCredentialIssuer(ca, clock, this.serials) } : {}),
        awaitFencedHosts: true, freshMs: pollIntervalMs + ncTimeoutMs,
      },
      clcEpochs: this.replicaCount === 1 ? undefined : this.epochs, stores: this.ccStores, trace: this.trace,
      onNotLeader: () => { this.ccNotLeader++; },
    });
    this.ccs.set(name, { name, ...r });
    this.trace(`${name} started (#${boots})`);
  }

  private cluster(cc: string): SimCluster {
    const c = this.settings.clusters.find((x) => x.cc === cc);
    // A scenario naming a CC that does not exist: a developer's error in the simulator.
    if (!c) throw new Error(`no simulated CC ${cc}`);
    return c;
  }

  // --- the cloud controller ---

  /** The CLC replica that leads now, else the first one up, else the first (one-replica clouds: the CLC). */
  get clc(): SimClc | undefined {
    const up = this.clcs.filter((c): c is SimClc => c?.life.isAlive === true);
    return up.find((c) => c.election?.leadsNow() === true) ?? up[0] ?? this.clcs[0];
  }

  /** Replica i's network name (`clc`, `clc2`, …). */
  clcName(i: number): string {
    return clcReplicaName(i);
  }

  /** Starts every CLC replica that is down (one-replica clouds: the CLC). */
  startClc(): void {
    for (let i = 0; i < this.replicaCount; i++) this.startClcReplica(i);
  }

  /**
   * Starts replica i over clc.json and bmc.json (etcd's, shared, with several replicas); the one CLC's
   * core (and host HA) is up once it has synced with the CC, a replica's follows its election.
   */
  startClcReplica(i: number): void {
    if (this.clcs[i]?.life.isAlive) return;
    const name = clcReplicaName(i);
    const boots = (this.clcBoots[i] ?? 0) + 1;
    this.clcBoots[i] = boots;
    const life = new Incarnation(name, boots);
    const clock = life.clock(this.clock);
    const net = this.net.transport(name, life, ccOfUrl, this.settings.clcTimeoutMs);
    const transport: WireTransport = {
      call: (endpoint, op, body, opts) => {
        for (const fn of this.onClcSend) fn(op, body);
        const sent = net.call(endpoint, op, body, opts);
        if (typeof body.clcEpoch === 'string') this.leaderFaults.sent(this.clcs[i], life, `right after sending ${op} of epoch ${body.clcEpoch}`);
        return sent;
      },
    };
    const election = this.replicaCount === 1 ? undefined : new SimElection({
      etcd: this.etcd, self: name, life, base: this.clock, rng: this.etcdRng,
      onChange: (leading, epoch) => this.trace(`${name} ${leading ? 'leads' : 'no longer leads'} (epoch ${epoch})`),
    });
    // With replicas, a power action is checked against etcd as it leaves: only a live lease may fence.
    const leased = (host: string, d: PowerDriver): PowerDriver => (election === undefined ? d : {
      // A power status is where host HA's fence begins: an armed clcStaleLeader pauses the leader right after it.
      status: () => {
        const asked = d.status();
        this.leaderFaults.sent(this.clcs[i], life, `right after asking the BMC of ${host} for its power status`);
        return asked;
      },
      on: () => { this.checkLease(name, election, 'on', host); return d.on(); },
      off: () => { this.checkLease(name, election, 'off', host); return d.off(); },
      reboot: () => { this.checkLease(name, election, 'reboot', host); return d.reboot(); },
    });
    const { clc, started } = bootClc({
      life, clock, disk: this.disk, transport, partitions: this.settings.clusters.map((c) => ({
        name: c.partition, endpoint: ccUrl(c.cc), ...(this.ccReplicaCount > 1 ? { endpoints: ccReplicaNames(c.cc, this.ccReplicaCount).map(ccUrl) } : {}),
      })),
      ccTimeoutMs: this.settings.clcTimeoutMs, haTickMs: this.settings.haTickMs, rng: this.crashes, storeLatencyMs: this.settings.storeLatencyMs,
      ids: () => this.hex8(), volumes: this.volumes.backend,
      ...(election !== undefined ? { replica: { election, etcd: this.etcd } } : {}),
      power: (host) => leased(host, new SimBmc(host, {
        isOn: (h) => this.nodes.get(h)?.hv?.isAlive ?? false,
        powerOff: (h) => {
          this.trace(`bmc ${h} powers the host off`);
          this.powerOff(h);
        },
        powerOn: (h) => {
          this.trace(`bmc ${h} powers the host on`);
          return this.powerOn(h);
        },
      }, this.clock, this.latency, () => this.bmcModes.get(host) ?? 'ok', (h, what) => {
        this.trace(`bmc ${h} lies: ${what}`);
        this.bmcLies.push({ host: h, what, at: this.clock.now() });
      })),
    }, name);
    this.clcs[i] = clc;
    this.track(started.then(() => this.trace(`${name} ready (#${boots})`)));
    this.trace(`${name} started (#${boots})`);
  }

  /** kill -9 of the CLC replica that leads now (of the CLC, with one). */
  crashClc(): void {
    const clc = this.clc;
    if (!clc?.life.isAlive) return;
    clc.life.kill();
    this.trace(`${clc.name} crashed`);
  }

  /** The replica that leads now, if any (with several replicas). */
  clcLeader(): SimClc | undefined {
    return this.replicaCount === 1 ? undefined : this.clcs.find((c) => c?.life.isAlive === true && !c.life.isPaused && c.election?.leadsNow() === true);
  }

  /** Records a power action from a replica whose key does not hold a live lease at etcd (invariant 10b). */
  private checkLease(name: string, election: SimElection, action: string, host: string): void {
    const v = powerOffLease(this.etcd, name, election.lastTerm(), action, host);
    if (v !== undefined) this.leaseViolations.push(v);
  }

  /** Faults stop: no pending crash triggers (the heal phase must not be interrupted), hypervisors fast again. */
  disarmCrashes(): void {
    this.ccCrashCountdown.clear();
    this.leaderFaults.disarm();
    for (const f of this.ccLeaderFaults.values()) f.disarm();
    this.bmcModes.clear();
    for (const n of this.nodes.values()) {
      n.crashAfterWrites = undefined;
      n.hvLatencyMs = this.settings.driverLatencyMs;
    }
  }

  /** Changes how a host's hypervisor migrates (slow, failing); takes effect at its next power-on. */
  retune(host: string, tuning: MigrationTuning): void {
    this.node(host).tuning = tuning;
  }

  /** New ids for the workload (instance and reservation ids), from the seed. */
  hex8(): string {
    return this.ids.int(0, 0xffffffff).toString(16).padStart(8, '0');
  }

  private track(p: Promise<unknown>): void {
    const t = p.catch(() => undefined).finally(() => this.starting.delete(t));
    this.starting.add(t);
  }
}
