/**
 * The CLC in the simulator: the real core (clc/clcCore.ts: change gate, host HA's runtime and its
 * operator facade) over a SimStore for clc.json and bmc.json, the real CC adapter (createCcClusters)
 * over the simulated network, and the real admin actions (clc/api/actions) run the way the admin
 * API runs them: parameters from query pairs, one request gate per request, left when it ends. Only
 * the HTTP edge (SigV4, XML) is left out. Power goes through a SimBmc per host (simBmc.ts).
 */
import { DEFAULT_CLC_ORIGIN, type ActionContext } from '../clc/api/action.js';
import { findAction } from '../clc/api/actions/index.js';
import type { Principal } from '../clc/api/auth.js';
import { adminErrorFromHa } from '../clc/api/haErrorMap.js';
import { parseQueryParams } from '../clc/api/queryParams.js';
import type { XmlObject } from '../clc/api/xmlResponse.js';
import { startClcCore, type ClcCore } from '../clc/clcCore.js';
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
import type { Store } from '../shared/store/store.js';
import type { WireTransport } from '../shared/wire/transport.js';
import type { Incarnation } from './incarnation.js';
import type { Prng } from './prng.js';
import { openSimStore, type SimDisk } from './simDisk.js';

export const CLC_NAME = 'clc';
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
}

export interface SimClc {
  readonly life: Incarnation;
  readonly store: Store<ClcState>;
  /** Set once the core has started (host HA syncs its hosts with the CC first). */
  core: ClcCore | undefined;
  /** Runs an admin action as the admin API would; rejects with its coded error. */
  act(action: string, pairs: readonly (readonly [string, string])[]): Promise<XmlObject>;
}

export function bootClc(o: SimClcOptions): { clc: SimClc; started: Promise<unknown> } {
  const { life, clock } = o;
  const logger = silentLogger();
  const store = openSimStore<ClcState>({ disk: o.disk, file: CLC_STORE, store: CLC_STORE_OPTIONS, life, clock, rng: o.rng, maxLatencyMs: o.storeLatencyMs });
  const bmc = openSimStore<BmcState>({ disk: o.disk, file: BMC_STORE, store: BMC_STORE_OPTIONS, life, clock, rng: o.rng, maxLatencyMs: o.storeLatencyMs });
  const clusters = createCcClusters({ partitions: o.partitions, transport: o.transport, timeoutMs: o.ccTimeoutMs });
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
    life, store, core: undefined,
    act(name, pairs) {
      const core = clc.core;
      const action = findAction(name);
      // The simulated client sees a CLC that is down or an action that does not exist: no wire, so no registry code.
      if (!core || !action) return Promise.reject(new Error(`the CLC cannot run ${name} now`));
      const gate = openRequestGate(core.gate);
      const ctx: ActionContext = {
        clusters: gatedClusters(clusters, gate), gate, store, clock, logger, ids: o.ids, principal: SIM_ADMIN, origin: DEFAULT_CLC_ORIGIN, keyLocks, ha: core.haControl, haHooks: core.ha.hooks, volumes: o.volumes,
      };
      const done = life.guard(Promise.resolve().then(() => action.handle(parseQueryParams(pairs), ctx)))
        // As the admin API's error handler does: an HA refusal answers with the admin code it stands for.
        .catch((e: unknown) => { throw isFerryError(e) ? adminErrorFromHa(e) : e; });
      return done.finally(() => gate.leaveAll());
    },
  };
  const started = life.guard(startClcCore({
    store, bmc, clusters, clock, logger, gateLimits: DEFAULT_GATE_LIMITS, haTickMs: o.haTickMs, powerDriver: (host) => guarded(o.power(host)), volumes: o.volumes,
  })).then((core) => { clc.core = core; });
  return { clc, started };
}
