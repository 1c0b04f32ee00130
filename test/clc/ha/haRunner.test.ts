/**
 * The HA runner (clc/ha/haRunner.ts) with hand-written fakes (fakeHa.ts), an in-memory CLC store and
 * a ManualClock: whole episodes (crash → fence → evacuate; degraded → drain; dead BMC → operator),
 * storm protection, back-pressure, stale work dropped, and a restart that resumes a fence.
 */
import { describe, expect, it } from 'vitest';
import { IllegalHaEventError } from '../../../clc/ha/hostHaMachine.js';
import { HaRunner, haSectionOf, type HaSectionStore } from '../../../clc/ha/haRunner.js';
import type { HaState } from '../../../clc/ha/hostHaState.js';
import { DEFAULT_HA_POOLS, type HaOperationKind, type HaPoolLimits } from '../../../clc/ha/settings.js';
import { openMemoryClcStore } from '../../../clc/state/clcStore.js';
import { ManualClock } from '../../../shared/clock.js';
import { FakeHa } from './fakeHa.js';
import { SETTINGS } from './haFixtures.js';

const H = (i: number) => `127.0.1.${i}`;

interface Env {
  readonly clock: ManualClock;
  readonly fake: FakeHa;
  readonly section: HaSectionStore;
  readonly runner: HaRunner;
  state(host: string): HaState | undefined;
}

const turns = async (n = 40) => { for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r)); };

async function setup(opts: { hosts?: number; maxUnhealthy?: string; pools?: Record<HaOperationKind, HaPoolLimits>; section?: HaSectionStore; fake?: FakeHa } = {}): Promise<Env> {
  const clock = new ManualClock(0);
  const section = opts.section ?? haSectionOf(await openMemoryClcStore());
  const fake = opts.fake ?? new FakeHa();
  if (!opts.section) {
    await section.update((ha) => {
      ha.global.settings = { ...SETTINGS };
      ha.partitions.p1 = { enabled: true, settings: {}, ...(opts.maxUnhealthy ? { maxUnhealthy: opts.maxUnhealthy } : {}) };
    });
  }
  const runner = new HaRunner({ store: section, provider: fake, actions: fake, clock, pools: opts.pools });
  await runner.syncHosts(Array.from({ length: opts.hosts ?? 4 }, (_, i) => ({ host: H(i + 1), partition: 'p1' })));
  if (!opts.section) {
    await runner.evaluateEligibility();
    await runner.tick();
    await runner.idle();
  }
  return { clock, fake, section, runner, state: (h) => section.read().hosts[h]?.state };
}

/** Lets time pass one ms per tick until `done`, settling work between ticks. */
async function runUntil(env: Env, done: () => boolean, opts: { maxTicks?: number; hanging?: boolean } = {}): Promise<void> {
  for (let i = 0; i < (opts.maxTicks ?? 600); i++) {
    if (done()) return;
    env.clock.advance(1);
    await env.runner.tick();
    if (opts.hanging) await turns();
    else await env.runner.idle();
  }
  if (!done()) throw new Error(`not reached; states: ${JSON.stringify(Object.values(env.section.read().hosts).map((r) => [r.host, r.state, r.reason]))}`);
}

/** Lets `ticks` ms pass, one tick each. */
async function passTime(env: Env, ticks: number): Promise<void> {
  for (let i = 0; i < ticks; i++) {
    env.clock.advance(1);
    await env.runner.tick();
    await env.runner.idle();
  }
}

