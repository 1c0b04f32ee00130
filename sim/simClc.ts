/**
 * The CLC in the simulator: the real core (clc/clcCore.ts: change gate, host HA's runtime and its
 * operator facade) over a SimStore for clc.json and bmc.json, the real CC adapter (createCcClusters)
 * over the simulated network, and the real admin actions (clc/api/actions) run the way the admin
 * API runs them: parameters from query pairs, one request gate per request, left when it ends. Only
 * the HTTP edge (SigV4, XML) is left out. Power goes through a SimBmc per host (simBmc.ts).
 *
 * Replicas (issue 21): with an election (simElection.ts) the CLC is one of several replicas over
 * etcd's store (simEtcdStore.ts), assembled as clc/main.ts assembles one: changes only while it leads
 * (NotLeader otherwise, naming the leader), every CLC→CC change stamped with its epoch, host HA a
 * leader's duty (shared/leader/leaderDuties.ts), the change gate's queue refused when leadership is lost.
 */
import { DEFAULT_CLC_ORIGIN, type ActionContext } from '../clc/api/action.js';
import { findAction, READ_ACTIONS } from '../clc/api/actions/index.js';
import type { Principal } from '../clc/api/auth.js';
import { adminErrorFromHa } from '../clc/api/haErrorMap.js';
import { parseQueryParams } from '../clc/api/queryParams.js';
import type { XmlObject } from '../clc/api/xmlResponse.js';
import { createClcCore, startClcCore, type ClcCore } from '../clc/clcCore.js';
import { notLeaderError } from '../clc/core/leadership.js';
import { LeaderDuties } from '../shared/leader/leaderDuties.js';
import { createCcClusters } from '../clc/clusters/ccClusters.js';
import { DEFAULT_GATE_LIMITS } from '../clc/core/gate.js';
import { KeyedMutex } from '../shared/keyedMutex.js';
import { gatedClusters, openRequestGate } from '../clc/core/requestGate.js';
import { BMC_STORE_OPTIONS, type BmcState } from '../clc/ha/power/bmcStore.js';
import type { PowerDriver } from '../clc/ha/power/powerDriver.js';
import type { VolumeBackend } from '../clc/core/volumeBackend.js';
import { CLC_STORE_OPTIONS, type ClcState } from '../clc/state/clcStore.js';
import type { Clock } from '../shared/clock.js';
import { isFerryError } from '../shared/errors/registry.js';
import { silentLogger } from '../shared/log.js';
import type { Store, StoreOptions } from '../shared/store/store.js';
import type { WireTransport } from '../shared/wire/transport.js';
import type { Incarnation } from './incarnation.js';
import type { Prng } from './prng.js';
import { openSimStore, type SimDisk } from './simDisk.js';
import type { SimElection } from './simElection.js';
import type { SimEtcd } from './simEtcd.js';
import { openSimEtcdStore } from './simEtcdStore.js';

export const CLC_NAME = 'clc';

/** Replica i's network name: `clc`, `clc2`, `clc3` (the first is the one CLC of a one-replica cloud). */
export function clcReplicaName(i: number): string {
  return i === 0 ? CLC_NAME : `${CLC_NAME}${i + 1}`;
}
export const CLC_STORE = 'clc/clc';
export const BMC_STORE = 'clc/bmc';

/** The admin the workload acts as (the admin API's principal for an admin key). */
const SIM_ADMIN: Principal = Object.freeze({ accessKeyId: 'AKIASIMADMIN', accountId: 'sim', isAdmin: true });

export interface SimClcOptions {
  readonly life: Incarnation;
  readonly clock: Clock;
  readonly disk: SimDisk;
  /** This CLC's transport to the CCs (simulated network, CLC↔CC faults apply). */
  readonly transport: WireTransport;
  readonly partitions: readonly { readonly name: string; readonly endpoint: string }[];
  readonly ccTimeoutMs: number;
  readonly haTickMs: number;
  /** Write latencies and whether a write in flight at a crash landed. */
  readonly rng: Prng;
  readonly storeLatencyMs: number;
  /** Seeded ids for RunInstances. */
  readonly ids: () => string;
  readonly power: (host: string) => PowerDriver;
  /** The shared volume storage (sim/simVolumes.ts): the volume actions and host HA's storage fence use it. */
  readonly volumes: VolumeBackend;
  /** One of several replicas: its election and etcd (absent: the one CLC over its own files, no epochs). */
  readonly replica?: { readonly election: SimElection; readonly etcd: SimEtcd };
}

