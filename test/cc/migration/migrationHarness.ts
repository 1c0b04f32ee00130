/**
 * A CC with its migration plan driver over fake NCs that implement the handshake, on a ManualClock.
 * `restart()` builds a new CC (keeper, service, runner) over the same NCs, as after a CC crash.
 */
import { CcService } from '../../../cc/service.js';
import type { CredentialIssuer } from '../../../cc/migration/credentialIssuer.js';
import type { Limits, Timeouts } from '../../../cc/migration/settings.js';
import { initialView, reservationsOfView } from '../../../cc/view.js';
import { ViewKeeper } from '../../../cc/viewKeeper.js';
import { ManualClock } from '../../../shared/clock.js';
import { silentLogger } from '../../../shared/log.js';
import type { Resources } from '../../../shared/model/resources.js';
import type { CcRequest } from '../../../shared/protocol/ccProtocol.js';
import { failTransfer, finishCleaning, loseCredential, switchOver } from '../fakeMigrations.js';
import { FakeNodes, slots, SMALL, type FakeNc, type MigrationMode } from '../fakeNodes.js';
import { CTX, runReq } from '../harness.js';
import { D1, D2, D3, id, S } from './builders.js';

export const URI_TEMPLATE = 'http://{host}:16509';
export const TIMEOUTS: Timeouts = { prepareMs: 2000, readyMs: 2000, migratingBaseMs: 1000, migratingPerGiBMs: 1000, stallMs: 500 };

export interface MigrationHarnessOptions {
  readonly nodes: readonly (readonly [string, Resources, Partial<FakeNc>?])[];
  readonly limits?: Partial<Limits>;
  readonly timeouts?: Partial<Timeouts>;
  readonly mode?: MigrationMode;
  /** Deliver the NCs' ccNodeEvent notices (default true). */
  readonly events?: boolean;
  /** Start the keeper's safety-net poll with this interval (default: no poll). */
  readonly pollMs?: number;
  /** Per-migration credentials for prepare and commit (default: none, a plaintext cloud). */
  readonly credentials?: CredentialIssuer;
  /** As the CC daemon: no item starts before ccSetFencedHosts (default false). */
  readonly awaitFencedHosts?: boolean;
}

export type MigrateArgs = Partial<CcRequest<'ccMigrateInstances'>>;

