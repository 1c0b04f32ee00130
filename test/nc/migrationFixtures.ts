/** Builders for the NC's live-migration tests: plans, requests, and a source + destination pair. */
import type { VolumeConnector } from '../../nc/volumeConnector.js';
import { ManualClock } from '../../shared/clock.js';
import type { MigrationPlan, NcMigrateRequest, PlanItem } from '../../shared/protocol/migrationProtocol.js';
import { StoreErrors } from '../../shared/store/errors.js';
import type { Store } from '../../shared/store/store.js';
import type { CcNodeEvent, CcNotifier } from '../../nc/ccNotifier.js';
import { hypervisorMigrationId } from '../../nc/migrationSource.js';
import type { MigrationTiming } from '../../nc/migrationItemExecutor.js';
import { openMemoryNcStore, type NcSnapshot } from '../../nc/ncStore.js';
import { FakeDriver } from './fakeDriver.js';
import { harness, runRequest, settle, SMALL, type Harness } from './fixtures.js';

export const SRC = '127.0.10.1';
export const DST = '127.0.10.2';
export const OTHER = '127.0.10.3';
export const MIG = 'mig-0000000a';
export const MIG2 = 'mig-0000000b';
export const A = 'i-0000000a';
export const B = 'i-0000000b';
export const C = 'i-0000000c';

export const TIMEOUTS: MigrationPlan['timeouts'] = {
  prepareMs: 10_000, readyMs: 10_000, migratingBaseMs: 30_000, migratingPerGiBMs: 60_000, stallMs: 20_000,
};

export function item(instanceId: string, over: Partial<PlanItem> = {}): PlanItem {
  return { instanceId, vmType: { ...SMALL }, destination: DST, state: 'queued', attempts: 1, queuedAt: 100, ...over };
}

export function plan(items: PlanItem[], over: Partial<MigrationPlan> = {}): MigrationPlan {
  return {
    migrationId: MIG, source: SRC, createdAt: 100,
    request: { kind: 'instance', destinations: [], allowHosts: true, reserveDestinations: false },
    limits: { perSource: 2, perDestination: 2, perCluster: 8 }, timeouts: TIMEOUTS, cancelRequested: false, items, ...over,
  };
}

type Req<A extends NcMigrateRequest['action']> = Extract<NcMigrateRequest, { action: A }>;

export const prepareSource = (p: MigrationPlan): NcMigrateRequest => ({ action: 'prepare', role: 'source', plan: p });

export function prepareDest(instanceId = A, over: { migrationId?: string; allowDisabled?: boolean; source?: string } = {}): NcMigrateRequest {
  const r = runRequest(instanceId);
  const migrationId = over.migrationId ?? MIG;
  return {
    action: 'prepare', role: 'destination', migrationId, allowDisabled: over.allowDisabled ?? false,
    incoming: {
      migrationId, instanceId, source: over.source ?? SRC, reservationId: r.reservationId, imageId: r.imageId,
      ownerId: r.ownerId, launchTime: r.launchTime, vmType: { ...r.vmType },
    },
  };
}

export function commit(instanceId = A, over: Partial<Req<'commit'>> = {}): NcMigrateRequest {
  return { action: 'commit', migrationId: MIG, instanceId, destination: DST, destinationUri: `fake://${DST}`, ...over };
}

export function rollback(role: 'source' | 'destination', over: Partial<Req<'rollback'>> = {}): NcMigrateRequest {
  return { action: 'rollback', role, migrationId: MIG, reason: 'test says so', cancel: false, ...over };
}

export function replan(instanceId: string, destination: string, error?: string): NcMigrateRequest {
  return { action: 'replan', migrationId: MIG, instanceId, destination, ...(error ? { error } : {}) };
}

/** The hypervisor's migration id of MIG's item for `instanceId`. */
export const hv = (instanceId = A, migrationId = MIG): string => hypervisorMigrationId(migrationId, instanceId);

/** A notifier that remembers every hint. */
export class RecordingNotifier implements CcNotifier {
  readonly events: CcNodeEvent[] = [];
  notify(e: CcNodeEvent): void {
    this.events.push(e);
  }
}

/**
 * The NC's disk as a crash sees it: `kill()` makes every later write fail (the process died there),
 * `dieAfterWrite(pred)` kills it right after the first durable write whose result matches.
 * What reached the inner store is what the restarted NC finds.
 */
export class CrashableStore implements Store<NcSnapshot> {
  private dead = false;
  private trigger: ((s: NcSnapshot) => boolean) | undefined;

  constructor(readonly inner: Store<NcSnapshot>) {}

  read(): NcSnapshot {
    return this.inner.read();
  }

