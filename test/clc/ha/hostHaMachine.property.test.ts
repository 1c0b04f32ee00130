/**
 * Properties of the host-HA machine over random event sequences (fast-check): never FENCED without a
 * successful fence result or an operator's confirmation; evacuate on entering FENCED and only while
 * FENCED; a drain only while one is owed, one repair attempt at a time, a drain never beyond its bound; a stale
 * result changes nothing; a fence is always preceded by a disable; no recovery or fence starts while
 * the storm guard refuses (unless an operator asks); a failed fence never retries by itself; the
 * record stays valid plain JSON.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IllegalHaEventError, step, type RemediationAllowance } from '../../../clc/ha/hostHaMachine.js';
import { hostHaRecordSchema, newHostHaRecord, type HaEvent, type HealthOutcome, type HostHaRecord } from '../../../clc/ha/hostHaState.js';
import { ALLOWED, SETTINGS, STORM } from './haFixtures.js';

type TokenPick = { readonly pick: 'current' } | { readonly pick: 'old'; readonly index: number } | { readonly pick: 'any'; readonly token: number };

type Cmd =
  | { readonly t: 'plain'; readonly event: HaEvent }
  | { readonly t: 'tick'; readonly dt: number }
  | { readonly t: 'health'; readonly token: TokenPick; readonly outcome: HealthOutcome }
  | { readonly t: 'activity'; readonly token: TokenPick; readonly outcome: 'active' | 'inactive' | 'unknown' }
  | { readonly t: 'recover'; readonly token: TokenPick; readonly ok: boolean }
  | { readonly t: 'fence'; readonly token: TokenPick; readonly ok: boolean }
  /** The outcome of an owed drain or restart elsewhere (owedRepair.ts). */
  | { readonly t: 'repair'; readonly token: TokenPick; readonly done: boolean }
  /** The runner's queue refused whatever the host waits for. */
  | { readonly t: 'refuse' }
  /** Answers whatever the host waits for (its operation, else its health probe), with a random outcome. */
  | { readonly t: 'answer'; readonly ok: boolean; readonly outcome: 'active' | 'inactive' | 'unknown'; readonly accepted: boolean }
  /** CompleteHostRemediation naming the remediation in flight, or a stale id. */
  | { readonly t: 'report'; readonly current: boolean; readonly succeeded: boolean };

const tokenPick: fc.Arbitrary<TokenPick> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ pick: 'current' as const }) },
  { weight: 2, arbitrary: fc.nat(20).map((index) => ({ pick: 'old' as const, index })) },
  { weight: 1, arbitrary: fc.nat(60).map((token) => ({ pick: 'any' as const, token })) },
);

const plain = (event: HaEvent): Cmd => ({ t: 'plain', event });

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom<Cmd>(
    plain({ type: 'haDisabled', reason: 'off' }), plain({ type: 'haEnabled' }),
    plain({ type: 'eligibility', eligible: true, reason: 'ok' }), plain({ type: 'eligibility', eligible: false, reason: 'no neighbour' }),
    plain({ type: 'fenceRequested', operator: 'op' }), plain({ type: 'operatorConfirmedFenced', operator: 'op' }), plain({ type: 'unfenced' }), plain({ type: 'resumed' }),
    plain({ type: 'serviceEnabled' }),
  ) },
  { weight: 1, arbitrary: fc.constant<Cmd>({ t: 'refuse' }) },
  { weight: 8, arbitrary: fc.record({ ok: fc.boolean(), outcome: fc.constantFrom('active' as const, 'inactive' as const, 'inactive' as const, 'unknown' as const), accepted: fc.boolean() })
    .map((r): Cmd => ({ t: 'answer', ...r })) },
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 120 }).map((dt): Cmd => ({ t: 'tick', dt })) },
  { weight: 2, arbitrary: fc.record({ token: tokenPick, outcome: fc.constantFrom<HealthOutcome>('healthy', 'unhealthy', 'unknown') }).map((r): Cmd => ({ t: 'health', ...r })) },
  { weight: 5, arbitrary: fc.record({ token: tokenPick, outcome: fc.constantFrom('active' as const, 'inactive' as const, 'unknown' as const) }).map((r): Cmd => ({ t: 'activity', ...r })) },
  { weight: 2, arbitrary: fc.record({ token: tokenPick, ok: fc.boolean() }).map((r): Cmd => ({ t: 'recover', ...r })) },
  { weight: 2, arbitrary: fc.record({ token: tokenPick, ok: fc.boolean() }).map((r): Cmd => ({ t: 'fence', ...r })) },
  { weight: 3, arbitrary: fc.record({ token: tokenPick, done: fc.boolean() }).map((r): Cmd => ({ t: 'repair', ...r })) },
  { weight: 1, arbitrary: fc.record({ current: fc.boolean(), succeeded: fc.boolean() }).map((r): Cmd => ({ t: 'report', ...r })) },
);

