/**
 * HaControl (clc/ha/haControl.ts) over a memory store, a memory BMC store, a ManualClock and the
 * scripted FakeHa: every operator operation, and a table of refusals that each change nothing.
 */
import { lastEventsByHost } from '../../../clc/ha/haControl.js';
import { describe, expect, it } from 'vitest';
import { adminErrorFromHa } from '../../../clc/api/haErrorMap.js';
import type { HaControl } from '../../../clc/ha/haControl.js';
import type { HaRunner } from '../../../clc/ha/haRunner.js';
import { openMemoryBmcStore, type BmcState } from '../../../clc/ha/power/bmcStore.js';
import { openMemoryClcStore, type ClcState } from '../../../clc/state/clcStore.js';
import { ManualClock } from '../../../shared/clock.js';
import { isFerryError } from '../../../shared/errors/registry.js';
import type { Store } from '../../../shared/store/store.js';
import { FakeHa } from './fakeHa.js';
import { SETTINGS } from './haFixtures.js';
import { setUpHa } from './haSetup.js';

const H1 = '127.0.30.1';
const H2 = '127.0.30.2';
const SECRET = 's3cret-pw';
const BMC = { agent: 'fence_ipmilan', address: '127.0.31.1', port: 6230, username: 'admin', password: SECRET };

interface Env {
  readonly control: HaControl;
  readonly runner: HaRunner;
  readonly store: Store<ClcState>;
  readonly bmc: Store<BmcState>;
  readonly clock: ManualClock;
  readonly fake: FakeHa;
}

async function setup(): Promise<Env> {
  const store = await openMemoryClcStore();
  const bmc = await openMemoryBmcStore();
  const clock = new ManualClock(Date.UTC(2013, 5, 1, 12));
  const fake = new FakeHa();
  await store.update((d) => { d.ha.global.settings = { ...SETTINGS }; });
  const ha = await setUpHa({ store, clock, partitions: ['p1', 'p2'], provider: fake, actions: fake, bmc });
  await ha.control.configureHost({ host: H1, partition: 'p1', bmc: BMC, by: 'admin' });
  await ha.control.configureHost({ host: H2, partition: 'p1', bmc: {}, by: 'admin' });
  return { control: ha.control, runner: ha.runner, store, bmc, clock, fake };
}

/** Enables p1 and lets the hosts become AVAILABLE. */
async function enabled(env: Env): Promise<void> {
  await env.control.setClusterEnabled('p1', true, 'admin');
  await env.runner.evaluateEligibility();
  await env.runner.tick();
  await env.runner.idle();
}

const state = (env: Env, host: string) => env.store.read().ha.hosts[host]?.state;

/** The refusal as the admin sees it: HA's own code, mapped to the admin API's (clc/api/haErrorMap.ts). */
async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (isFerryError(e)) {
      const admin = adminErrorFromHa(e);
      return `${admin.code}: ${admin.message}`;
    }
    throw e;
  }
  throw new Error('expected a coded error');
}

