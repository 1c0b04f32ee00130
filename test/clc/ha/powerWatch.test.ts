/**
 * The BMC power watch of the host-HA machine (CloudStack): a periodic power status through the fence
 * agent in the watched states, a host found off fenced only once its BMC confirms it, and the runner
 * asking only hosts that have a BMC, on a bounded pool. Pure machine on the injected clock; the
 * runner with the scripted FakeHa and a ManualClock.
 */
import { describe, expect, it } from 'vitest';
import { HaRunner, haContexts, haSectionOf, hostContext } from '../../../clc/ha/haRunner.js';
import type { HaContext } from '../../../clc/ha/hostHaMoves.js';
import { step } from '../../../clc/ha/hostHaMachine.js';
import { HA_STATES, type HaEvent, type HaState, type HostHaRecord } from '../../../clc/ha/hostHaState.js';
import { DEFAULT_HA_POOLS } from '../../../clc/ha/settings.js';
import { openMemoryClcStore } from '../../../clc/state/clcStore.js';
import { ManualClock } from '../../../shared/clock.js';
import { FakeHa } from './fakeHa.js';
import { ALLOWED, SETTINGS, STORM, actions, ctx, inState } from './haFixtures.js';

const WATCHED: readonly HaState[] = ['AVAILABLE', 'SUSPECT', 'CHECKING', 'DEGRADED'];
const PWR = 40;
const probing = (s: HaState, patch: Partial<HostHaRecord> = {}): HostHaRecord =>
  inState(s, { powerProbe: { token: PWR, startedAt: 0, deadline: SETTINGS.powerCheckTimeoutMs }, ...patch });
const status = (power: 'on' | 'off' | 'unknown', token = PWR): HaEvent => ({ type: 'powerStatus', token, power, detail: `the BMC says ${power}` });

describe('power watch: when the BMC is asked', () => {
  const rows: [HaState, boolean][] = HA_STATES.map((s) => [s, WATCHED.includes(s)]);
  it.each(rows)('%s, check due: asked = %s', (s, asked) => {
    const from = inState(s, { nextPowerCheckAt: 5, nextHealthCheckAt: 1e9, owed: null });
    const { next, effects } = step(from, { type: 'tick' }, 5, ctx());
    expect(actions(effects).includes('powerStatus')).toBe(asked);
    if (asked) {
      expect(next.powerProbe).toMatchObject({ startedAt: 5, deadline: 5 + SETTINGS.powerCheckTimeoutMs });
      expect(next.nextPowerCheckAt).toBe(5 + SETTINGS.powerCheckIntervalMs);
    }
  });

  it('not before it is due, and not twice while one is in flight', () => {
    expect(actions(step(inState('AVAILABLE', { nextPowerCheckAt: 6 }), { type: 'tick' }, 5, ctx()).effects)).not.toContain('powerStatus');
    expect(actions(step(probing('AVAILABLE', { nextPowerCheckAt: 0 }), { type: 'tick' }, 5, ctx()).effects)).not.toContain('powerStatus');
  });

  it('a status past its deadline is dropped as unknown: no move, the next one at its time', () => {
    const { next, effects } = step(probing('AVAILABLE', { health: null, nextPowerCheckAt: 1e9, nextHealthCheckAt: 1e9 }), { type: 'tick' }, SETTINGS.powerCheckTimeoutMs, ctx());
    expect(next.state).toBe('AVAILABLE');
    expect(next.powerProbe).toBeNull();
    expect(actions(effects)).toEqual([]);
  });
});

