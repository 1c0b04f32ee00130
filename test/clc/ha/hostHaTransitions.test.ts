/**
 * The transition table tells the truth: on records reached by random event sequences, the row a
 * trigger selects names what firing it does (its `to` state, no state change for `stay`, an
 * IllegalHaEventError naming state and event for `refused`); every state has a row for every
 * operator command; every row is reachable in principle (its `from` is not empty).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IllegalHaEventError, step } from '../../../clc/ha/hostHaMachine.js';
import { HA_STATES, newHostHaRecord, type HaEvent, type HostHaRecord } from '../../../clc/ha/hostHaState.js';
import { HA_TABLE, countSample, fire, selectRow, type HaPayloads, type HaTrigger } from '../../../clc/ha/hostHaTransitions.js';
import { ALLOWED, STORM, ctx, extCtx, inState } from './haFixtures.js';

type Probe = { [K in HaTrigger]: { trigger: K; payload: HaPayloads[K] } }[HaTrigger];

const probes = (rec: HostHaRecord): Probe[] => [
  { trigger: 'haDisabled', payload: { reason: 'off' } },
  { trigger: 'haEnabled', payload: {} },
  { trigger: 'eligibility', payload: { eligible: true, reason: 'ok' } },
  { trigger: 'eligibility', payload: { eligible: false, reason: 'no neighbour' } },
  { trigger: 'health', payload: { outcome: 'healthy', detail: 'p' } },
  { trigger: 'health', payload: { outcome: 'unhealthy', detail: 'p' } },
  { trigger: 'health', payload: { outcome: 'unknown', detail: 'p' } },
  { trigger: 'activity', payload: { outcome: 'inactive', detail: 'p' } },
  { trigger: 'activity', payload: { outcome: 'active', detail: 'p' } },
  { trigger: 'recovered', payload: { detail: 'p' } },
  { trigger: 'recoveryFailed', payload: { detail: 'p' } },
  { trigger: 'fenced', payload: { detail: 'p' } },
  { trigger: 'fenceFailed', payload: { detail: 'p' } },
  { trigger: 'held', payload: {} },
  { trigger: 'timers', payload: {} },
  { trigger: 'healthDue', payload: {} },
  { trigger: 'repairDue', payload: {} },
  { trigger: 'fenceRequested', payload: { operator: 'op' } },
  { trigger: 'operatorConfirmedFenced', payload: { operator: 'op' } },
  { trigger: 'unfenced', payload: {} },
  { trigger: 'resumed', payload: {} },
  { trigger: 'dispatchRefused', payload: { token: rec.operation?.token ?? rec.health?.token ?? 0 } },
  { trigger: 'repairResult', payload: { token: rec.owed?.inFlight ?? 0, done: false, detail: 'p' } },
  { trigger: 'serviceEnabled', payload: {} },
  { trigger: 'remediationAccepted', payload: { detail: 'p' } },
  { trigger: 'remediated', payload: { detail: 'p' } },
  { trigger: 'remediationFailed', payload: { detail: 'p' } },
  { trigger: 'remediationReported', payload: { id: rec.remediation?.id ?? 'x', result: 'succeeded', message: '', operator: 'op' } },
  { trigger: 'remediationReported', payload: { id: rec.remediation?.id ?? 'x', result: 'failed', message: '', operator: 'op' } },
  { trigger: 'remediationReported', payload: { id: 'stale', result: 'succeeded', message: '', operator: 'op' } },
];

function checkRows(at: HostHaRecord, now: number): void {
  for (const c of [ctx(ALLOWED), ctx(STORM), extCtx(ALLOWED), extCtx(STORM)]) {
    for (const { trigger, payload } of probes(at)) {
      // As step() does: an activity sample is counted before the table decides.
      const rec = trigger === 'activity' && at.operation?.kind === 'activity' ? countSample(at, payload.outcome, now) : at;
      const row = selectRow(trigger, rec, payload as never, now, c);
      const run = (): HostHaRecord => fire(trigger, rec, payload as never, now, c).next;
      if (!row) {
        expect(run(), `${trigger} in ${rec.state}: no row, no change`).toBe(rec);
      } else if (row.to === 'refused') {
        expect(run, `${trigger} in ${rec.state}`).toThrow(IllegalHaEventError);
      } else {
        expect(run().state, `${trigger} in ${rec.state} (${row.guard})`).toBe(row.to === 'stay' ? rec.state : row.to);
      }
    }
  }
}

const EVENTS: HaEvent[] = [
  { type: 'haEnabled' }, { type: 'eligibility', eligible: true, reason: 'ok' }, { type: 'eligibility', eligible: false, reason: 'x' },
  { type: 'tick' }, { type: 'fenceRequested', operator: 'op' }, { type: 'operatorConfirmedFenced', operator: 'op' }, { type: 'unfenced' },
  { type: 'haDisabled', reason: 'off' }, { type: 'resumed' }, { type: 'serviceEnabled' },
];

/** One step driven by a choice: answer what is in flight (ok or not), or one of EVENTS. */
function drive(rec: HostHaRecord, choice: number, ok: boolean, now: number, storm: boolean, external = false): HostHaRecord {
  const op = rec.operation;
  let event: HaEvent;
  if (choice < 3 && op) {
    event = op.kind === 'activity'
      ? { type: 'activityResult', token: op.token, outcome: ok ? 'active' : 'inactive', detail: 'p' }
      : op.kind === 'recover' ? { type: 'recoverResult', token: op.token, ok, detail: 'p' }
        : op.kind === 'remediate' ? { type: 'remediationResult', token: op.token, outcome: choice === 0 ? 'accepted' : ok ? 'done' : 'failed', detail: 'p' }
          : { type: 'fenceResult', token: op.token, ok, detail: 'p' };
  } else if (choice < 5 && rec.health) {
    event = { type: 'healthResult', token: rec.health.token, outcome: choice === 4 && !ok ? 'unknown' : ok ? 'healthy' : 'unhealthy', detail: 'p' };
  } else if (choice < 6 && rec.owed?.inFlight != null) {
    event = { type: 'repairResult', token: rec.owed.inFlight, done: ok, detail: 'p' };
  } else {
    event = EVENTS[choice % EVENTS.length] ?? { type: 'tick' };
  }
  try {
    return step(rec, event, now, (external ? extCtx : ctx)(storm ? STORM : ALLOWED)).next;
  } catch (e) {
    if (e instanceof IllegalHaEventError) return rec;
    throw e;
  }
}