function resolveToken(p: TokenPick, rec: HostHaRecord, issued: readonly number[], kind: 'health' | 'op' | 'repair'): number {
  if (p.pick === 'any') return p.token;
  if (p.pick === 'old') return issued[p.index % Math.max(1, issued.length)] ?? 0;
  return (kind === 'health' ? rec.health?.token : kind === 'repair' ? rec.owed?.inFlight : rec.operation?.token) ?? 0;
}

function toEvent(c: Cmd, rec: HostHaRecord, issued: readonly number[]): HaEvent {
  switch (c.t) {
    case 'plain': return c.event;
    case 'tick': return { type: 'tick' };
    case 'refuse': return { type: 'dispatchRefused', token: rec.operation?.token ?? rec.health?.token ?? 0 };
    case 'answer': {
      const op = rec.operation;
      if (op?.kind === 'activity') return { type: 'activityResult', token: op.token, outcome: c.outcome, detail: 'p' };
      if (op?.kind === 'recover') return { type: 'recoverResult', token: op.token, ok: c.ok, detail: 'p' };
      if (op?.kind === 'fence') return { type: 'fenceResult', token: op.token, ok: c.ok, detail: 'p' };
      if (op?.kind === 'remediate') return { type: 'remediationResult', token: op.token, outcome: c.accepted ? 'accepted' : c.ok ? 'done' : 'failed', detail: 'p' };
      return { type: 'healthResult', token: rec.health?.token ?? 0, outcome: c.ok && c.outcome === 'active' ? 'healthy' : 'unhealthy', detail: 'p' };
    }
    case 'health': return { type: 'healthResult', token: resolveToken(c.token, rec, issued, 'health'), outcome: c.outcome, detail: 'p' };
    case 'activity': return { type: 'activityResult', token: resolveToken(c.token, rec, issued, 'op'), outcome: c.outcome, detail: 'p' };
    case 'recover': return { type: 'recoverResult', token: resolveToken(c.token, rec, issued, 'op'), ok: c.ok, detail: 'p' };
    case 'fence': return { type: 'fenceResult', token: resolveToken(c.token, rec, issued, 'op'), ok: c.ok, detail: 'p' };
    case 'repair': return { type: 'repairResult', token: resolveToken(c.token, rec, issued, 'repair'), done: c.done, detail: 'p' };
    case 'report': return { type: 'remediationReported', id: c.current ? rec.remediation?.id ?? 'none' : '0-stale', result: c.succeeded ? 'succeeded' : 'failed', message: 'p', operator: 'op' };
  }
}

/** Whether `event` is a result the record is waiting for. */
function isCurrentResult(rec: HostHaRecord, event: HaEvent): boolean | undefined {
  switch (event.type) {
    case 'healthResult': return rec.health?.token === event.token;
    case 'activityResult': return rec.operation?.kind === 'activity' && rec.operation.token === event.token;
    case 'recoverResult': return rec.operation?.kind === 'recover' && rec.operation.token === event.token;
    case 'fenceResult': return rec.operation?.kind === 'fence' && rec.operation.token === event.token;
    case 'remediationResult': return rec.operation?.kind === 'remediate' && rec.operation.token === event.token;
    case 'dispatchRefused': return rec.health?.token === event.token || rec.operation?.token === event.token;
    case 'repairResult': return rec.owed?.inFlight === event.token;
    default: return undefined;
  }
}

const OPERATOR = new Set<HaEvent['type']>(['fenceRequested', 'operatorConfirmedFenced', 'unfenced', 'remediationReported']);

const steps = fc.array(fc.record({ cmd, storm: fc.nat(4).map((n) => n === 0), external: fc.nat(2).map((n) => n === 0) }), { minLength: 20, maxLength: 200, size: 'max' });