export async function migrationHarness(opts: MigrationHarnessOptions) {
  const fake = new FakeNodes();
  for (const [host, capacity, init] of opts.nodes) fake.add(host, capacity, init);
  const hosts = opts.nodes.map(([h]) => h);
  const clock = new ManualClock(1_000_000);
  fake.now = () => clock.now();
  fake.migrationMode = opts.mode ?? 'auto';
  let hex = 0;

  const boot = async () => {
    const logger = silentLogger();
    const keeper = new ViewKeeper({ initial: initialView('cluster01', hosts), nodes: fake, clock, logger });
    const service = new CcService({
      keeper, nodes: fake, clock, logger, policy: 'spread', ncTimeoutMs: 500,
      migration: {
        limits: { perSource: 2, perDestination: 2, perCluster: 8, ...opts.limits },
        timeouts: { ...TIMEOUTS, ...opts.timeouts }, uriTemplate: URI_TEMPLATE,
        newHex: () => (++hex).toString(16).padStart(8, '0'),
      },
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      ...(opts.awaitFencedHosts === true ? { awaitFencedHosts: true } : {}),
    });
    await keeper.refreshHosts(hosts, 500);
    if (opts.events ?? true) fake.onEvent = (ev) => service.ops.ccNodeEvent(ev, CTX);
    service.planDriver.start();
    if (opts.pollMs !== undefined) keeper.startPolling(opts.pollMs, 500);
    return { keeper, service };
  };

  let cc = await boot();

  const settle = async (): Promise<void> => {
    let last = -1;
    for (let round = 0; round < 200; round++) {
      await cc.service.planDriver.idle();
      await cc.keeper.idle();
      await fake.idle();
      await new Promise((r) => setImmediate(r));
      if (fake.calls.length === last) return;
      last = fake.calls.length;
    }
    throw new Error('the CC never settled (a hot loop?)');
  };

  const h = {
    fake, clock,
    get keeper() { return cc.keeper; },
    get service() { return cc.service; },
    get ops() { return cc.service.ops; },
    settle,
    /** Moves time on (timers fire), then lets everything run. */
    advance: async (ms: number) => {
      clock.advance(ms);
      await settle();
    },
    migrate: (args: MigrateArgs) => cc.service.ops.ccMigrateInstances({
      destinations: [], allowHosts: true, reserveDestinations: false, partial: false, vmTypes: [SMALL], ...args,
    }, CTX),
    describe: async (migrationId?: string) => (await cc.service.ops.ccDescribeMigrations(migrationId === undefined ? {} : { migrationId }, CTX)).migrations,
    cancel: (migrationId: string) => cc.service.ops.ccCancelMigration({ migrationId }, CTX),
    run: (instanceIds: string[], minCount = instanceIds.length, reservationId = 'r-0000000b') => cc.service.ops.ccRunInstances(runReq(instanceIds, minCount, SMALL, reservationId), CTX),
    instances: async () => (await cc.service.ops.ccDescribeInstances({}, CTX)).instances,
    /** Item states as the source NC holds them, in plan order. */
    states: (migrationId: string) => [...fake.ncs.values()].flatMap((nc) => nc.plans.filter((p) => p.migrationId === migrationId).flatMap((p) => p.items.map((i) => i.state))),
    reserved: () => Object.fromEntries([...reservationsOfView(cc.keeper.get()).byHost].map(([host, r]) => [host, r.cores])),
    /** The hypervisor moves the VM: it runs on the destination now; the source item is cleaning. */
    switchOver: async (migrationId: string, instanceId: string, source = S) => {
      switchOver(fake.world, source, migrationId, instanceId);
      await settle();
    },
    /** The source has cleaned up: the item is completed. */
    finishCleaning: async (migrationId: string, instanceId: string, source = S) => {
      finishCleaning(fake.world, source, migrationId, instanceId);
      await settle();
    },
    /** Switch-over and clean-up, one instance after the other. */
    complete: async (migrationId: string, instanceIds: readonly string[], source = S) => {
      for (const i of instanceIds) {
        await h.switchOver(migrationId, i, source);
        await h.finishCleaning(migrationId, i, source);
      }
    },
    /** The source NC restarted without the credential its hypervisor never got: the item awaits the next generation. */
    loseCredential: async (migrationId: string, instanceId: string, source = S) => {
      loseCredential(fake.world, source, migrationId, instanceId);
      await settle();
    },
    /** The source NC gives up on a migrating item (failure, stall, its own timeout). */
    failTransfer: async (migrationId: string, instanceId: string, error: string, source = S) => {
      failTransfer(fake.world, source, migrationId, instanceId, error);
      await settle();
    },
    /** Stops this CC (as a crash would: nothing is persisted anyway) and boots a new one over the same NCs. */
    restart: async () => {
      await cc.service.planDriver.stop();
      await cc.keeper.stop();
      fake.onEvent = undefined;
      cc = await boot();
      await settle();
    },
  };
  return h;
}

export const ids = (from: number, n: number): string[] => Array.from({ length: n }, (_, k) => id(from + k));

/** A source S running `n` instances (ids 1..n) and destinations D1-D3 with room for four each. */
export async function sourceWithInstances(n: number, opts: Partial<MigrationHarnessOptions> = {}) {
  const h = await migrationHarness({ nodes: [[S, slots(8)], [D1, slots(4)], [D2, slots(4)], [D3, slots(4)]], ...opts });
  await h.settle(); // a first poll round may still be in flight: let it land before the NC changes
  for (const i of ids(1, n)) h.fake.sneak(S, i);
  await h.keeper.refreshHosts([S], 500);
  return h;
}

export type MigrationHarness = Awaited<ReturnType<typeof migrationHarness>>;

export function liveOn(h: MigrationHarness, host: string): string[] {
  return h.fake.live(host).map((i) => i.instanceId).sort();
}