describe('host-HA transition table', () => {
  it('every state has a row for every operator command (a refusal is a row too)', () => {
    for (const state of HA_STATES) {
      for (const t of ['fenceRequested', 'operatorConfirmedFenced', 'unfenced', 'remediationReported'] as const) {
        expect(HA_TABLE[t].rows.some((r) => r.from.includes(state)), `${t} in ${state}`).toBe(true);
      }
    }
  });

  it('an illegal operator event is a typed error naming state and event', () => {
    const rec = inState('AVAILABLE');
    try {
      step(rec, { type: 'unfenced' }, 1, ctx());
      expect.unreachable('unfenced on an AVAILABLE host must be refused');
    } catch (e) {
      expect(e).toBeInstanceOf(IllegalHaEventError);
      expect((e as IllegalHaEventError).state).toBe('AVAILABLE');
      expect((e as IllegalHaEventError).event).toBe('unfenced');
    }
  });

  it('the selected row names the outcome, on records reached by random event sequences', () => {
    fc.assert(fc.property(
      fc.array(fc.record({ choice: fc.nat(15), ok: fc.boolean(), dt: fc.nat(40), storm: fc.boolean(), external: fc.boolean() }), { minLength: 1, maxLength: 60 }),
      (moves) => {
        let rec = newHostHaRecord('h1', 'p1', 0);
        let now = 0;
        for (const m of moves) {
          now += m.dt;
          rec = drive(rec, m.choice, m.ok, now, m.storm, m.external);
          checkRows(rec, now);
        }
      },
    ), { numRuns: 150 });
  });

  it('the selected row names the outcome in every fixture state', () => {
    for (const state of HA_STATES) for (const now of [0, 3, 60, 1000]) checkRows(inState(state), now);
    for (const activityFailures of [0, 1, 2]) checkRows(inState('CHECKING', { activityChecks: 2, activityFailures }), 1);
  });
});
