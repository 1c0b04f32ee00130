/**
 * The CLC's core without its HTTP edge: the change gate, host HA's runtime (provider, service
 * actions, the runner's loop) and the operator's HA facade, over a store, a BMC store and the CC
 * clients. clc/main.ts serves it over the admin API; the simulator (sim/simClc.ts) assembles the same
 * pieces on its clock, disk and network, so both run one CLC.
 */
import type { GateLimits } from './core/gate.js';
import { PartitionGate } from './core/partitionGate.js';
import { gateEventsObserver } from './events/gateEvents.js';
import { HaControl } from './ha/haControl.js';
import { haSectionOf } from './ha/haRunner.js';
import { createHaRuntime, type HaRuntime, type HaRuntimeDeps } from './ha/haRuntime.js';

/** What host HA's runtime needs (the power driver defaults to the fence agent its BMC entry names), plus the gate's limits and HA's tick. */
export interface ClcCoreDeps extends Pick<HaRuntimeDeps, 'store' | 'bmc' | 'clusters' | 'clock' | 'logger' | 'powerDriver' | 'events' | 'volumes' | 'leading'> {
  readonly gateLimits: GateLimits;
  readonly haTickMs: number;
}

export interface ClcCore {
  readonly gate: PartitionGate;
  readonly ha: HaRuntime;
  readonly haControl: HaControl;
}

/** The core with host HA running (the single CLC, the simulator). */
export async function startClcCore(deps: ClcCoreDeps): Promise<ClcCore> {
  const core = createClcCore(deps);
  await core.ha.start();
  return core;
}

/** The core with host HA built but not started: a replica starts it while it leads (shared/leader/leaderDuties.ts). */
export function createClcCore(deps: ClcCoreDeps): ClcCore {
  const { store, bmc, clusters, clock, logger } = deps;
  const gate = new PartitionGate({ clock, logger, limits: deps.gateLimits, ...(deps.events ? { observer: gateEventsObserver(deps.events, logger) } : {}) });
  // Host HA: the runtime (provider through the CCs, service actions, the loop) and the operator's facade share one runner.
  const ha = createHaRuntime({
    store, bmc, clusters, gate, clock, logger, tickMs: deps.haTickMs, ...(deps.powerDriver ? { powerDriver: deps.powerDriver } : {}),
    ...(deps.events ? { events: deps.events } : {}),
    ...(deps.volumes ? { volumes: deps.volumes } : {}),
    ...(deps.leading ? { leading: deps.leading } : {}),
  });
  const partitions = clusters.partitions.map((p) => p.name);
  const haControl = new HaControl({ store: haSectionOf(store), bmc, runner: ha.runner, clock, partitions: () => partitions });
  return { gate, ha, haControl };
}
