/** The pure leadership machine (shared/leader/leaderMachine.ts): its table, the lease deadline, and properties over random event runs. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  INITIAL_LEADER, IllegalLeaderEventError, acceptedEvents, leadsAt, step,
  type LeaderEffect, type LeaderEvent, type LeaderSettings, type LeaderSnapshot, type LeaderState,
} from '../../shared/leader/leaderMachine.js';

const S: LeaderSettings = { ttlMs: 10_000, marginMs: 1_000, backoffMs: 250 };

/** Runs events at the given times from `start`, returning the last snapshot and every effect. */
function run(events: ReadonlyArray<readonly [number, LeaderEvent]>, start: LeaderSnapshot = INITIAL_LEADER): { s: LeaderSnapshot; effects: LeaderEffect[] } {
  let s = start;
  const effects: LeaderEffect[] = [];
  for (const [now, e] of events) {
    const r = step(s, e, now, S);
    s = r.next;
    effects.push(...r.effects);
  }
  return { s, effects };
}

const elect: ReadonlyArray<readonly [number, LeaderEvent]> = [
  [0, { type: 'start' }],
  [0, { type: 'granted', sentAt: 0 }],
  [100, { type: 'elected', key: 'k/1', epoch: '42' }],
];

describe('leader machine', () => {
  it.each<[string, ReadonlyArray<readonly [number, LeaderEvent]>, LeaderState, ReadonlyArray<LeaderEffect['kind']>]>([
    ['start campaigns', [[0, { type: 'start' }]], 'campaigning', ['campaign']],
    ['elected within the lease leads and arms the deadline', elect, 'leader', ['campaign', 'becameLeader', 'armTimer']],
    ['elected after the lease may have run out does not lead', [[0, { type: 'start' }], [0, { type: 'granted', sentAt: 0 }], [9_500, { type: 'elected', key: 'k', epoch: '5' }]], 'backoff', ['campaign', 'dropCampaign', 'scheduleRetry']],
    ['a failed campaign backs off', [[0, { type: 'start' }], [5, { type: 'failed', reason: 'x' }]], 'backoff', ['campaign', 'dropCampaign', 'scheduleRetry']],
    ['a retry campaigns again', [[0, { type: 'start' }], [5, { type: 'failed', reason: 'x' }], [300, { type: 'retry' }]], 'campaigning', ['campaign', 'dropCampaign', 'scheduleRetry', 'campaign']],
    ['a leader whose deadline passes loses leadership', [...elect, [9_000, { type: 'tick' }]], 'backoff', ['campaign', 'becameLeader', 'armTimer', 'lostLeadership', 'dropCampaign', 'scheduleRetry']],
    ['a tick before the deadline re-arms', [...elect, [8_999, { type: 'tick' }]], 'leader', ['campaign', 'becameLeader', 'armTimer', 'armTimer']],
    ['a keep-alive moves the deadline', [...elect, [3_000, { type: 'keepalive', sentAt: 2_900 }], [9_500, { type: 'tick' }]], 'leader', ['campaign', 'becameLeader', 'armTimer', 'armTimer', 'armTimer']],
    ['a keep-alive answered after the deadline does not revive it', [...elect, [9_100, { type: 'keepalive', sentAt: 2_900 }]], 'backoff', ['campaign', 'becameLeader', 'armTimer', 'lostLeadership', 'dropCampaign', 'scheduleRetry']],
    ['a leader whose lease is lost steps down', [...elect, [200, { type: 'failed', reason: 'lease lost' }]], 'backoff', ['campaign', 'becameLeader', 'armTimer', 'lostLeadership', 'dropCampaign', 'scheduleRetry']],
    ['a leader that resigns says so and drops the lease', [...elect, [200, { type: 'resign' }]], 'stopped', ['campaign', 'becameLeader', 'armTimer', 'lostLeadership', 'dropCampaign']],
    ['late events of a dropped campaign are ignored', [[0, { type: 'start' }], [5, { type: 'failed', reason: 'x' }], [6, { type: 'keepalive', sentAt: 5 }], [7, { type: 'tick' }], [8, { type: 'failed', reason: 'y' }]], 'backoff', ['campaign', 'dropCampaign', 'scheduleRetry']],
  ])('%s', (_name, events, state, kinds) => {
    const { s, effects } = run(events);
    expect(s.state).toBe(state);
    expect(effects.map((e) => e.kind)).toEqual(kinds);
  });

  it('leads only before validUntil - margin, and the epoch is the elected one', () => {
    const { s } = run(elect);
    expect(s.epoch).toBe('42');
    expect(leadsAt(s, 8_999, S)).toBe(true);
    expect(leadsAt(s, 9_000, S)).toBe(false);
  });

  it('the back-off doubles per failure, capped at the TTL', () => {
    const retries: number[] = [];
    let s = INITIAL_LEADER;
    let now = 0;
    s = step(s, { type: 'start' }, now, S).next;
    for (let i = 0; i < 8; i++) {
      const r = step(s, { type: 'failed', reason: 'x' }, now, S);
      const at = r.effects.find((e) => e.kind === 'scheduleRetry');
      retries.push(at && at.kind === 'scheduleRetry' ? at.at - now : -1);
      now = at && at.kind === 'scheduleRetry' ? at.at : now;
      s = step(r.next, { type: 'retry' }, now, S).next;
    }
    expect(retries).toEqual([250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
  });

  it('an event the state cannot take is an IllegalLeaderEventError naming both', () => {
    expect(() => step(INITIAL_LEADER, { type: 'elected', key: 'k', epoch: '1' }, 0, S)).toThrow(IllegalLeaderEventError);
    expect(() => step(run(elect).s, { type: 'start' }, 0, S)).toThrow(/start is not allowed in state leader/);
    expect(acceptedEvents('idle')).toEqual(['start', 'resign']);
  });

  const eventArb: fc.Arbitrary<LeaderEvent> = fc.oneof(
    fc.constant<LeaderEvent>({ type: 'start' }),
    fc.constant<LeaderEvent>({ type: 'tick' }),
    fc.constant<LeaderEvent>({ type: 'retry' }),
    fc.constant<LeaderEvent>({ type: 'failed', reason: 'f' }),
    fc.constant<LeaderEvent>({ type: 'resign' }),
    fc.integer({ min: 0, max: 3_000 }).map((back): LeaderEvent => ({ type: 'granted', sentAt: -back })),
    fc.integer({ min: 0, max: 3_000 }).map((back): LeaderEvent => ({ type: 'keepalive', sentAt: -back })),
    fc.integer({ min: 1, max: 1000 }).map((n): LeaderEvent => ({ type: 'elected', key: `k/${n}`, epoch: String(n) })),
  );

  it('over any run: never leads past (newest acknowledged send + TTL - margin), and gains and losses alternate', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 4_000 }), eventArb), { maxLength: 60 }), (steps) => {
      let s = INITIAL_LEADER;
      let now = 0;
      let newestAck = Number.NEGATIVE_INFINITY;
      let leading = false;
      for (const [dt, raw] of steps) {
        now += dt;
        // Sends are in the past of the moment their answer arrives.
        const e: LeaderEvent = raw.type === 'granted' || raw.type === 'keepalive' ? { ...raw, sentAt: now + raw.sentAt } : raw;
        let r;
        try {
          r = step(s, e, now, S);
        } catch (err) {
          if (err instanceof IllegalLeaderEventError) continue;
          throw err;
        }
        if ((e.type === 'granted' || e.type === 'keepalive') && s.state !== 'backoff' && s.state !== 'stopped') newestAck = Math.max(newestAck, e.sentAt);
        if (r.next.state !== 'campaigning' && r.next.state !== 'leader') newestAck = Number.NEGATIVE_INFINITY;
        if (e.type === 'start' || e.type === 'retry') newestAck = Number.NEGATIVE_INFINITY;
        s = r.next;
        for (const eff of r.effects) {
          if (eff.kind === 'becameLeader') {
            expect(leading).toBe(false);
            leading = true;
          }
          if (eff.kind === 'lostLeadership') {
            expect(leading).toBe(true);
            leading = false;
          }
        }
        if (leadsAt(s, now, S)) expect(now).toBeLessThan(newestAck + S.ttlMs - S.marginMs);
        if (s.state !== 'leader') expect(leading).toBe(false);
      }
    }), { numRuns: 500 });
  });
});
