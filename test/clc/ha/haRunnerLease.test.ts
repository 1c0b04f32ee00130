/**
 * Issue 21: host HA powers nothing off without a live lease. The runner (clc/ha/haRunner.ts) reads
 * `leading()` right before a fence or a power cycle starts; a replica that lost its lease in between
 * (here: while it disabled the host) leaves the record FENCING for the next leader, whose resume()
 * fences once, after the stored deadline of the fence in flight. Hand-written fakes (fakeHa.ts), an in-memory store, a ManualClock.
 */
import { describe, expect, it } from 'vitest';
import type { HaHostRef } from '../../../clc/ha/haProvider.js';
import { HaRunner, haSectionOf, type HaSectionStore } from '../../../clc/ha/haRunner.js';
import { step } from '../../../clc/ha/hostHaMachine.js';
import type { HaEffect } from '../../../clc/ha/hostHaState.js';
import { openMemoryClcStore } from '../../../clc/state/clcStore.js';
import { ManualClock } from '../../../shared/clock.js';
import { FakeHa } from './fakeHa.js';
import { ctx, inState, SETTINGS } from './haFixtures.js';

const H1 = '127.0.94.1';
const HOSTS = [H1, '127.0.94.2', '127.0.94.3'].map((host) => ({ host, partition: 'p1' }));

/** A BMC-side view of one replica: its lease lapses the moment its DisableService of the host returns. */
class LapsingFake extends FakeHa {
  leads = true;
  lapseOnDisable = true;

  override async disableHost(ref: HaHostRef): Promise<void> {
    await super.disableHost(ref);
    if (this.lapseOnDisable) this.leads = false;
  }
}

/** A replica's runner on the shared store; `settle`: its first pass too (the hosts become AVAILABLE). */
async function replica(section: HaSectionStore, fake: LapsingFake, clock: ManualClock, settle = true): Promise<HaRunner> {
  const runner = new HaRunner({ store: section, provider: fake, actions: fake, clock, leading: () => fake.leads });
  await runner.syncHosts(HOSTS);
  if (settle) {
    await runner.evaluateEligibility();
    await runner.tick();
    await runner.idle();
  }
  return runner;
}

async function sharedSection(): Promise<HaSectionStore> {
  const section = haSectionOf(await openMemoryClcStore());
  await section.update((ha) => {
    ha.global.settings = { ...SETTINGS };
    ha.partitions.p1 = { enabled: true, settings: {} };
  });
  return section;
}

describe('fencing only under a live lease', () => {
  it('a replica whose lease lapsed before the agent would start fences nothing and leaves FENCING; the next leader fences once', async () => {
    const clock = new ManualClock(0);
    const section = await sharedSection();
    const old = new LapsingFake();
    const first = await replica(section, old, clock);
    await first.deliver(H1, { type: 'fenceRequested', operator: 'admin' });
    await first.idle();
    expect(old.calls.filter((c) => !c.startsWith('health'))).toEqual([`disable ${H1}`]);
    const left = section.read().hosts[H1];
    // As the store had it: FENCING, the fence still in flight, nobody asked to step in.
    expect(left).toMatchObject({ state: 'FENCING', needsOperator: false, operation: { kind: 'fence' } });
    expect(section.read().events.filter((e) => e.host === H1).map((e) => e.message).join('\n')).not.toMatch(/fence failed|power off confirmed/);

    // The next leader resumes from the store: disables again and, once the stored deadline of the fence
    // in flight has passed (the old replica's agent could still be running until then), fences once.
    clock.advance(1);
    const next = new LapsingFake();
    next.lapseOnDisable = false;
    const second = await replica(section, next, clock, false);
    await second.resume();
    await second.idle();
    expect(next.calls.filter((c) => !c.startsWith('health'))).toEqual([`disable ${H1}`]);
    clock.advance((left?.operation?.deadline ?? 0) - clock.now());
    await second.idle();
    expect(next.calls.filter((c) => !c.startsWith('health'))).toEqual([`disable ${H1}`, `fence ${H1}`, `evacuate ${H1} (agent)`]);
    expect(section.read().hosts[H1]?.state).toBe('FENCED');
    expect([...old.calls, ...next.calls].filter((c) => c.startsWith('fence'))).toEqual([`fence ${H1}`]);
  });

  it('a replica that does not lead starts no power cycle either, and its record waits for the next leader', async () => {
    const clock = new ManualClock(0);
    const section = await sharedSection();
    const fake = new LapsingFake();
    const runner = await replica(section, fake, clock);
    fake.healthy.set(H1, false);
    fake.activity.set(H1, 'inactive');
    // The lease lapses while the third activity check runs: its result hands out the power cycle.
    const check = fake.hasActivity.bind(fake);
    fake.hasActivity = async (ref, since) => {
      const r = await check(ref, since);
      if (fake.calls.filter((c) => c.startsWith('activity')).length >= 3) fake.leads = false;
      return r;
    };
    // Ticks as the runtime does: only while leading.
    for (let i = 0; i < 600 && fake.leads; i++) {
      clock.advance(1);
      await runner.tick();
      await runner.idle();
    }
    expect(section.read().hosts[H1]?.state).toBe('RECOVERING');
    expect(fake.calls.some((c) => c.startsWith('recover'))).toBe(false);
    expect(section.read().hosts[H1]?.operation?.kind).toBe('recover');
  });
});

describe('resuming a power action waits out the one in flight (its agent outlives a killed CLC)', () => {
  const powerEffect = (effects: readonly HaEffect[]) => effects.find((e) => e.kind === 'fence' || e.kind === 'recover') as Extract<HaEffect, { kind: 'fence' | 'recover' }> | undefined;
  const rows: [string, ReturnType<typeof inState>, number, number | undefined, number][] = [
    // name, record, now, notBefore, new operation deadline
    ['a fence still within its stored deadline', inState('FENCING'), SETTINGS.fenceTimeoutMs - 1, SETTINGS.fenceTimeoutMs, 2 * SETTINGS.fenceTimeoutMs],
    ['a fence past its stored deadline: at once', inState('FENCING'), SETTINGS.fenceTimeoutMs + 5, undefined, 2 * SETTINGS.fenceTimeoutMs + 5],
    ['a power cycle within its deadline', inState('RECOVERING'), 10, SETTINGS.recoverTimeoutMs, 2 * SETTINGS.recoverTimeoutMs],
  ];
  it.each(rows)('%s', (_name, rec, now, notBefore, deadline) => {
    const { next, effects } = step(rec, { type: 'resumed' }, now, ctx());
    const power = powerEffect(effects);
    expect(power?.notBefore).toBe(notBefore);
    expect(power?.deadline).toBe(deadline);
    expect(next.operation).toMatchObject({ kind: rec.operation?.kind, deadline, token: rec.seq + 1 });
  });

  it('an activity check is asked again at once (it powers nothing)', () => {
    const { effects } = step(inState('CHECKING'), { type: 'resumed' }, 10, ctx());
    expect(effects.find((e) => e.kind === 'activityCheck')).not.toHaveProperty('notBefore');
  });

  it('a FENCED record owes no fence: a new leader powers nothing off again', () => {
    const { effects } = step(inState('FENCED'), { type: 'resumed' }, 10, ctx());
    expect(powerEffect(effects)).toBeUndefined();
  });
});