  async update<R>(mutate: (draft: NcSnapshot) => R): Promise<R> {
    if (this.dead) throw StoreErrors.make('StoreWriteFailed', { file: 'nc.json', detail: 'the NC died here' });
    const r = await this.inner.update(mutate);
    if (this.trigger?.(this.inner.read())) {
      this.dead = true;
      this.trigger = undefined;
    }
    return r;
  }

  kill(): void {
    this.dead = true;
  }

  dieAfterWrite(pred: (s: NcSnapshot) => boolean): void {
    this.trigger = pred;
  }

  revive(): void {
    this.dead = false;
    this.trigger = undefined;
  }
}

export interface Pair {
  readonly clock: ManualClock;
  src: Harness;
  dst: Harness;
  readonly srcStore: CrashableStore;
  readonly dstStore: CrashableStore;
  readonly srcEvents: RecordingNotifier;
  readonly dstEvents: RecordingNotifier;
  readonly timing: Partial<MigrationTiming> | undefined;
  readonly requireCredentials: boolean;
}

export interface PairOptions {
  readonly timing?: Partial<MigrationTiming>;
  /** Instances running on the source before anything happens. */
  readonly instances?: readonly string[];
  /** Both NCs run mutual TLS: migrations need their per-migration credentials. */
  readonly requireCredentials?: boolean;
  /** Each side's volume connector (default: the shared-file one). */
  readonly volumeConnector?: (host: string) => VolumeConnector;
}

/** A source and a destination NC on one injected clock, their fake hypervisors linked. */
export async function pair(o: PairOptions = {}): Promise<Pair> {
  const clock = new ManualClock(1_000_000);
  const srcDriver = new FakeDriver(SRC, undefined, () => clock.now());
  const dstDriver = new FakeDriver(DST, undefined, () => clock.now());
  srcDriver.link(dstDriver);
  const srcStore = new CrashableStore(await openMemoryNcStore());
  const dstStore = new CrashableStore(await openMemoryNcStore());
  const srcEvents = new RecordingNotifier();
  const dstEvents = new RecordingNotifier();
  const req = o.requireCredentials ?? false;
  const connector = (host: string) => (o.volumeConnector ? { volumeConnector: o.volumeConnector(host) } : {});
  const src = await harness({ host: SRC, clock, driver: srcDriver, store: srcStore, notifier: srcEvents, migrationTiming: o.timing, requireMigrationCredentials: req, ...connector(SRC) });
  const dst = await harness({ host: DST, clock, driver: dstDriver, store: dstStore, notifier: dstEvents, migrationTiming: o.timing, requireMigrationCredentials: req, ...connector(DST) });
  for (const id of o.instances ?? [A]) await src.controller.run(runRequest(id));
  return { clock, src, dst, srcStore, dstStore, srcEvents, dstEvents, timing: o.timing, requireCredentials: req };
}

/** kill -9 of one side's NC: it does nothing more, and its connections to the hypervisor break. */
export async function crash(p: Pair, side: 'src' | 'dst'): Promise<void> {
  const old = p[side];
  (side === 'src' ? p.srcStore : p.dstStore).kill();
  await old.controller.stop();
  old.driver.dropConnections();
}

/** Starts a new NC over what the crashed one persisted, with the same hypervisor. */
export async function boot(p: Pair, side: 'src' | 'dst'): Promise<Harness> {
  const old = p[side];
  const store = side === 'src' ? p.srcStore : p.dstStore;
  store.revive();
  const events = side === 'src' ? p.srcEvents : p.dstEvents;
  const next = await harness({
    host: old.driver.host, clock: p.clock, driver: old.driver, store, notifier: events, migrationTiming: p.timing, requireMigrationCredentials: p.requireCredentials,
  });
  p[side] = next;
  await settle();
  return next;
}

export async function restart(p: Pair, side: 'src' | 'dst'): Promise<Harness> {
  await crash(p, side);
  return boot(p, side);
}

/** Source prepare, destination prepare, commit: the item is migrating. */
export async function startMigration(p: Pair, instanceId = A): Promise<void> {
  await p.src.controller.migrate(prepareSource(plan([item(instanceId)])));
  await p.dst.controller.migrate(prepareDest(instanceId));
  await p.src.controller.migrate(commit(instanceId));
  await settle();
}

/** The invariant: exactly one node holds a live record of the instance, and at most one domain runs. */
export function whereIs(p: Pair, instanceId = A): { records: string[]; running: string[] } {
  const records: string[] = [];
  const running: string[] = [];
  for (const h of [p.src, p.dst]) {
    const rec = h.store.read().instances[instanceId];
    if (rec && rec.phase !== 'terminated') records.push(h.driver.host);
    const d = h.driver.domains.get(instanceId);
    if (d?.state === 'running') running.push(h.driver.host);
  }
  return { records, running };
}

export function itemOf(h: Harness, instanceId = A, migrationId = MIG) {
  return h.store.read().plans[migrationId]?.items.find((i) => i.instanceId === instanceId);
}
