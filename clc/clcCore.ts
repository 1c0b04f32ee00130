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
import { startHaRuntime, type HaRuntime, type HaRuntimeDeps } from './ha/haRuntime.js';

/** What host HA's runtime needs (the power driver defaults to the fence agent its BMC entry names), plus the gate's limits and HA's tick. */
export interface ClcCoreDeps extends Pick<HaRuntimeDeps, 'store' | 'bmc' | 'clusters' | 'clock' | 'logger' | 'powerDriver' | 'events' | 'volumes'> {
  readonly gateLimits: GateLimits;
  readonly haTickMs: number;
}

export interface ClcCore {
  readonly gate: PartitionGate;
  readonly ha: HaRuntime;
  readonly haControl: HaControl;
}

export async function startClcCore(deps: ClcCoreDeps): Promise<ClcCore> {
  const { store, bmc, clusters, clock, logger } = deps;
  const gate = new PartitionGate({ clock, logger, limits: deps.gateLimits, ...(deps.events ? { observer: gateEventsObserver(deps.events, logger) } : {}) });
  // Host HA: the runtime (provider through the CCs, service actions, the loop) and the operator's facade share one runner.
  const ha = await startHaRuntime({
    store, bmc, clusters, gate, clock, logger, tickMs: deps.haTickMs, ...(deps.powerDriver ? { powerDriver: deps.powerDriver } : {}),
    ...(deps.events ? { events: deps.events } : {}),
    ...(deps.volumes ? { volumes: deps.volumes } : {}),
  });
  const partitions = clusters.partitions.map((p) => p.name);
  const haControl = new HaControl({ store: haSectionOf(store), bmc, runner: ha.runner, clock, partitions: () => partitions });
  return { gate, ha, haControl };
}