describe('HaRunner', () => {
  it('starts every eligible host AVAILABLE and checks health periodically', async () => {
    const env = await setup();
    expect([1, 2, 3, 4].map((i) => env.state(H(i)))).toEqual(['AVAILABLE', 'AVAILABLE', 'AVAILABLE', 'AVAILABLE']);
    await runUntil(env, () => env.fake.calls.filter((c) => c === `health ${H(1)}`).length >= 3);
    expect(env.state(H(1))).toBe('AVAILABLE');
  });

  it('a CC that does not answer health checks judges no host (issue 19): one alert per partition, then one when answered again', async () => {
    const env = await setup();
    for (let i = 1; i <= 4; i++) env.fake.healthy.set(H(i), 'fail');
    await runUntil(env, () => env.fake.calls.filter((c) => c === `health ${H(1)}`).length >= 4);
    expect([1, 2, 3, 4].map((i) => env.state(H(i)))).toEqual(['AVAILABLE', 'AVAILABLE', 'AVAILABLE', 'AVAILABLE']);
    const alerts = () => env.section.read().events.filter((e) => e.kind === 'alert' && /cannot tell the health|health checks of/.test(e.message));
    expect(alerts().map((e) => e.level)).toEqual(['warn']);
    expect(alerts()[0]?.message).toMatch(/cannot tell the health of the hosts of p1.*SourceTimedOut/);
    for (let i = 1; i <= 4; i++) env.fake.healthy.set(H(i), true);
    await runUntil(env, () => alerts().length === 2);
    expect(alerts()[1]).toMatchObject({ level: 'info', message: expect.stringMatching(/answered again/) });
    // A host the CC does report down is still judged.
    env.fake.healthy.set(H(2), false);
    await runUntil(env, () => env.state(H(2)) === 'SUSPECT');
    expect(alerts()).toHaveLength(2);
  });

  it('a crashed host: suspect, no activity, power cycle fails, disabled then fenced, then evacuated; the others untouched', async () => {
    const env = await setup();
    env.fake.healthy.set(H(1), false);
    env.fake.activity.set(H(1), 'inactive');
    env.fake.recovers.set(H(1), 'fail');
    await runUntil(env, () => env.state(H(1)) === 'FENCED');
    const mine = env.fake.calls.filter((c) => c.includes(H(1)) && !c.startsWith('health'));
    expect(mine).toEqual([
      `activity ${H(1)} since ${env.section.read().hosts[H(1)]?.suspectSince}`,
      expect.stringMatching(/^activity /), expect.stringMatching(/^activity /),
      `recover ${H(1)}`, `disable ${H(1)}`, `fence ${H(1)}`, `evacuate ${H(1)} (agent)`,
    ]);
    expect([2, 3, 4].map((i) => env.state(H(i)))).toEqual(['AVAILABLE', 'AVAILABLE', 'AVAILABLE']);
    expect(env.fake.calls.some((c) => /(recover|fence|disable|evacuate|drain) 127\.0\.1\.[234]/.test(c))).toBe(false);
    const path = env.section.read().events.filter((e) => e.host === H(1) && e.kind === 'transition').map((e) => e.to);
    expect(path).toEqual(['AVAILABLE', 'SUSPECT', 'CHECKING', 'SUSPECT', 'CHECKING', 'SUSPECT', 'CHECKING', 'RECOVERING', 'FENCING', 'FENCED']);
  });

  it('a host with activity but no control is DEGRADED and drained, never fenced', async () => {
    const env = await setup();
    env.fake.healthy.set(H(2), false);
    env.fake.activity.set(H(2), 'active');
    await runUntil(env, () => env.state(H(2)) === 'DEGRADED');
    await passTime(env, 300);
    expect(env.fake.calls.filter((c) => c.startsWith('drain'))).toContain(`drain ${H(2)}`);
    expect(env.fake.calls.some((c) => /^(fence|recover|disable|evacuate)/.test(c))).toBe(false);
  });

  it('a DEGRADED host owes a drain: retried with back-off while its NC is dead, completed once it answers (even healthy), never fenced', async () => {
    const env = await setup();
    env.fake.healthy.set(H(2), false);
    env.fake.activity.set(H(2), 'active');
    env.fake.repairs.set(H(2), ['throw', 'not-done']);
    await runUntil(env, () => env.section.read().hosts[H(2)]?.owed?.lastOutcome === '2 instance(s) still on it');
    expect(env.state(H(2))).toBe('DEGRADED');
    const owed = env.section.read().hosts[H(2)]?.owed;
    expect(owed).toMatchObject({ kind: 'drain', attempts: 2, inFlight: null });
    // The NC comes back: the health check passes, yet the drain is still owed and completes.
    env.fake.healthy.set(H(2), true);
    await runUntil(env, () => env.section.read().hosts[H(2)]?.owed === null);
    expect(env.state(H(2))).toBe('AVAILABLE');
    expect(env.fake.calls.filter((c) => c === `drain ${H(2)}`)).toHaveLength(3);
    expect(env.fake.calls.some((c) => /^(fence|recover|disable|evacuate)/.test(c))).toBe(false);
    const outcomes = env.section.read().events.filter((e) => e.host === H(2) && e.message.startsWith(`drain of ${H(2)}, attempt`)).map((e) => e.message.replace(/ \(.*$/, ''));
    expect(outcomes).toEqual([1, 2].map((n) => `drain of ${H(2)}, attempt ${n}: not done`).concat(`drain of ${H(2)}, attempt 3: done`));
    // Back-off: the attempts were spread out, not one per tick.
    const at = env.section.read().events.filter((e) => e.host === H(2) && e.message.includes(': not done')).map((e) => e.at);
    expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(SETTINGS.repairRetryInitialDelayMs);
  });

  it('an owed drain gives up after drainMaxAttempts and says an operator must act', async () => {
    const env = await setup();
    env.fake.healthy.set(H(2), false);
    env.fake.activity.set(H(2), 'active');
    env.fake.repairs.set(H(2), Array.from({ length: 10 }, () => 'not-done' as const));
    await runUntil(env, () => env.state(H(2)) === 'DEGRADED');
    await passTime(env, 90);
    expect(env.fake.calls.filter((c) => c === `drain ${H(2)}`)).toHaveLength(SETTINGS.drainMaxAttempts);
    expect(env.section.read().events.some((e) => e.host === H(2) && e.level === 'critical' && e.message.includes('giving up'))).toBe(true);
  });

  it('a fenced host\'s restart elsewhere is retried on later passes until done, one attempt at a time', async () => {
    const env = await setup();
    env.fake.healthy.set(H(1), false);
    env.fake.activity.set(H(1), 'inactive');
    env.fake.recovers.set(H(1), 'fail');
    env.fake.repairs.set(H(1), ['throw', 'hang', 'not-done']);
    await runUntil(env, () => env.fake.calls.filter((c) => c.startsWith(`evacuate ${H(1)}`)).length === 2, { hanging: true });
    // The second attempt hangs: no overlapping restart however much time passes.
    for (let i = 0; i < 100; i++) {
      env.clock.advance(1);
      await env.runner.tick();
      await turns(3);
    }
    expect(env.fake.calls.filter((c) => c.startsWith(`evacuate ${H(1)}`))).toHaveLength(2);
    env.fake.repairs.set(H(1), ['not-done']);
    env.fake.release();
    await env.runner.idle();
    expect(env.section.read().hosts[H(1)]?.owed).toBeNull();
    expect(env.state(H(1))).toBe('FENCED');
  });

  it('a restart elsewhere cut short by a CLC restart is attempted again by the next CLC', async () => {
    const first = await setup();
    first.fake.healthy.set(H(1), false);
    first.fake.activity.set(H(1), 'inactive');
    first.fake.recovers.set(H(1), 'fail');
    first.fake.repairs.set(H(1), ['hang']);
    await runUntil(first, () => first.fake.holding > 0 && first.state(H(1)) === 'FENCED', { hanging: true });
    const section = haSectionOf(await openMemoryClcStore());
    const saved = JSON.parse(JSON.stringify(first.section.read()));
    await section.update((ha) => Object.assign(ha, saved));
    expect(section.read().hosts[H(1)]?.owed?.inFlight).not.toBeNull();
    const second = await setup({ section, fake: new FakeHa() });
    await second.runner.resume();
    await second.runner.tick();
    await second.runner.idle();
    expect(second.fake.calls).toContain(`evacuate ${H(1)} (agent)`);
    expect(second.section.read().hosts[H(1)]?.owed).toBeNull();
  });

  it('a dead BMC waits for an operator; ConfirmHostFenced completes it', async () => {
    const env = await setup();
    env.fake.healthy.set(H(1), false);
    env.fake.activity.set(H(1), 'inactive');
    env.fake.recovers.set(H(1), 'fail');
    env.fake.fences.set(H(1), 'fail');
    await runUntil(env, () => env.section.read().hosts[H(1)]?.needsOperator === true);
    await passTime(env, 200);
    expect(env.fake.calls.filter((c) => c === `fence ${H(1)}`)).toHaveLength(1);
    expect(env.fake.calls.some((c) => c.startsWith('evacuate'))).toBe(false);
    expect(env.state(H(1))).toBe('FENCING');
    await env.runner.deliver(H(1), { type: 'operatorConfirmedFenced', operator: 'admin' });
    await env.runner.idle();
    expect(env.state(H(1))).toBe('FENCED');
    expect(env.fake.calls).toContain(`evacuate ${H(1)} (operator)`);
    await expect(env.runner.deliver(H(1), { type: 'operatorConfirmedFenced', operator: 'admin' })).rejects.toBeInstanceOf(IllegalHaEventError);
  });

  it('a storm beyond maxUnhealthy starts no recovery and no fence, and shows why', async () => {
    const env = await setup({ maxUnhealthy: '50%' });
    for (const i of [1, 2, 3]) {
      env.fake.healthy.set(H(i), false);
      env.fake.activity.set(H(i), 'inactive');
    }
    await runUntil(env, () => [1, 2, 3].every((i) => env.section.read().hosts[H(i)]?.blocked !== null));
    await passTime(env, 200);
    expect(env.fake.calls.some((c) => /^(recover|fence|disable|evacuate)/.test(c))).toBe(false);
    for (const i of [1, 2, 3]) {
      expect(env.section.read().hosts[H(i)]?.blocked?.reason).toMatch(/^storm protection: 3 of 4 hosts in p1 are unhealthy/);
    }
    // One host comes back: 2 of 4 is within 50%, so the held recoveries start.
    env.fake.healthy.set(H(3), true);
    await runUntil(env, () => env.fake.calls.some((c) => c.startsWith('recover')));
  });

  it('unhealthyRange takes precedence over maxUnhealthy: one failing host of [2-3] is held, a second brings both into the range', async () => {
    const env = await setup({ maxUnhealthy: '0' });
    await env.section.update((ha) => { if (ha.partitions.p1) ha.partitions.p1.unhealthyRange = '[2-3]'; });
    env.fake.healthy.set(H(1), false);
    env.fake.activity.set(H(1), 'inactive');
    await runUntil(env, () => env.section.read().hosts[H(1)]?.blocked !== null);
    expect(env.section.read().hosts[H(1)]?.blocked?.reason).toMatch(/^storm protection: 1 of 4 hosts in p1 are unhealthy, outside unhealthyRange \[2-3\]/);
    expect(env.fake.calls.some((c) => c.startsWith('recover'))).toBe(false);
    // maxUnhealthy 0 alone would hold every remediation; the range lets two or three go.
    env.fake.healthy.set(H(2), false);
    env.fake.activity.set(H(2), 'inactive');
    await runUntil(env, () => env.fake.calls.includes(`recover ${H(1)}`) && env.fake.calls.includes(`recover ${H(2)}`));
  });

  it('a suspension holds recovery back with its reason until it expires', async () => {
    const env = await setup();
    await env.section.update((ha) => { ha.suspended['host:127.0.1.1'] = { until: 400, reason: 'BIOS update', by: 'admin' }; });
    env.fake.healthy.set(H(1), false);
    env.fake.activity.set(H(1), 'inactive');
    await runUntil(env, () => env.section.read().hosts[H(1)]?.blocked !== null);
    expect(env.section.read().hosts[H(1)]?.blocked?.reason).toMatch(/^automation suspended for host:127\.0\.1\.1 by admin until .*: BIOS update/);
    expect(env.fake.calls.some((c) => c.startsWith('recover'))).toBe(false);
    await runUntil(env, () => env.fake.calls.includes(`recover ${H(1)}`));
    expect(env.clock.now()).toBeGreaterThanOrEqual(400);
  });

  it('while suspended, an owed restart elsewhere is neither executed nor lost; it runs once the suspension ends (Ganeti harep)', async () => {
    const env = await setup();
    await env.section.update((ha) => { ha.suspended['partition:p1'] = { until: 300, reason: 'rack maintenance', by: 'admin' }; });
    // An operator's fence is not held by a suspension; what it owes afterwards is.
    await env.runner.deliver(H(1), { type: 'fenceRequested', operator: 'admin' });
    await env.runner.idle();
    expect(env.state(H(1))).toBe('FENCED');
    await passTime(env, 100);
    expect(env.fake.calls.filter((c) => c.startsWith('evacuate'))).toEqual([]);
    const owed = env.section.read().hosts[H(1)]?.owed;
    expect(owed).toMatchObject({ kind: 'evacuate', attempts: 0, inFlight: null, heldBy: expect.stringMatching(/^automation suspended for partition:p1 by admin until .*: rack maintenance$/) });
    // Said once, not on every tick.
    expect(env.section.read().events.filter((e) => e.host === H(1) && /owed restart elsewhere of the instances held, not dropped/.test(e.message))).toHaveLength(1);
    // The suspension ends on its own (the clock passes `until`): the restart starts at once, exactly once.
    await runUntil(env, () => env.fake.calls.includes(`evacuate ${H(1)} (agent)`));
    expect(env.clock.now()).toBeGreaterThanOrEqual(300);
    await passTime(env, 20);
    expect(env.section.read().hosts[H(1)]?.owed).toBeNull();
    expect(env.fake.calls.filter((c) => c.startsWith('evacuate'))).toHaveLength(1);
  });

  it('an owed drain held by a suspension is dropped if no longer needed when it ends (EnableService meanwhile)', async () => {
    const env = await setup();
    await env.section.update((ha) => { ha.suspended['host:127.0.1.1'] = { until: null, reason: 'hands off', by: 'admin' }; });
    env.fake.healthy.set(H(1), false);
    env.fake.activity.set(H(1), 'active');
    await runUntil(env, () => env.state(H(1)) === 'DEGRADED');
    await passTime(env, 30);
    expect(env.fake.calls.filter((c) => c.startsWith('drain'))).toEqual([]);
    expect(env.section.read().hosts[H(1)]?.owed).toMatchObject({ kind: 'drain', heldBy: expect.stringContaining('hands off') });
    await env.runner.deliver(H(1), { type: 'serviceEnabled' });
    await env.section.update((ha) => { delete ha.suspended['host:127.0.1.1']; });
    await passTime(env, 30);
    expect(env.fake.calls.filter((c) => c.startsWith('drain'))).toEqual([]);
    expect(env.section.read().hosts[H(1)]?.owed).toBeNull();
  });

  it('a storm holds owed drains: none starts; a host healthy again is forgiven, the other drained once the storm ends (issue 19)', async () => {
    const env = await setup({ maxUnhealthy: '1' });
    for (const h of [H(1), H(2)]) {
      env.fake.healthy.set(h, false);
      env.fake.activity.set(h, 'active');
    }
    await runUntil(env, () => env.state(H(1)) === 'DEGRADED' && env.state(H(2)) === 'DEGRADED');
    await passTime(env, 30);
    expect(env.fake.calls.filter((c) => c.startsWith('drain'))).toEqual([]);
    for (const h of [H(1), H(2)]) {
      expect(env.section.read().hosts[h]?.owed).toMatchObject({ kind: 'drain', attempts: 0, stormHeld: true, heldBy: expect.stringMatching(/^storm protection: .* maxUnhealthy 1; owed drains wait$/) });
      // Said once, not on every tick.
      expect(env.section.read().events.filter((e) => e.host === h && /owed drain held, not dropped/.test(e.message))).toHaveLength(1);
    }
    // H(1) answers again: its drain is forgiven, and the storm is over (one unhealthy of bound 1): H(2)'s starts, once.
    env.fake.healthy.set(H(1), true);
    await runUntil(env, () => env.fake.calls.includes(`drain ${H(2)}`));
    expect(env.state(H(1))).toBe('AVAILABLE');
    expect(env.section.read().hosts[H(1)]?.owed).toBeNull();
    expect(env.fake.calls.filter((c) => c.startsWith('drain'))).toEqual([`drain ${H(2)}`]);
  });

  it('back-pressure: a full fence queue refuses, the host is held and fenced once there is room', async () => {
    const pools = { ...DEFAULT_HA_POOLS, fence: { maxConcurrent: 1, maxPending: 0 } };
    const env = await setup({ pools });
    env.fake.fences.set(H(1), 'hang');
    await env.runner.deliver(H(1), { type: 'fenceRequested', operator: 'admin' });
    await env.runner.deliver(H(2), { type: 'fenceRequested', operator: 'admin' });
    await turns();
    expect(env.runner.pools.fence.stats()).toMatchObject({ running: 1, refused: 1 });
    expect(env.section.read().hosts[H(2)]?.blocked?.reason).toContain('queue is full');
    env.fake.fences.set(H(1), 'ok');
    env.fake.release();
    await runUntil(env, () => env.state(H(1)) === 'FENCED' && env.state(H(2)) === 'FENCED', { hanging: true });
    expect(env.fake.calls.filter((c) => c.startsWith('fence'))).toEqual([`fence ${H(1)}`, `fence ${H(2)}`]);
  });

  it('drops queued work whose host moved on, without running it', async () => {
    const pools = { ...DEFAULT_HA_POOLS, health: { maxConcurrent: 1, maxPending: 3 } };
    const env = await setup({ pools });
    await runUntil(env, () => env.section.read().hosts[H(1)]?.health === null && env.clock.now() >= 10);
    env.fake.healthy.set(H(1), 'hang');
    const before = env.fake.calls.filter((c) => c === `health ${H(2)}`).length;
    await runUntil(env, () => env.fake.holding > 0, { hanging: true });
    expect(env.runner.pools.health.stats().pending).toBeGreaterThan(0);
    await env.section.update((ha) => { ha.hostDisabled.push(H(2)); });
    env.clock.advance(1);
    await env.runner.tick();
    await turns();
    expect(env.state(H(2))).toBe('DISABLED');
    env.fake.healthy.set(H(1), true);
    env.fake.release();
    await turns();
    expect(env.fake.calls.filter((c) => c === `health ${H(2)}`).length).toBe(before);
    expect(env.runner.pools.health.stats().dropped).toBeGreaterThanOrEqual(1);
  });

  it('a CLC restart in the middle of a fence resumes it from the store', async () => {
    const store = await openMemoryClcStore();
    const section = haSectionOf(store);
    const first = await setup({ section: undefined });
    // The first CLC: the host reaches FENCING and the fence hangs, then the process "dies".
    first.fake.healthy.set(H(1), false);
    first.fake.activity.set(H(1), 'inactive');
    first.fake.recovers.set(H(1), 'fail');
    first.fake.fences.set(H(1), 'hang');
    await runUntil(first, () => first.fake.holding > 0 && first.state(H(1)) === 'FENCING', { hanging: true });
    const saved = JSON.parse(JSON.stringify(first.section.read()));
    await section.update((ha) => Object.assign(ha, saved));
    // The second CLC starts from what was persisted, with a BMC that now answers.
    const fake = new FakeHa();
    fake.healthy.set(H(1), false);
    const second = await setup({ section, fake });
    expect(second.state(H(1))).toBe('FENCING');
    await second.runner.resume();
    await second.runner.idle();
    // Issue 21: the first CLC's agent may still run until the fence's stored deadline: no second agent before it.
    const stored = saved.hosts[H(1)].operation.deadline as number;
    expect(fake.calls.filter((c) => !c.startsWith('health'))).toEqual([`disable ${H(1)}`]);
    second.clock.advance(stored - second.clock.now() - 1);
    await second.runner.idle();
    expect(fake.calls.filter((c) => c.startsWith('fence'))).toEqual([]);
    second.clock.advance(1);
    await second.runner.idle();
    expect(fake.calls.filter((c) => !c.startsWith('health'))).toEqual([`disable ${H(1)}`, `fence ${H(1)}`, `evacuate ${H(1)} (agent)`]);
    expect(second.state(H(1))).toBe('FENCED');
    expect(second.section.read().hosts[H(1)]?.recoveryAttempts).toBe(1);
  });
});
