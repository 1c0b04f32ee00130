/** Storm protection (clc/ha/stormGuard.ts): table tests of the verdict and the maxUnhealthy parser. */
import { describe, expect, it } from 'vitest';
import { step } from '../../../clc/ha/hostHaMachine.js';
import type { HaState } from '../../../clc/ha/hostHaState.js';
import { DEFAULT_MAX_UNHEALTHY, judgeStorm, maxUnhealthySchema, unhealthyRangeSchema, type MaxUnhealthy, type UnhealthyRange } from '../../../clc/ha/stormGuard.js';
import { SETTINGS, actions, inState } from './haFixtures.js';

const count = (value: number): MaxUnhealthy => ({ kind: 'count', value });
const pct = (value: number): MaxUnhealthy => ({ kind: 'percent', value });
const A = 'AVAILABLE';

describe('judgeStorm', () => {
  const rows: [string, HaState[], MaxUnhealthy, { total: number; unhealthy: number; limit: number; allowed: boolean }][] = [
    ['all healthy', [A, A, A, A], pct(50), { total: 4, unhealthy: 0, limit: 2, allowed: true }],
    ['one of four failing, 50%', [A, A, A, 'CHECKING'], pct(50), { total: 4, unhealthy: 1, limit: 2, allowed: true }],
    ['exactly at the limit is allowed', [A, A, 'SUSPECT', 'CHECKING'], pct(50), { total: 4, unhealthy: 2, limit: 2, allowed: true }],
    ['over the limit refuses', [A, 'SUSPECT', 'CHECKING', 'CHECKING'], pct(50), { total: 4, unhealthy: 3, limit: 2, allowed: false }],
    ['hosts being remediated count as unhealthy', [A, A, 'RECOVERING', 'FENCING', 'CHECKING'], pct(40), { total: 5, unhealthy: 3, limit: 2, allowed: false }],
    ['fenced and degraded hosts count as unhealthy', [A, 'FENCED', 'DEGRADED'], count(1), { total: 3, unhealthy: 2, limit: 1, allowed: false }],
    ['percentages round up (Cluster API)', [A, A, 'CHECKING'], pct(34), { total: 3, unhealthy: 1, limit: 2, allowed: true }],
    ['maintenance (INELIGIBLE) and DISABLED hosts are not counted', ['INELIGIBLE', 'INELIGIBLE', 'DISABLED', A, 'CHECKING'], pct(50), { total: 2, unhealthy: 1, limit: 1, allowed: true }],
    ['a count limit', [A, A, A, A, A, 'SUSPECT', 'CHECKING'], count(1), { total: 7, unhealthy: 2, limit: 1, allowed: false }],
    ['count 0 forbids any automatic remediation', [A, 'CHECKING'], count(0), { total: 2, unhealthy: 1, limit: 0, allowed: false }],
    ['100% never refuses', ['CHECKING', 'CHECKING'], pct(100), { total: 2, unhealthy: 2, limit: 2, allowed: true }],
    ['no hosts', [], pct(50), { total: 0, unhealthy: 0, limit: 0, allowed: true }],
  ];
  it.each(rows)('%s', (_name, states, max, want) => {
    const v = judgeStorm('p1', states, max);
    expect({ total: v.total, unhealthy: v.unhealthy, limit: v.limit, allowed: v.allowance.allowed }).toEqual(want);
    if (!v.allowance.allowed) {
      expect(v.allowance.reason).toContain(`${want.unhealthy} of ${want.total} hosts in p1 are unhealthy`);
      expect(v.allowance.reason).toContain(`(= ${want.limit})`);
    }
  });

  it("defaults to oVirt's half", () => expect(DEFAULT_MAX_UNHEALTHY).toEqual(pct(50)));

  it('the refusal reaches the held host, and is shown on its record', () => {
    const states: HaState[] = [A, 'SUSPECT', 'CHECKING', 'CHECKING'];
    const verdict = judgeStorm('p1', states, pct(50));
    const from = inState('CHECKING', { activityChecks: 2, activityFailures: 2 });
    const r = step(from, { type: 'activityResult', token: 7, outcome: 'inactive', detail: 'x' }, 1, { settings: SETTINGS, remediation: verdict.allowance });
    expect(actions(r.effects)).toEqual([]);
    expect(r.next.blocked?.reason).toMatch(/^storm protection: 3 of 4 hosts in p1 are unhealthy, more than maxUnhealthy 50%/);
    expect(r.effects).toContainEqual(expect.objectContaining({ kind: 'alert', level: 'warn' }));
  });
});

