/**
 * A small cloud for the HA runtime tests (clc/ha/haRuntime.ts): fake CCs with three hosts (two
 * instances launched on A and recorded as the CLC records them), memory stores, a ManualClock and
 * fake power drivers that log their actions.
 */
import { PartitionGate } from '../../../clc/core/partitionGate.js';
import type { VolumeBackend } from '../../../clc/core/volumeBackend.js';
import { startHaRuntime, type HaRuntime } from '../../../clc/ha/haRuntime.js';
import type { HaState } from '../../../clc/ha/hostHaState.js';
import { openMemoryBmcStore, type BmcEntry } from '../../../clc/ha/power/bmcStore.js';
import type { PowerDriver } from '../../../clc/ha/power/powerDriver.js';
import { openMemoryClcStore } from '../../../clc/state/clcStore.js';
import { ManualClock } from '../../../shared/clock.js';
import { silentLogger } from '../../../shared/log.js';
import { DEFAULT_VM_TYPES } from '../../../shared/model/vmTypes.js';
import { FakeClusters, type FakeNode } from '../fakeClusters.js';

export const P = 'cluster01';
export const [A, B, C] = ['127.0.12.1', '127.0.12.2', '127.0.12.3'] as const;
const ENTRY: BmcEntry = { agent: 'fence_ipmilan', options: { ip: '127.0.30.1', ipport: '16230', username: 'admin' }, password: 'pw', timeoutMs: 10_000 };
const SETTINGS = {
  healthCheckIntervalMs: 100, healthCheckTimeoutMs: 50,
  activityCheckInitialDelayMs: 100, activityCheckIntervalMs: 100, activityCheckTimeoutMs: 50,
  activityCheckMaxAttempts: 2, activityCheckFailureRatio: 0.5,
  degradedMaxPeriodMs: 1_000_000, recoverTimeoutMs: 50, recoverWaitPeriodMs: 500, recoverFailureThreshold: 0, fenceTimeoutMs: 200,
  repairRetryInitialDelayMs: 100, repairRetryIntervalMs: 200,
};

export class FakePower implements PowerDriver {
  readonly calls: string[] = [];
  /** 'ok', a failure, or never answering (a dead BMC). */
  mode: 'ok' | 'fail' | 'hang' = 'ok';
  constructor(private readonly host: string, private readonly log: string[]) {}
  private act(what: string): Promise<void> {
    this.calls.push(what);
    this.log.push(`${what}@${this.host}`);
    if (this.mode === 'fail') return Promise.reject(new Error('BMC refused'));
    if (this.mode === 'hang') return new Promise(() => undefined);
    return Promise.resolve();
  }
  async status() { return 'on' as const; }
  async on() { await this.act('on'); }
  async off() { await this.act('off'); return { alreadyOff: false }; }
  async reboot() { await this.act('reboot'); }
}

let rt: HaRuntime | undefined;

/** Stops the runtime the last world() started (afterEach). */
export async function stopWorld(): Promise<void> {
  await rt?.stop();
  rt = undefined;
}

export async function world(opts: { maxUnhealthy?: string; withBmc?: readonly string[]; volumes?: VolumeBackend; leading?: () => boolean } = {}) {
  const clock = new ManualClock(1_000_000);
  const fake = new FakeClusters({ [P]: [{ host: A }, { host: B }, { host: C }] });
  fake.clock = clock;
  const store = await openMemoryClcStore();
  const bmc = await openMemoryBmcStore();
  for (const h of opts.withBmc ?? [A, B, C]) await bmc.update((d) => { d.hosts[h] = { ...ENTRY, options: { ...ENTRY.options } }; });
  await store.update((d) => {
    d.ha.global.settings = SETTINGS;
    d.ha.partitions[P] = { enabled: true, settings: {}, ...(opts.maxUnhealthy ? { maxUnhealthy: opts.maxUnhealthy } : {}) };
  });
  // Two instances on A (greedy: the first enabled node), recorded as the CLC records a launch.
  const small = DEFAULT_VM_TYPES[0] ?? (() => { throw new Error('no vm type'); })();
  const launched = await fake.call(P, 'ccRunInstances', {
    reservationId: 'r-00000001', imageId: 'emi-00000001', ownerId: 'alice', vmType: small, instanceIds: ['i-00000001', 'i-00000002'], minCount: 2, launchTime: 5,
  });
  await store.update((d) => {
    launched.instances.forEach((i, k) => {
      d.instances[i.instanceId] = {
        instanceId: i.instanceId, reservationId: 'r-00000001', ownerId: 'alice', imageId: 'emi-00000001', vmType: small.name, partition: P,
        launchTime: 5, launchIndex: k, phase: 'launched',
      };
    });
  });
  for (const id of ['i-00000001', 'i-00000002']) fake.setInstanceState(id, 'running');
  const log: string[] = [];
  const power = new Map<string, FakePower>();
  const gate = new PartitionGate({ clock });
  const start = async () => {
    rt = await startHaRuntime({
      store, bmc, clusters: fake, gate, clock, logger: silentLogger(), tickMs: 1_000_000_000,
      powerDriver: (host) => power.get(host) ?? power.set(host, new FakePower(host, log)).get(host) as FakePower,
      ...(opts.volumes ? { volumes: opts.volumes } : {}),
      ...(opts.leading ? { leading: opts.leading } : {}),
    });
    return rt;
  };
  const runtime = await start();
  const state = (h: string): HaState | undefined => store.read().ha.hosts[h]?.state;
  /** Lets `ms` pass in steps of 50 ms, one pass per step. */
  const run = async (ms: number, r: HaRuntime = rt as HaRuntime) => {
    for (let t = 0; t < ms; t += 50) {
      clock.advance(50);
      await r.pass();
      // Lets the submitted work answer (a hanging BMC never does; its deadline is on this clock).
      for (let k = 0; k < 5; k++) await new Promise((res) => setImmediate(res));
    }
  };
  const ops = (op: string) => fake.calls.filter((c) => c.op === op);
  return { clock, fake, store, bmc, runtime, state, run, log, power, ops, start };
}

export type World = Awaited<ReturnType<typeof world>>;

/** `host`'s NC stops answering the CC; its VMs died with it ('inactive') or keep writing ('active'). */
export function loseNc(w: World, host: string, activity: 'active' | 'inactive'): FakeNode {
  const node = w.fake.node(host);
  if (!node) throw new Error(`no ${host}`);
  node.reachable = false;
  w.fake.activity.set(host, activity);
  return node;
}

/** The CC reports `host` unhealthy (no control) while keeping it reachable, so a drain can still run. */
export function reportUnhealthy(w: World, host: string): void {
  const node = w.fake.node(host);
  if (!node) throw new Error(`no ${host}`);
  node.healthy = false;
}
