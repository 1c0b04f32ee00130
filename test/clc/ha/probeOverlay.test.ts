/**
 * Host HA's probe bookkeeping in memory (clc/ha/probeOverlay.ts): which changes are written, which
 * are kept, and that a memory copy never hides what the store says in any other field.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HaRunner, haSectionOf, type HaSectionStore } from '../../../clc/ha/haRunner.js';
import { HA_STATES, type HostHaRecord } from '../../../clc/ha/hostHaState.js';
import { PROBE_FIELDS, ProbeOverlay, sameBesidesProbes } from '../../../clc/ha/probeOverlay.js';
import { openMemoryClcStore } from '../../../clc/state/clcStore.js';
import { ManualClock } from '../../../shared/clock.js';
import { FakeHa } from './fakeHa.js';
import { OP, SETTINGS, inState } from './haFixtures.js';

const base = inState('AVAILABLE');

describe('sameBesidesProbes', () => {
  it.each([
    ['the probe token sequence', { seq: 99 }, true],
    ['the health probe', { health: null }, true],
    ['the next health check', { nextHealthCheckAt: 5 }, true],
    ['the power probe', { powerProbe: { token: 3, startedAt: 1, deadline: 2 } }, true],
    ['the next power status', { nextPowerCheckAt: 5 }, true],
    ['the state', { state: 'SUSPECT' }, false],
    ['the reason', { reason: 'other' }, false],
    ['first report of health', { reportedHealthy: false }, false],
    ['an operation', { operation: { kind: 'activity', token: OP, startedAt: 0, deadline: 5 } }, false],
    ['an owed repair', { owed: { kind: 'drain', since: 0, attempts: 1, nextAttemptAt: 0, inFlight: null, lastOutcome: null } }, false],
  ] as const)('%s: %s', (_what, patch, same) => {
    expect(sameBesidesProbes(base, { ...base, ...patch } as HostHaRecord)).toBe(same);
  });

  it('compares nested values by content, not by identity (a store hands back copies)', () => {
    const a = inState('CHECKING');
    expect(sameBesidesProbes(a, structuredClone(a))).toBe(true);
    expect(sameBesidesProbes(a, { ...a, operation: { ...a.operation!, deadline: 6 } })).toBe(false);
  });
});

describe('ProbeOverlay', () => {
  it('hands out the memory copy only while the store says the same besides probes, never with a lower token sequence', () => {
    fc.assert(fc.property(
      fc.constantFrom(...HA_STATES), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 50 }), fc.boolean(),
      (state, storedSeq, liveSeq, storeMoved) => {
        const stored = inState(state, { seq: storedSeq });
        const overlay = new ProbeOverlay();
        overlay.keep({ ...stored, seq: liveSeq, nextHealthCheckAt: 77 }, stored);
        // Asked once of the very record it was kept from (remembered, not compared again), then of what the store holds now.
        expect(overlay.current(stored).nextHealthCheckAt).toBe(77);
        const now = storeMoved ? { ...stored, reason: 'changed by an operator' } : structuredClone(stored);
        const got = overlay.current(now);
        expect(overlay.current(now)).toEqual(got);
        expect(sameBesidesProbes(got, now)).toBe(true);
        for (const k of Object.keys(now)) if (!PROBE_FIELDS.has(k)) expect(got[k as keyof HostHaRecord]).toEqual(now[k as keyof HostHaRecord]);
        expect(got.seq).toBeGreaterThanOrEqual(Math.max(storedSeq, liveSeq));
        expect(got.nextHealthCheckAt).toBe(storeMoved ? now.nextHealthCheckAt : 77);
      }));
  });
});

describe('HaRunner with probe bookkeeping in memory', () => {
  const H = (i: number) => `127.0.1.${i}`;
  async function world() {
    const clock = new ManualClock(0);
    const section = haSectionOf(await openMemoryClcStore());
    let writes = 0;
    const counted: HaSectionStore = { read: () => section.read(), update: (m) => { writes++; return section.update(m); } };
    await section.update((ha) => {
      ha.global.settings = { ...SETTINGS };
      ha.partitions.p1 = { enabled: true, settings: {} };
    });
    const fake = new FakeHa();
    const make = () => new HaRunner({ store: counted, provider: fake, actions: fake, clock });
    const runner = make();
    await runner.syncHosts([1, 2, 3].map((i) => ({ host: H(i), partition: 'p1' })));
    await runner.evaluateEligibility();
    return { clock, section, fake, runner, make, writes: () => writes };
  }
  const pass = async (w: Awaited<ReturnType<typeof world>>, runner: HaRunner, ms: number) => {
    for (let i = 0; i < ms; i++) {
      w.clock.advance(1);
      await runner.tick();
      await runner.idle();
    }
  };

  it('a steady cloud writes nothing for its health checks; DescribeHostHA still sees when each is due; a failure is written', async () => {
    const w = await world();
    await pass(w, w.runner, 2);
    const settled = w.writes();
    const checks = () => w.fake.calls.filter((c) => c.startsWith('health ')).length;
    const before = checks();
    await pass(w, w.runner, 5 * SETTINGS.healthCheckIntervalMs);
    expect(checks() - before).toBeGreaterThanOrEqual(3 * 4);
    expect(w.writes()).toBe(settled);
    // The stored record lags; the live one is when the next check is due.
    const live = w.runner.liveSection().hosts[H(1)]!;
    expect(live.nextHealthCheckAt).toBeGreaterThan(w.section.read().hosts[H(1)]!.nextHealthCheckAt);
    expect(live.nextHealthCheckAt).toBeGreaterThan(w.clock.now());
    w.fake.healthy.set(H(2), false);
    await pass(w, w.runner, 2 * SETTINGS.healthCheckIntervalMs);
    expect(w.section.read().hosts[H(2)]?.state).toBe('SUSPECT');
    expect(w.writes()).toBeGreaterThan(settled);
  });

  it('a new runner over the same store (a CLC restart) checks every host at once from what was written', async () => {
    const w = await world();
    await pass(w, w.runner, 3 * SETTINGS.healthCheckIntervalMs);
    await w.runner.idle();
    const again = w.make();
    w.fake.calls.length = 0;
    await again.resume();
    w.clock.advance(1);
    await again.tick();
    await again.idle();
    expect(w.fake.calls.filter((c) => c.startsWith('health ')).sort()).toEqual([1, 2, 3].map((i) => `health ${H(i)}`));
    expect([1, 2, 3].map((i) => w.section.read().hosts[H(i)]?.state)).toEqual(['AVAILABLE', 'AVAILABLE', 'AVAILABLE']);
  });
});