describe('judgeStorm with unhealthyRange (Cluster API: takes precedence over maxUnhealthy)', () => {
  const C = 'CHECKING';
  const range = (min: number, max: number): UnhealthyRange => ({ min, max });
  const rows: [string, HaState[], MaxUnhealthy, UnhealthyRange, boolean][] = [
    ['below the range: 1 unhealthy, [2-5]', [A, A, A, C], pct(100), range(2, 5), false],
    ['at the lower bound', [A, A, C, C], pct(0), range(2, 5), true],
    ['inside, where maxUnhealthy (1) alone would refuse', [A, C, C, C], count(1), range(2, 5), true],
    ['at the upper bound', [A, C, C, C, C, C], pct(50), range(2, 5), true],
    ['above the range, where maxUnhealthy (100%) alone would allow', [C, C, C, C, C, C], pct(100), range(2, 5), false],
    ['[0-0]: only while all are healthy (nothing to remediate then)', [A, C], pct(100), range(0, 0), false],
    ['[0-1]', [A, A, C], count(0), range(0, 1), true],
    ['not counted: maintenance and DISABLED', ['INELIGIBLE', 'DISABLED', C, C], count(0), range(2, 2), true],
  ];
  it.each(rows)('%s', (_name, states, max, r, allowed) => {
    const v = judgeStorm('p1', states, max, r);
    expect(v.allowance.allowed).toBe(allowed);
    if (!v.allowance.allowed) expect(v.allowance.reason).toMatch(new RegExp(`^storm protection: \\d+ of \\d+ hosts in p1 are unhealthy, outside unhealthyRange \\[${r.min}-${r.max}\\]`));
  });
});

describe('unhealthyRangeSchema', () => {
  const good: [string, UnhealthyRange][] = [['[2-5]', { min: 2, max: 5 }], ['[0-0]', { min: 0, max: 0 }], ['[3-3]', { min: 3, max: 3 }]];
  it.each(good)('parses %s', (text, want) => expect(unhealthyRangeSchema.parse(text)).toEqual(want));
  it.each(['', '2-5', '[5-2]', '[2-]', '[-5]', '[2 - 5]', '[2-5', '(2-5)', '[a-b]', '[2-5]x'])('refuses %j', (text) => expect(unhealthyRangeSchema.safeParse(text).success).toBe(false));
});

describe('maxUnhealthySchema', () => {
  const good: [string, MaxUnhealthy][] = [['2', count(2)], ['0', count(0)], ['40%', pct(40)], ['100%', pct(100)]];
  it.each(good)('parses %s', (text, want) => expect(maxUnhealthySchema.parse(text)).toEqual(want));
  it.each(['', '-1', '1.5', '101%', '%', '50 %', 'half'])('refuses %j', (text) => expect(maxUnhealthySchema.safeParse(text).success).toBe(false));
});

describe('node-startup timeout (Cluster API nodeStartupTimeout)', () => {
  it('a host past it counts as unhealthy whatever its state, even INELIGIBLE; DISABLED never counts', () => {
    const overdue = (state: HaState) => ({ state, startupOverdue: true });
    const rows: [string, Parameters<typeof judgeStorm>[1], { total: number; unhealthy: number }][] = [
      ['an INELIGIBLE host that never became healthy', [A, A, overdue('INELIGIBLE')], { total: 3, unhealthy: 1 }],
      ['an AVAILABLE one not yet checked healthy', [A, overdue('AVAILABLE')], { total: 2, unhealthy: 1 }],
      ['a DISABLED one', [A, overdue('DISABLED')], { total: 1, unhealthy: 0 }],
      ['plain states as before', [A, 'INELIGIBLE', { state: 'INELIGIBLE', startupOverdue: false }], { total: 1, unhealthy: 0 }],
    ];
    for (const [name, samples, want] of rows) {
      const v = judgeStorm('p1', samples, count(0));
      expect({ name, total: v.total, unhealthy: v.unhealthy }).toEqual({ name, ...want });
    }
  });

  it('the machine marks it once, after the timeout, and forgets it at the first passing health check', () => {
    const s = { ...SETTINGS, nodeStartupTimeoutMs: 100 };
    const c = { settings: s, remediation: { allowed: true } as const };
    const joined = inState('INELIGIBLE', { joinedAt: 0, reportedHealthy: false, health: null });
    expect(step(joined, { type: 'tick' }, 99, c).next.startupOverdue).toBe(false);
    const late = step(joined, { type: 'tick' }, 100, c);
    expect(late.next.startupOverdue).toBe(true);
    expect(late.effects).toEqual([expect.objectContaining({ kind: 'alert', level: 'warn', message: expect.stringContaining('has not reported healthy within the node-startup timeout (100 ms)') })]);
    expect(step(late.next, { type: 'tick' }, 200, c).effects).toEqual([]);
    // Eligible at last, and its first health check passes.
    const avail = { ...late.next, state: 'AVAILABLE' as const, health: { token: 99, startedAt: 200, deadline: 300 } };
    const healthy = step(avail, { type: 'healthResult', token: 99, outcome: 'healthy', detail: 'ok' }, 201, c).next;
    expect(healthy).toMatchObject({ reportedHealthy: true, startupOverdue: false });
    // A host that reported healthy once is never held to it again.
    expect(step({ ...healthy, state: 'INELIGIBLE', health: null }, { type: 'tick' }, 10_000, c).next.startupOverdue).toBe(false);
  });
});