describe('HaControl', () => {
  it('ConfigureHAForHost stores the BMC apart, shows only passwordSet, and logs no password', async () => {
    const env = await setup();
    expect(env.bmc.read().hosts[H1]).toMatchObject({ agent: 'fence_ipmilan', password: SECRET, options: { ip: '127.0.31.1', ipport: '6230', username: 'admin' } });
    const [view] = env.control.describeHosts({ hosts: [H1] });
    expect(view?.bmc).toEqual({ agent: 'fence_ipmilan', options: { ip: '127.0.31.1', ipport: '6230', username: 'admin' }, timeoutMs: 20_000, passwordSet: true });
    expect(view?.record.state).toBe('DISABLED');
    expect(view?.haEnabled).toBe(false);
    expect(JSON.stringify(env.store.read())).not.toContain(SECRET);
    expect(JSON.stringify(env.control.configurations())).not.toContain(SECRET);
    expect(JSON.stringify(env.control.events({}))).not.toContain(SECRET);
    // A host configured without BMC settings has none.
    expect(env.control.describeHosts({ hosts: [H2] })[0]?.bmc).toBeNull();
  });

  it('a second ConfigureHAForHost merges: the password and unchanged options are kept', async () => {
    const env = await setup();
    await env.control.configureHost({ host: H1, partition: 'p1', bmc: { port: 6231 }, by: 'admin' });
    expect(env.bmc.read().hosts[H1]).toMatchObject({ password: SECRET, options: { ip: '127.0.31.1', ipport: '6231', username: 'admin' } });
  });

  const refusals: { name: string; code: RegExp; run: (c: HaControl, env: Env) => Promise<unknown> }[] = [
    { name: 'an unknown partition', code: /^InvalidAvailabilityZone: .*p9.*known: p1, p2/, run: (c) => c.configureHost({ host: '127.0.30.9', partition: 'p9', bmc: {}, by: 'a' }) },
    { name: 'a host in another partition than HA knows', code: /^InvalidParameterCombination: .*p1, not p2/, run: (c) => c.configureHost({ host: H1, partition: 'p2', bmc: BMC, by: 'a' }) },
    { name: 'BMC settings without an agent', code: /^MissingParameter: .*Agent/, run: (c) => c.configureHost({ host: H2, partition: 'p1', bmc: { address: '127.0.31.2' }, by: 'a' }) },
    { name: 'BMC settings without an address', code: /^MissingParameter: .*Address/, run: (c) => c.configureHost({ host: H2, partition: 'p1', bmc: { agent: 'fence_ipmilan' }, by: 'a' }) },
    { name: 'an agent the protocol refuses', code: /^InvalidParameterValue: .*fence_\* agent/, run: (c) => c.configureHost({ host: H2, partition: 'p1', bmc: { ...BMC, agent: 'ipmitool' }, by: 'a' }) },
    { name: 'a BMC timeout out of range', code: /^InvalidParameterValue: .*timeoutMs/, run: (c) => c.configureHost({ host: H2, partition: 'p1', bmc: { ...BMC, timeoutMs: 10 }, by: 'a' }) },
    {
      name: 'a cluster initial delay beyond the global interval', code: /^InvalidParameterCombination: .*p1.*activityCheckInitialDelayMs/,
      run: (c) => c.configureCluster({ partition: 'p1', settings: { activityCheckInitialDelayMs: 1000 }, by: 'a' }),
    },
    { name: 'AutoRepair without a partition', code: /^InvalidParameterCombination: AutoRepair/, run: (c) => c.configureCluster({ settings: {}, autoRepair: 'off', by: 'a' }) },
    { name: 'enabling an unknown host', code: /^InvalidHost.NotFound: No node 127.0.30.9 is registered in host HA/, run: (c) => c.setHostEnabled('127.0.30.9', true, 'a') },
    { name: 'enabling an unknown partition', code: /^InvalidAvailabilityZone/, run: (c) => c.setClusterEnabled('p9', true, 'a') },
    { name: 'ConfirmHostFenced of a host not being fenced', code: /^IncorrectHostHAState: Host 127.0.30.1 is DISABLED: .*being fenced/, run: (c) => c.confirmFenced(H1, 'a') },
    { name: 'FenceHost of an unknown host', code: /^InvalidHost.NotFound/, run: (c) => c.fenceHost('127.0.30.9', 'a') },
    { name: 'a suspension that ended already', code: /^InvalidParameterValue: .*Until.*future/, run: (c, env) => c.suspend({ kind: 'partition', name: 'p1' }, env.clock.now() - 1, 'r', 'a') },
    { name: 'suspending an unknown host', code: /^InvalidHost.NotFound/, run: (c) => c.suspend({ kind: 'host', name: '127.0.30.9' }, null, 'r', 'a') },
    { name: 'resuming an unknown cluster', code: /^InvalidAvailabilityZone/, run: (c) => c.resume({ kind: 'cluster', name: 'nope' }, 'a') },
    { name: 'describing an unknown host', code: /^InvalidHost.NotFound/, run: async (c) => c.describeHosts({ hosts: [H1, '127.0.30.9'] }) },
  ];

  it.each(refusals)('refuses $name with a coded error and changes nothing', async ({ code, run }) => {
    const env = await setup();
    const before = JSON.stringify([env.store.read(), env.bmc.read()]);
    expect(await codeOf(run(env.control, env))).toMatch(code);
    await env.runner.idle();
    expect(JSON.stringify([env.store.read(), env.bmc.read()])).toBe(before);
  });

  it('FenceHost of an AVAILABLE host whose NC does not answer fences without force (HA has not noticed yet)', async () => {
    const env = await setup();
    await enabled(env);
    env.fake.healthy.set(H1, false);
    expect((await env.control.fenceHost(H1, 'admin')).record).toMatchObject({ state: 'FENCING', reason: 'FenceHost by admin' });
  });

  it('the event log can be followed: After a cursor, a long poll answers as soon as a newer event exists, none missed or repeated', async () => {
    const env = await setup();
    const all = env.control.events({});
    const ids = all.map((e) => e.id ?? 0);
    expect(ids.every((id, i) => id > (ids[i - 1] ?? 0))).toBe(true);
    const last = ids.at(-1) ?? 0;
    const waiting = env.control.waitEvents({ after: last }, 20_000);
    await env.control.suspend({ kind: 'partition', name: 'p1' }, null, 'rack work', 'admin');
    await env.control.suspend({ kind: 'partition', name: 'p2' }, null, 'rack work', 'admin');
    env.clock.advance(100);
    const got = await waiting;
    expect(got.map((e) => e.id)).toEqual([last + 1, last + 2]);
    // A cursor with MaxResults keeps the oldest after it: the next call takes up where this one stopped.
    expect(env.control.events({ after: last, limit: 1 }).map((e) => e.id)).toEqual([last + 1]);
    expect(env.control.events({ after: last + 1, limit: 1 }).map((e) => e.id)).toEqual([last + 2]);
    // Nothing newer: the long poll answers empty once its wait is over.
    const idle = env.control.waitEvents({ after: last + 2 }, 1000);
    for (let i = 0; i < 12; i++) {
      env.clock.advance(100);
      await new Promise((r) => setImmediate(r));
    }
    expect(await idle).toEqual([]);
  });

  it('FenceHost of a DISABLED host is refused, naming the state', async () => {
    const env = await setup();
    expect(state(env, H1)).toBe('DISABLED');
    expect(await codeOf(env.control.fenceHost(H1, 'admin'))).toMatch(/^IncorrectHostHAState: Host 127.0.30.1 is DISABLED/);
  });

  it('the switches: a partition on makes its hosts watchable, a host off is DISABLED at once, on again evaluated at once', async () => {
    const env = await setup();
    await enabled(env);
    expect([state(env, H1), state(env, H2)]).toEqual(['AVAILABLE', 'AVAILABLE']);
    const off = await env.control.setHostEnabled(H1, false, 'admin');
    expect(off.haEnabled).toBe(false);
    expect(off.record.state).toBe('DISABLED');
    expect(env.store.read().ha.hostDisabled).toEqual([H1]);
    env.fake.eligible.set(H1, false);
    const on = await env.control.setHostEnabled(H1, true, 'admin');
    // Switched on, its eligibility is evaluated at once.
    expect(on.record).toMatchObject({ state: 'INELIGIBLE', reason: 'no power management' });
    expect(env.store.read().ha.hostDisabled).toEqual([]);
    env.fake.eligible.set(H1, true);
    await env.control.setHostEnabled(H1, false, 'admin');
    expect((await env.control.setHostEnabled(H1, true, 'admin')).record.state).toBe('AVAILABLE');
    const views = await env.control.setClusterEnabled('p1', false, 'admin');
    expect(views.map((v) => [v.host, v.record.state])).toEqual([[H1, 'DISABLED'], [H2, 'DISABLED']]);
    expect(env.store.read().ha.partitions.p1?.enabled).toBe(false);
  });

  it('switching a partition of 300 hosts on and off steps them together: a few store writes, not one per host (issue 19)', async () => {
    const env = await setup();
    const many = Array.from({ length: 300 }, (_, i) => `127.0.${32 + Math.floor(i / 250)}.${(i % 250) + 1}`);
    await env.runner.syncHosts(many.map((host) => ({ host, partition: 'p1' })));
    let writes = 0;
    const update = env.store.update.bind(env.store);
    env.store.update = ((m: Parameters<typeof update>[0]) => { writes++; return update(m); }) as typeof env.store.update;
    await env.control.setClusterEnabled('p1', true, 'admin');
    await env.runner.idle();
    expect(many.every((h) => state(env, h) === 'AVAILABLE')).toBe(true);
    expect(writes).toBeLessThan(10);
    writes = 0;
    await env.control.setClusterEnabled('p1', false, 'admin');
    expect(many.every((h) => state(env, h) === 'DISABLED')).toBe(true);
    expect(writes).toBeLessThan(10);
  });

  it('FenceHost: DisableService, then the fence, then FENCED and evacuated, all in the log', async () => {
    const env = await setup();
    await enabled(env);
    // Up and healthy (AVAILABLE, its NC answers): refused without force, and nothing changes.
    const untouched = JSON.stringify(env.store.read());
    expect(await codeOf(env.control.fenceHost(H1, 'AKIDADMIN'))).toMatch(/^HostHealthy: Host 127\.0\.30\.1 is up and healthy/);
    await env.runner.idle();
    expect(JSON.stringify(env.store.read())).toBe(untouched);
    const view = await env.control.fenceHost(H1, 'AKIDADMIN', true);
    expect(view.record.state).toBe('FENCING');
    expect(view.record.reason).toBe('FenceHost by AKIDADMIN, forced (the host was up and healthy)');
    await env.runner.idle();
    expect(state(env, H1)).toBe('FENCED');
    expect(env.fake.calls.filter((c) => !c.startsWith('health'))).toEqual([`disable ${H1}`, `fence ${H1}`, `evacuate ${H1} (agent)`]);
    expect(env.control.events({ host: H1 }).map((e) => e.to).filter(Boolean)).toContain('FENCED');
    // Fencing a fenced host again succeeds and does nothing more: no new call, no new event, the record unchanged.
    const before = structuredClone(env.store.read().ha.hosts[H1]);
    const eventsBefore = env.control.events({ host: H1 }).length;
    expect((await env.control.fenceHost(H1, 'admin')).record.state).toBe('FENCED');
    await env.runner.idle();
    expect(env.store.read().ha.hosts[H1]).toEqual(before);
    expect(env.control.events({ host: H1 })).toHaveLength(eventsBefore);
    expect(env.fake.calls.filter((c) => c === `fence ${H1}`)).toHaveLength(1);
  });

  it('DisableHAForHost of a FENCING host is refused and cancels nothing; DisableHAForCluster lets the fence finish and keeps the host until EnableService', async () => {
    const env = await setup();
    await enabled(env);
    env.fake.fences.set(H1, 'hang');
    await env.control.fenceHost(H1, 'admin', true);
    const before = structuredClone(env.store.read().ha);
    expect(await codeOf(env.control.setHostEnabled(H1, false, 'admin'))).toBe(
      'HostFenceInProgress: Host 127.0.30.1 is FENCING: a power-off in flight cannot be un-issued, so HA stays on for it; wait for FENCED (or ConfirmHostFenced if its BMC is dead), then DisableHAForHost');
    expect(env.store.read().ha).toEqual(before);
    // The cluster switch goes off at once, but the host being fenced finishes its fence first.
    const views = await env.control.setClusterEnabled('p1', false, 'admin');
    expect(views.map((v) => [v.host, v.record.state])).toEqual([[H1, 'FENCING'], [H2, 'DISABLED']]);
    expect(env.control.events({ host: 'partition:p1' }).at(-1)?.message).toContain(`${H1} fenced or being fenced: HA switches off for them once EnableService returns them`);
    env.fake.fences.set(H1, 'ok');
    env.fake.release();
    await env.runner.idle();
    expect(state(env, H1)).toBe('FENCED');
    await env.runner.tick();
    await env.runner.idle();
    // A fence is seen through: the host stays FENCED (in maintenance, cleaned when it returns) until EnableService.
    expect(state(env, H1)).toBe('FENCED');
    expect(env.fake.calls.filter((c) => c === `fence ${H1}`)).toHaveLength(1);
  });

  it('a failed fence needs an operator: the dry run says so, and ConfirmHostFenced fences it by the operator', async () => {
    const env = await setup();
    await enabled(env);
    env.fake.fences.set(H1, 'fail');
    await env.control.fenceHost(H1, 'admin', true);
    await env.runner.idle();
    const [v] = env.control.describeHosts({ hosts: [H1], dryRun: true });
    expect(v?.record).toMatchObject({ state: 'FENCING', needsOperator: true });
    expect(v?.dryRun).toMatchObject({ waitsForOperator: true, next: expect.stringContaining('ConfirmHostFenced') });
    const confirmed = await env.control.confirmFenced(H1, 'AKIDADMIN');
    expect(confirmed.record).toMatchObject({ state: 'FENCED', fencedBy: 'operator', needsOperator: false });
    await env.runner.idle();
    expect(env.fake.calls).toContain(`evacuate ${H1} (operator)`);
  });

  it('ConfigureHAForCluster layers settings, maxUnhealthy and auto-repair; only the given keys change', async () => {
    const env = await setup();
    await env.control.configureCluster({ partition: 'p1', settings: { fenceTimeoutMs: 45_000 }, maxUnhealthy: '2', autoRepair: 'migrate', by: 'admin' });
    const c = await env.control.configureCluster({ partition: 'p1', settings: { recoverFailureThreshold: 3 }, by: 'admin' });
    const p1 = c.partitions.find((p) => p.partition === 'p1');
    expect(p1).toMatchObject({ enabled: false, maxUnhealthy: '2', autoRepair: 'migrate', overrides: { fenceTimeoutMs: 45_000, recoverFailureThreshold: 3 } });
    expect(p1?.effective).toMatchObject({ fenceTimeoutMs: 45_000, recoverFailureThreshold: 3, healthCheckIntervalMs: SETTINGS.healthCheckIntervalMs });
    expect(c.partitions.find((p) => p.partition === 'p2')).toMatchObject({ enabled: false, maxUnhealthy: null, autoRepair: null, overrides: {} });
    const g = await env.control.configureCluster({ settings: { healthCheckTimeoutMs: 7 }, maxUnhealthy: '40%', by: 'admin' });
    expect(g.global).toMatchObject({ maxUnhealthy: '40%', effective: { healthCheckTimeoutMs: 7 } });
    expect(g.partitions.find((p) => p.partition === 'p2')?.maxUnhealthy).toBe('40%');
    expect(env.control.events({ host: 'partition:p1' })).toHaveLength(2);
  });

  it('SuspendHA holds remediation (the dry run shows why) until ResumeHA; expiry by time', async () => {
    const env = await setup();
    const s = await env.control.suspend({ kind: 'cluster', name: 'p1' }, env.clock.now() + 60_000, 'BMC firmware update', 'admin');
    expect(s).toMatchObject({ key: 'cluster:p1', reason: 'BMC firmware update', by: 'admin' });
    expect(env.control.describeHosts({ hosts: [H1] })[0]?.suspension).toMatchObject({ key: 'cluster:p1', reason: 'BMC firmware update' });
    expect(env.control.configurations().suspended).toEqual([{ key: 'cluster:p1', until: env.clock.now() + 60_000, reason: 'BMC firmware update', by: 'admin' }]);
    env.clock.advance(60_000);
    expect(env.control.describeHosts({ hosts: [H1] })[0]?.suspension).toBeNull();
    expect(await env.control.resume({ kind: 'cluster', name: 'p1' }, 'admin')).toEqual({ key: 'cluster:p1', wasSuspended: true });
    expect(await env.control.resume({ kind: 'cluster', name: 'p1' }, 'admin')).toEqual({ key: 'cluster:p1', wasSuspended: false });
    expect(env.store.read().ha.suspended).toEqual({});
  });

  it('a suspended host with a held fence: the dry run names the suspension', async () => {
    const env = await setup();
    await enabled(env);
    await env.control.suspend({ kind: 'host', name: H1 }, null, 'hands off', 'admin');
    const [v] = env.control.describeHosts({ hosts: [H1], dryRun: true });
    expect(v?.dryRun?.next).toMatch(/check health/);
    expect(v?.suspension?.until).toBeNull();
  });

  it('DescribeHAEvents filters by host, level and since, and keeps the newest MaxResults', async () => {
    const env = await setup();
    env.clock.advance(1000);
    const t = env.clock.now();
    await enabled(env);
    const all = env.control.events({});
    expect(all.length).toBeGreaterThan(3);
    expect(env.control.events({ host: H2 }).every((e) => e.host === H2)).toBe(true);
    expect(env.control.events({ since: t }).every((e) => e.at >= t)).toBe(true);
    expect(env.control.events({ since: t }).length).toBeLessThan(all.length);
    expect(env.control.events({ limit: 2 })).toEqual(all.slice(-2));
    expect(env.control.events({ level: 'critical' })).toEqual([]);
  });

  it('DescribeHostHA by partition, sorted, with the last events per host', async () => {
    const env = await setup();
    await enabled(env);
    expect(env.control.describeHosts({ partition: 'p2' })).toEqual([]);
    const views = env.control.describeHosts({ partition: 'p1', events: 2 });
    expect(views.map((v) => v.host)).toEqual([H1, H2]);
    expect(views[0]?.lastEvents).toHaveLength(2);
    expect(views[0]?.lastEvents.every((e) => e.host === H1)).toBe(true);
    expect(views[0]?.dryRun).toBeUndefined();
  });
});

describe('lastEventsByHost (DescribeHostHA in one pass over the log)', () => {
  const ev = (id: number, host: string) => ({ id, at: id, host, kind: 'transition', level: 'info' as const, message: `e${id}` });
  const log = [ev(1, 'a'), ev(2, 'b'), ev(3, 'a'), ev(4, 'c'), ev(5, 'a'), ev(6, 'b')];
  it.each([
    ['two per host, oldest first', ['a', 'b', 'c'], 2, { a: [3, 5], b: [2, 6], c: [4] }],
    ['only the hosts asked for', ['b'], 5, { b: [2, 6] }],
    ['none asked for', [], 3, {}],
    ['zero events', ['a'], 0, {}],
    ['a host without events is absent', ['a', 'z'], 1, { a: [5] }],
  ] as const)('%s', (_name, hosts, perHost, expected) => {
    const got = lastEventsByHost(log as never, new Set(hosts), perHost);
    expect(Object.fromEntries([...got].map(([h, es]) => [h, es.map((e) => e.id)]))).toEqual(expected);
  });
});
