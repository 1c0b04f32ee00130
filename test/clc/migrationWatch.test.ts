/**
 * euca-migrate-instances --wait's schedule (clc/cli/migrationWatch.ts): the wait between two
 * DescribeMigrations grows with the watch's age, from MIN_POLL_MS to --poll-ms, and the watch
 * follows one migration to its end on an injected clock (no real sleeps).
 */
import { describe, expect, it } from 'vitest';
import { MIN_POLL_MS, nextPollMs, watchMigration } from '../../clc/cli/migrationWatch.js';
import type { MigrationReading } from '../../clc/cli/responses.js';

describe('nextPollMs', () => {
  it.each([
    // [age ms, --poll-ms, wait ms]
    [0, 1000, MIN_POLL_MS],
    [500, 1000, MIN_POLL_MS],
    [1500, 1000, 150],
    [4000, 1000, 400],
    [10_000, 1000, 1000],
    [600_000, 1000, 1000],
    [600_000, 5000, 5000],
    // A --poll-ms below the floor is the caller's choice: it wins.
    [0, 20, 20],
  ])('%i ms into the watch, --poll-ms %i: waits %i ms', (age, poll, wait) => {
    expect(nextPollMs(age, poll)).toBe(wait);
  });

  it('never waits longer than --poll-ms, and never shorter than the floor below it', () => {
    for (let age = 0; age < 120_000; age += 777) {
      const w = nextPollMs(age, 1000);
      expect(w).toBeGreaterThanOrEqual(MIN_POLL_MS);
      expect(w).toBeLessThanOrEqual(1000);
      expect(w).toBeGreaterThanOrEqual(nextPollMs(Math.max(0, age - 777), 1000));
    }
  });
});

const doc = (state: string): Record<string, unknown> => ({
  migrationSet: {
    item: {
      migrationId: 'mig-00000001', partition: 'cluster01', sourceHost: '127.0.12.11', kind: 'instance', state, createdAt: '2013-06-01T12:00:00.000Z',
      itemSet: { item: { instanceId: 'i-00000001', instanceType: 'm1.small', destination: '127.0.12.12', state: state === 'active' ? 'migrating' : state, attempts: '1', error: '', queuedAt: '2013-06-01T12:00:00.000Z' } },
    },
  },
  unavailablePartitionSet: '',
});

describe('watchMigration', () => {
  it('asks sooner while the migration is young, and stops at its end with the display stopped', async () => {
    let t = 0;
    const sleeps: number[] = [];
    const shown: string[] = [];
    let stopped = false;
    // Active until 3 s into the watch, then completed.
    const client = { call: (action: string, params: Record<string, string>) => {
      expect([action, params]).toEqual(['DescribeMigrations', { 'MigrationId.1': 'mig-00000001' }]);
      return Promise.resolve(doc(t < 3000 ? 'active' : 'completed'));
    } };
    const final: MigrationReading = await watchMigration({
      client, url: 'http://127.0.12.2/', migrationId: 'mig-00000001', pollMs: 1000,
      display: { show: (m) => shown.push(m.state), stop: () => { stopped = true; } },
      now: () => t,
      sleep: (ms) => { sleeps.push(ms); t += ms; return Promise.resolve(); },
    });
    expect(final.state).toBe('completed');
    expect(stopped).toBe(true);
    expect(shown.at(-1)).toBe('completed');
    expect(shown.slice(0, -1).every((s) => s === 'active')).toBe(true);
    // 100 ms waits for the first second, then a tenth of the age: seen at most ~10 % after the end.
    expect(sleeps.slice(0, 10)).toEqual(Array(10).fill(MIN_POLL_MS));
    expect(sleeps.every((ms, i) => i === 0 || ms >= sleeps[i - 1]!)).toBe(true);
    expect(t).toBeGreaterThanOrEqual(3000);
    expect(t).toBeLessThanOrEqual(3000 * 1.1 + MIN_POLL_MS);
  });

  it('an answer that does not list the migration is an UnexpectedResponse, display stopped', async () => {
    let stopped = false;
    const client = { call: () => Promise.resolve({ migrationSet: '', unavailablePartitionSet: '' }) };
    await expect(watchMigration({
      client, url: 'http://127.0.12.2/', migrationId: 'mig-00000001', pollMs: 1000,
      display: { show: () => undefined, stop: () => { stopped = true; } }, sleep: () => Promise.resolve(),
    })).rejects.toThrow(/did not list mig-00000001/);
    expect(stopped).toBe(true);
  });
});
