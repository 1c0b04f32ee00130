/**
 * External remediation through the HA runner (clc/ha/haRunner.ts) with hand-written fakes: the
 * `externalRemediation` effect reaches the remediator once, on the remediation pool; a CLC restart
 * does not hand out an accepted remediation again (one never accepted is, under the same id); a
 * failure escalates to DisableService and the fence, and only then the restart elsewhere.
 */
import { describe, expect, it } from 'vitest';
import type { ExternalRemediator, RemediationOutcome } from '../../../clc/ha/externalRemediator.js';
import { HaRunner, haSectionOf, type HaSectionStore } from '../../../clc/ha/haRunner.js';
import type { RemediationJob } from '../../../clc/ha/remediation.js';
import { openMemoryClcStore } from '../../../clc/state/clcStore.js';
import { ManualClock } from '../../../shared/clock.js';
import { FakeHa } from './fakeHa.js';
import { SETTINGS } from './haFixtures.js';

const H1 = '127.0.1.1';

/** A remediator that accepts (webhook-like), succeeds (a command's exit 0), fails, or never answers. */
class FakeRemediator implements ExternalRemediator {
  readonly jobs: RemediationJob[] = [];
  constructor(private readonly mode: 'accept' | 'done' | 'fail' | 'hang') {}
  remediate(job: RemediationJob, onAccepted: (d: string) => void): Promise<RemediationOutcome> {
    this.jobs.push(job);
    if (this.mode === 'accept') return Promise.resolve({ outcome: 'accepted', detail: 'HTTP 202' });
    if (this.mode === 'hang') return new Promise(() => undefined);
    onAccepted('started');
    return this.mode === 'done' ? Promise.resolve({ outcome: 'done', detail: 'exit 0' }) : Promise.reject(new Error('exit 1'));
  }
}

async function runnerOn(section: HaSectionStore, fake: FakeHa, remediator: FakeRemediator, clock = new ManualClock(0)) {
  const runner = new HaRunner({ store: section, provider: fake, actions: fake, clock, remediator: () => remediator });
  await runner.syncHosts([1, 2, 3].map((i) => ({ host: `127.0.1.${i}`, partition: 'p1' })));
  const state = () => section.read().hosts[H1]?.state;
  const turns = async () => { for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r)); };
  /** One ms per tick until `done` (work settled between ticks, or let run when it hangs). */
  const until = async (done: () => boolean, max = 400) => {
    for (let i = 0; i < max && !done(); i++) {
      clock.advance(1);
      await runner.tick();
      await turns();
    }
    expect(done(), `state ${state() ?? '?'}: ${section.read().hosts[H1]?.reason ?? ''}`).toBe(true);
  };
  return { runner, state, until, clock };
}

async function crashedHost(mode: 'accept' | 'done' | 'fail' | 'hang') {
  const section = haSectionOf(await openMemoryClcStore());
  await section.update((ha) => {
    ha.global.settings = { ...SETTINGS, externalRemediationTimeoutMs: 10_000, recoverWaitPeriodMs: 10_000 };
    ha.partitions.p1 = { enabled: true, settings: {}, maxUnhealthy: '100%', remediation: { strategy: 'external', webhook: { url: 'http://127.0.71.1:18220/' } } };
  });
  const fake = new FakeHa();
  const remediator = new FakeRemediator(mode);
  const env = await runnerOn(section, fake, remediator);
  await env.runner.evaluateEligibility();
  await env.until(() => env.state() === 'AVAILABLE');
  fake.healthy.set(H1, false);
  fake.activity.set(H1, 'inactive');
  await env.until(() => remediator.jobs.length > 0);
  return { section, fake, remediator, env };
}

describe('external remediation through the runner', () => {
  it('accepted: handed out once; a CLC restart does not hand it out again; the report moves it on', async () => {
    const { section, fake, remediator, env } = await crashedHost('accept');
    await env.runner.idle();
    const rec = section.read().hosts[H1];
    expect(rec?.remediation).toMatchObject({ accepted: true });
    expect(remediator.jobs).toEqual([{ host: H1, partition: 'p1', id: rec?.remediation?.id, reason: expect.stringContaining('handed to external remediation') as unknown, deadline: rec?.operation?.deadline }]);
    // The second CLC, from what was persisted: nothing handed out again.
    const again = new FakeRemediator('accept');
    const second = await runnerOn(section, fake, again, new ManualClock(env.clock.now()));
    await second.runner.resume();
    await second.runner.idle();
    expect(again.jobs).toEqual([]);
    expect(second.state()).toBe('REMEDIATING');
    fake.healthy.set(H1, true);
    await second.runner.deliver(H1, { type: 'remediationReported', id: rec?.remediation?.id ?? '', result: 'succeeded', message: '', operator: 'remediator' });
    expect(second.state()).toBe('RECOVERED');
    await second.until(() => second.state() === 'AVAILABLE');
    expect(fake.calls.some((c) => c.startsWith('fence') || c.startsWith('recover'))).toBe(false);
  });

  it('never accepted before the restart: handed out again under the same id', async () => {
    const { section, fake, remediator, env } = await crashedHost('hang');
    const id = section.read().hosts[H1]?.remediation?.id;
    expect(section.read().hosts[H1]?.remediation?.accepted).toBe(false);
    const again = new FakeRemediator('accept');
    const second = await runnerOn(section, fake, again, new ManualClock(env.clock.now()));
    await second.runner.resume();
    await second.runner.idle();
    expect(remediator.jobs).toHaveLength(1);
    expect(again.jobs.map((j) => j.id)).toEqual([id]);
  });

  it('a command exiting 0: accepted, then done, then the health check decides', async () => {
    const { fake, env } = await crashedHost('done');
    fake.healthy.set(H1, true);
    await env.until(() => env.state() === 'AVAILABLE');
    expect(fake.calls.some((c) => c.startsWith('fence') || c.startsWith('recover'))).toBe(false);
  });

  it('a failure escalates: DisableService, then the fence, and only then the restart elsewhere', async () => {
    const { fake, env } = await crashedHost('fail');
    await env.until(() => env.state() === 'FENCED');
    await env.runner.idle();
    expect(fake.calls.filter((c) => !c.startsWith('health') && !c.startsWith('activity'))).toEqual([`disable ${H1}`, `fence ${H1}`, `evacuate ${H1} (agent)`]);
  });
});