describe('power watch: what the BMC says', () => {
  it.each(WATCHED)('%s + BMC off: FENCING (disable, then the fence, whose "already off" makes it FENCED)', (s) => {
    const { next, effects } = step(probing(s), status('off'), 1, ctx());
    expect(next.state).toBe('FENCING');
    expect(next.powerProbe).toBeNull();
    expect(actions(effects)).toEqual(['disableHost', 'fence']);
    expect(next.reason).toBe('the BMC reports the power off (out of band): the BMC says off');
    const fenced = step(next, { type: 'fenceResult', token: next.operation?.token ?? -1, ok: true, detail: 'already off' }, 2, ctx());
    expect(fenced.next).toMatchObject({ state: 'FENCED', fencedBy: 'agent' });
  });

  const stays: [string, HostHaRecord, HaEvent][] = [
    ['AVAILABLE + on', probing('AVAILABLE'), status('on')],
    ['AVAILABLE + unknown (BMC did not answer): never read as off', probing('AVAILABLE'), status('unknown')],
    ['SUSPECT + on', probing('SUSPECT'), status('on')],
    ['RECOVERING + off (a power cycle is under way)', probing('RECOVERING'), status('off')],
    ['INELIGIBLE + off (in maintenance: an operator may have powered it off)', probing('INELIGIBLE'), status('off')],
    ['DISABLED + off', probing('DISABLED'), status('off')],
  ];
  it.each(stays)('%s: no move, probe cleared', (_n, from, ev) => {
    const { next, effects } = step(from, ev, 1, ctx());
    expect(next).toEqual({ ...from, powerProbe: null });
    expect(effects).toEqual([]);
  });

  it('a stale status (another token) changes nothing', () => {
    const from = probing('AVAILABLE');
    expect(step(from, status('off', PWR + 1), 1, ctx())).toEqual({ next: from, effects: [] });
  });

  it('off while the storm guard or a suspension refuses: not fenced, a warning, looked at again next check', () => {
    const { next, effects } = step(probing('AVAILABLE'), status('off'), 1, ctx(STORM));
    expect(next.state).toBe('AVAILABLE');
    expect(actions(effects)).toEqual([]);
    expect(effects).toEqual([expect.objectContaining({ kind: 'alert', level: 'warn', message: expect.stringContaining(STORM.allowed ? '' : STORM.reason) })]);
    expect(ALLOWED.allowed).toBe(true);
  });

  it('off on a host the guard does not count as unhealthy yet: fenced only if the partition stays within its bound with it (sim seed 635)', () => {
    // The partition is within its bound now, but fencing this AVAILABLE host would make one more unhealthy than allowed.
    const tight = { ...ctx(ALLOWED), remediationIfNewlyUnhealthy: STORM };
    const held = step(probing('AVAILABLE'), status('off'), 1, tight);
    expect(held.next.state).toBe('AVAILABLE');
    expect(held.effects).toEqual([expect.objectContaining({ kind: 'alert', level: 'warn', message: expect.stringContaining('storm protection: test') })]);
    expect(step(probing('AVAILABLE'), status('off'), 1, { ...ctx(ALLOWED), remediationIfNewlyUnhealthy: ALLOWED }).next.state).toBe('FENCING');
  });

  it('the partition context counts the host found off: with one host fenced by an operator and maxUnhealthy 1, a second found off is not fenced', () => {
    const section = {
      global: { enabled: false, maxUnhealthy: '1', settings: SETTINGS }, partitions: { p1: { enabled: true, settings: {} } }, suspended: {},
      hosts: {
        a: inState('FENCING', { host: 'a', partition: 'p1' }),
        b: probing('AVAILABLE', { host: 'b', partition: 'p1' }),
        c: inState('AVAILABLE', { host: 'c', partition: 'p1' }),
      },
      events: [], nextEventId: 1,
    } as unknown as Parameters<typeof haContexts>[0];
    const partition = haContexts(section).get('p1');
    expect(partition?.remediation.allowed).toBe(true);
    const b = section.hosts.b as HostHaRecord;
    const hostCtx = hostContext(partition as HaContext, section, b, 1);
    const { next, effects } = step(b, status('off'), 1, hostCtx);
    expect(next.state).toBe('AVAILABLE');
    expect(effects).toEqual([expect.objectContaining({ message: expect.stringMatching(/2 of 3 hosts in p1 would be unhealthy, more than maxUnhealthy 1/) })]);
    // A SUSPECT host is counted already: the partition's own verdict applies to it.
    const suspect = { ...b, state: 'SUSPECT' as const };
    expect(hostContext(partition as HaContext, { ...section, hosts: { ...section.hosts, b: suspect } }, suspect, 1).remediationIfNewlyUnhealthy).toEqual(partition?.remediation);
  });

  it('a power probe the pool refused is dropped and tried again after the interval', () => {
    const { next } = step(probing('AVAILABLE'), { type: 'dispatchRefused', token: PWR }, 3, ctx());
    expect(next.powerProbe).toBeNull();
    expect(next.nextPowerCheckAt).toBe(3 + SETTINGS.powerCheckIntervalMs);
  });

  it('a CLC restart forgets the probe in flight (its answer is lost)', () => {
    expect(step(probing('AVAILABLE'), { type: 'resumed' }, 3, ctx()).next.powerProbe).toBeNull();
  });
});