export interface SimClc {
  /** Its network name (clcReplicaName). */
  readonly name: string;
  readonly life: Incarnation;
  /** Its election, when it is one of several replicas. */
  readonly election: SimElection | undefined;
  readonly store: Store<ClcState>;
  /** Set once the core has started (host HA syncs its hosts with the CC first). */
  core: ClcCore | undefined;
  /** Runs an admin action as the admin API would; rejects with its coded error. */
  act(action: string, pairs: readonly (readonly [string, string])[]): Promise<XmlObject>;
}

export function bootClc(o: SimClcOptions, name: string = CLC_NAME): { clc: SimClc; started: Promise<unknown> } {
  const { life, clock } = o;
  const logger = silentLogger();
  const replica = o.replica;
  const fence = replica === undefined ? undefined : {
    fence: () => replica.election.fence(), leaderUrl: () => replica.election.leaderUrl(), holds: (key: string, epoch: number) => replica.etcd.holds(key, epoch),
  };
  const open = <T>(file: string, options: StoreOptions<T>): Store<T> => (fence === undefined
    ? openSimStore<T>({ disk: o.disk, file, store: options, life, clock, rng: o.rng, maxLatencyMs: o.storeLatencyMs })
    : openSimEtcdStore<T>({ disk: o.disk, file, store: options, life, clock, rng: o.rng, maxLatencyMs: o.storeLatencyMs, fence }));
  const store = open<ClcState>(CLC_STORE, CLC_STORE_OPTIONS);
  const bmc = open<BmcState>(BMC_STORE, BMC_STORE_OPTIONS);
  const leadership = replica?.election;
  const clusters = createCcClusters({ partitions: o.partitions, transport: o.transport, timeoutMs: o.ccTimeoutMs, ...(leadership ? { leadership } : {}) });
  // A dead CLC never hears its BMC's answer (the BMC itself acts regardless).
  const guarded = (d: PowerDriver): PowerDriver => ({
    status: () => life.guard(d.status()),
    on: () => life.guard(d.on()),
    off: () => life.guard(d.off()),
    reboot: () => life.guard(d.reboot()),
  });
  // One per CLC life, as clc/api/app.ts has one per process.
  const keyLocks = new KeyedMutex();
  const clc: SimClc = {
    name, life, election: leadership, store, core: undefined,
    act(actionName, pairs) {
      const core = clc.core;
      const action = findAction(actionName);
      // The simulated client sees a CLC that is down or an action that does not exist: no wire, so no registry code.
      if (!core || !action) return Promise.reject(new Error(`the CLC cannot run ${actionName} now`));
      const gate = openRequestGate(core.gate);
      const ctx: ActionContext = {
        clusters: gatedClusters(clusters, gate), gate, store, clock, logger, ids: o.ids, principal: SIM_ADMIN, origin: DEFAULT_CLC_ORIGIN, keyLocks, ha: core.haControl, haHooks: core.ha.hooks, volumes: o.volumes,
      };
      const handle = (): Promise<XmlObject> => {
        // As the admin API: a follower changes nothing (a read is served here).
        if (leadership !== undefined && !READ_ACTIONS.has(actionName) && !leadership.leading()) throw notLeaderError(leadership);
        return action.handle(parseQueryParams(pairs), ctx);
      };
      // A paused replica takes the request when it runs again.
      const done = life.guard((leadership === undefined ? Promise.resolve() : life.whenRunning()).then(handle))
        // As the admin API's error handler does: an HA refusal answers with the admin code it stands for; a write
        // refused because this replica was deposed while the request ran answers NotLeader.
        .catch((e: unknown) => {
          if (leadership !== undefined && isFerryError(e) && e.code === 'StoreNotLeader') throw notLeaderError(leadership);
          throw isFerryError(e) ? adminErrorFromHa(e) : e;
        });
      return done.finally(() => gate.leaveAll());
    },
  };
  const deps = {
    store, bmc, clusters, clock, logger, gateLimits: DEFAULT_GATE_LIMITS, haTickMs: o.haTickMs, powerDriver: (host: string) => guarded(o.power(host)), volumes: o.volumes,
  };
  if (leadership === undefined) {
    const started = life.guard(startClcCore(deps)).then((core) => { clc.core = core; });
    return { clc, started };
  }
  // A replica, as clc/main.ts: host HA runs while it leads; a follower serves reads at once.
  const core = createClcCore({ ...deps, leading: () => leadership.leading() });
  clc.core = core;
  const duties = new LeaderDuties({
    leadership, role: 'CLC', logger,
    duties: () => [{ name: 'host HA', start: () => core.ha.start(), stop: () => core.ha.stop() }],
    onLost: () => { core.gate.refuseWaiting(() => notLeaderError(leadership), 'this CLC replica lost its leadership'); },
  });
  o.replica?.election.onLeadershipChange(() => duties.reconcile());
  o.replica?.election.start();
  return { clc, started: duties.ready() };
}