/** Runs one random sequence, checking every step; records the states it reaches in `visited`. */
function checkSequence(seq: readonly { readonly cmd: Cmd; readonly storm: boolean; readonly external: boolean }[], visited: Set<string>): void {
  let rec = newHostHaRecord('h1', 'p1', 0);
  let now = 0;
  const issued: number[] = [];
  for (const { cmd: c, storm, external } of seq) {
    if (c.t === 'tick') now += c.dt;
    const remediation: RemediationAllowance = storm ? STORM : ALLOWED;
    const event = toEvent(c, rec, issued);
    let r;
    try {
      r = step(rec, event, now, { settings: SETTINGS, remediation, strategy: external ? 'external' : 'fence' });
    } catch (e) {
      expect(e).toBeInstanceOf(IllegalHaEventError);
      expect(OPERATOR.has(event.type)).toBe(true);
      continue;
    }
    const { next, effects } = r;
    const kinds = effects.map((e) => e.kind);
    const current = isCurrentResult(rec, event);
    // A stale result changes nothing.
    if (current === false) {
      expect(next).toEqual(rec);
      expect(effects).toEqual([]);
    }
    // Never FENCED without a confirmed fence or an operator.
    const enteredFenced = next.state === 'FENCED' && rec.state !== 'FENCED';
    if (enteredFenced) {
      const byAgent = event.type === 'fenceResult' && event.ok && current === true;
      expect(byAgent || event.type === 'operatorConfirmedFenced').toBe(true);
    }
    // Evacuate on entering FENCED, and only ever while FENCED (retries of the owed restart).
    if (enteredFenced) expect(kinds).toContain('evacuate');
    if (kinds.includes('evacuate')) expect(next.state).toBe('FENCED');
    // Drain only while one is owed, never in the same step as a fence, never beyond its bound.
    if (kinds.includes('drain')) {
      expect(next.owed?.kind).toBe('drain');
      expect(kinds).not.toContain('fence');
    }
    if (next.owed?.kind === 'drain') expect(next.owed.attempts).toBeLessThanOrEqual(SETTINGS.drainMaxAttempts);
    // One repair attempt at a time: none starts while another is in flight.
    const repairs = kinds.filter((k) => k === 'drain' || k === 'evacuate').length;
    expect(repairs).toBeLessThanOrEqual(1);
    if (repairs > 0) expect(rec.owed?.inFlight ?? null).toBeNull();
    // A fence is always preceded by a disable.
    const fenceAt = kinds.indexOf('fence');
    if (fenceAt >= 0) expect(kinds.slice(0, fenceAt)).toContain('disableHost');
    // No recovery, external remediation or fence starts during a storm unless an operator asks (a restart resumes one already started).
    if (storm && event.type !== 'fenceRequested' && event.type !== 'resumed') {
      expect(kinds).not.toContain('recover');
      expect(kinds).not.toContain('externalRemediation');
      expect(kinds).not.toContain('fence');
    }
    // An external remediation is handed out only with strategy external, at most once per episode; a remediating host always has one in flight or held.
    if (kinds.includes('externalRemediation') && event.type !== 'resumed') {
      expect(external).toBe(true);
      expect(next.remediationAttempts).toBe(1);
    }
    if (next.state === 'REMEDIATING') expect(next.remediation !== null || next.blocked !== null).toBe(true);
    if (next.state !== 'REMEDIATING') expect(next.remediation).toBeNull();
    // A stale CompleteHostRemediation changes nothing (refused above, or the same record).
    if (event.type === 'remediationReported' && event.id !== rec.remediation?.id) expect(next).toBe(rec);
    // A failed fence never retries by itself.
    if (rec.state === 'FENCING' && rec.needsOperator && event.type !== 'fenceRequested') expect(kinds).not.toContain('fence');
    // The record stays valid, plain JSON.
    expect(hostHaRecordSchema.parse(JSON.parse(JSON.stringify(next)))).toEqual(next);
    for (const e of effects) if ('token' in e) issued.push(e.token);
    visited.add(next.needsOperator ? 'FENCING+needsOperator' : next.state);
    if (enteredFenced) visited.add(`FENCED by ${next.fencedBy}`);
    rec = next;
    now += 1;
  }
}

describe('host-HA machine properties', () => {
  it('holds the safety invariants over random event sequences', () => {
    fc.assert(fc.property(steps, (seq) => checkSequence(seq, new Set())), { numRuns: 200 });
  });

  it('the generator reaches every state, including both ways into FENCED (a fixed seed, so this cannot flake)', () => {
    const visited = new Set<string>();
    fc.assert(fc.property(steps, (seq) => checkSequence(seq, visited)), { numRuns: 200, seed: 6 });
    expect([...visited].sort()).toEqual([
      'AVAILABLE', 'CHECKING', 'DEGRADED', 'DISABLED', 'FENCED', 'FENCED by agent', 'FENCED by operator', 'FENCING',
      'FENCING+needsOperator', 'INELIGIBLE', 'RECOVERED', 'RECOVERING', 'REMEDIATING', 'SUSPECT',
    ]);
  });
});