describe('power watch in the runner', () => {
  async function setup(pools = DEFAULT_HA_POOLS) {
    const clock = new ManualClock(0);
    const section = haSectionOf(await openMemoryClcStore());
    const fake = new FakeHa();
    await section.update((ha) => {
      ha.global.settings = { ...SETTINGS, healthCheckIntervalMs: 1_000_000, powerCheckIntervalMs: 10 };
      ha.partitions.p1 = { enabled: true, settings: {} };
    });
    const runner = new HaRunner({ store: section, provider: fake, actions: fake, clock, pools });
    const hosts = ['127.0.61.1', '127.0.61.2', '127.0.61.3'];
    await runner.syncHosts(hosts.map((host) => ({ host, partition: 'p1' })));
    await runner.evaluateEligibility();
    const tickTo = async (done: () => boolean) => {
      for (let i = 0; i < 500 && !done(); i++) {
        clock.advance(1);
        await runner.tick();
        await runner.idle();
      }
      expect(done()).toBe(true);
    };
    return { clock, section, fake, runner, hosts, tickTo };
  }

  it('a host its BMC reports off out of band is disabled, fenced ("already off") and only then evacuated; the others are untouched', async () => {
    const env = await setup();
    const [h1, h2] = env.hosts as [string, string];
    await env.tickTo(() => env.fake.powerCalls.filter((h) => h === h1).length >= 2);
    expect(env.section.read().hosts[h1]?.state).toBe('AVAILABLE');
    env.fake.power.set(h1, 'off');
    env.fake.fences.set(h1, 'already-off');
    await env.tickTo(() => env.section.read().hosts[h1]?.state === 'FENCED');
    expect(env.fake.calls.filter((c) => !c.startsWith('health'))).toEqual([`disable ${h1}`, `fence ${h1}`, `evacuate ${h1} (agent)`]);
    const path = env.section.read().events.filter((e) => e.host === h1 && e.kind === 'transition').map((e) => e.to);
    expect(path.slice(-3)).toEqual(['AVAILABLE', 'FENCING', 'FENCED']);
    expect(env.section.read().events.some((e) => e.host === h1 && e.to === 'FENCED' && e.message.includes('already off'))).toBe(true);
    expect(env.section.read().hosts[h2]?.state).toBe('AVAILABLE');
  });

  it('a BMC that does not answer is never taken for "off"', async () => {
    const env = await setup();
    const [h1] = env.hosts as [string];
    env.fake.power.set(h1, 'fail');
    await env.tickTo(() => env.fake.powerCalls.filter((h) => h === h1).length >= 5);
    expect(env.section.read().hosts[h1]?.state).toBe('AVAILABLE');
    expect(env.fake.calls.some((c) => c.startsWith('fence') || c.startsWith('disable'))).toBe(false);
  });

  it('runs on its own bounded pool: one at a time here, the rest wait', async () => {
    const env = await setup({ ...DEFAULT_HA_POOLS, power: { maxConcurrent: 1, maxPending: 10 } });
    for (const h of env.hosts) env.fake.power.set(h, 'hang');
    env.clock.advance(1);
    await env.runner.tick();
    await new Promise((r) => setImmediate(r));
    expect(env.runner.pools.power.stats()).toMatchObject({ running: 1, pending: 2 });
    for (const h of env.hosts) env.fake.power.set(h, 'on');
    env.fake.release();
    await env.tickTo(() => env.fake.powerCalls.length >= 3 && env.fake.holding === 0 && env.runner.pools.power.stats().running === 0);
  });
});
