/** Shared builders for the NC unit tests. */
import type { VolumeConnector } from '../../nc/volumeConnector.js';
import { ManualClock } from '../../shared/clock.js';
import { silentLogger } from '../../shared/log.js';
import type { Store } from '../../shared/store/store.js';
import type { RunRequest } from '../../nc/admission.js';
import type { DomainInfo, DomainState } from '../../nc/hypervisor/driver.js';
import { openMemoryNcStore, type InstancePhase, type InstanceRecord, type NcSnapshot } from '../../nc/ncStore.js';
import { NodeController } from '../../nc/nodeController.js';
import type { CcNotifier } from '../../nc/ccNotifier.js';
import type { MigrationTiming } from '../../nc/migrationItemExecutor.js';
import type { PlanRetention } from '../../nc/migrationPlans.js';
import { FakeDriver } from './fakeDriver.js';

export const HOST = '127.0.10.1';
export const SMALL = { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 };
export const LARGE = { name: 'm1.large', cores: 2, memoryMiB: 512, diskGiB: 10 };

export function runRequest(instanceId: string, over: Partial<RunRequest> = {}): RunRequest {
  return {
    instanceId, reservationId: 'r-00000001', imageId: 'emi-00000001', ownerId: 'alice',
    vmType: SMALL, launchTime: 1000, ...over,
  };
}

export function record(instanceId: string, phase: InstancePhase, over: Partial<InstanceRecord> = {}): InstanceRecord {
  return {
    instanceId, reservationId: 'r-00000001', imageId: 'emi-00000001', ownerId: 'alice',
    vmType: SMALL, launchTime: 1000, phase, since: 0, migrationState: 'none', ...over,
  };
}

export function domain(id: string, state: DomainState = 'running', resources = SMALL): DomainInfo {
  return {
    id, state, resources: { cores: resources.cores, memoryMiB: resources.memoryMiB, diskGiB: resources.diskGiB },
    imageId: 'emi-00000001', diskPath: `/fake/${id}.img`, startedAt: 0,
  };
}

export function snapshot(records: InstanceRecord[], nodeState: NcSnapshot['nodeState'] = 'enabled'): NcSnapshot {
  return { nodeState, instances: Object.fromEntries(records.map((r) => [r.instanceId, r])), plans: {}, incoming: {} };
}

/**
 * A store wrapper that logs 'persist' after each durable update, next to the driver's own log;
 * `delayMs` makes every write slow, so a reply that does not wait for it shows up first.
 */
export function recordingStore(inner: Store<NcSnapshot>, log: string[], delayMs = 0): Store<NcSnapshot> {
  return {
    read: () => inner.read(),
    update: async (mutate) => {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      const r = await inner.update(mutate);
      log.push(`persist ${JSON.stringify(summary(inner.read()))}`);
      return r;
    },
  };
}

function summary(s: NcSnapshot): Record<string, string> {
  return { node: s.nodeState, ...Object.fromEntries(Object.values(s.instances).map((r) => [r.instanceId, r.phase])) };
}

export interface Harness {
  readonly clock: ManualClock;
  readonly driver: FakeDriver;
  readonly store: Store<NcSnapshot>;
  readonly controller: NodeController;
  /** Driver calls and store writes, interleaved in the order they happened. */
  readonly log: string[];
}

export interface HarnessOptions {
  readonly host?: string;
  readonly clock?: ManualClock;
  readonly driver?: FakeDriver;
  readonly store?: Store<NcSnapshot>;
  readonly start?: boolean;
  readonly storeDelayMs?: number;
  readonly notifier?: CcNotifier;
  readonly planRetention?: PlanRetention;
  readonly migrationTiming?: Partial<MigrationTiming>;
  readonly requireMigrationCredentials?: boolean;
  readonly volumeConnector?: VolumeConnector;
}

export async function harness(o: HarnessOptions = {}): Promise<Harness> {
  const clock = o.clock ?? new ManualClock(1_000_000);
  const host = o.host ?? HOST;
  const driver = o.driver ?? new FakeDriver(host, undefined, () => clock.now());
  const log = driver.calls;
  const store = recordingStore(o.store ?? (await openMemoryNcStore()), log, o.storeDelayMs);
  const controller = new NodeController({
    host, hypervisor: 'sim', store, driver, clock, logger: silentLogger(), notifier: o.notifier,
    planRetention: o.planRetention, migrationTiming: o.migrationTiming, requireMigrationCredentials: o.requireMigrationCredentials,
    ...(o.volumeConnector ? { volumeConnector: o.volumeConnector } : {}),
  });
  if (o.start ?? true) await controller.start();
  return { clock, driver, store, controller, log };
}

/** Lets queued promise callbacks run (timers fired by ManualClock start async work). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}
