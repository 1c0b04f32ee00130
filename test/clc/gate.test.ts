/**
 * The change gate (clc/core/gate.ts): table-driven steps of the pure machine, a fast-check property
 * over random event sequences (no conflicting grants, waits only on earlier or granted tickets,
 * bounded queues), and the runner (clc/api/partitionGate.ts) on a ManualClock.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PartitionGate, type Ticket } from '../../clc/core/partitionGate.js';
import {
  EMPTY_GATE, GateError, step, waitingByPartition,
  type GateEffect, type GateEvent, type GateKind, type GateLimits, type GateState,
} from '../../clc/core/gate.js';
import { FerryError } from '../../shared/errors/registry.js';
import { ManualClock } from '../../shared/clock.js';

const LIMITS: GateLimits = { maxWaiting: 3, maxWaitMs: 1000 };

const enter = (id: number, kind: GateKind, partitions: string[], label = `#${id}`): GateEvent => ({ type: 'enter', id, kind, label, partitions });
const narrow = (id: number, partitions: string[]): GateEvent => ({ type: 'narrow', id, partitions });
const leave = (id: number): GateEvent => ({ type: 'leave', id });
const tick: GateEvent = { type: 'tick' };

interface Timed { readonly at: number; readonly event: GateEvent }

/** Runs events (each at its time) and returns every effect in order, and the final state. */
function runAll(events: readonly (GateEvent | Timed)[], limits = LIMITS): { effects: GateEffect[]; state: GateState } {
  let state = EMPTY_GATE;
  const effects: GateEffect[] = [];
  for (const e of events) {
    const { at, event } = 'event' in e ? e : { at: 0, event: e };
    const r = step(state, event, at, limits);
    state = r.next;
    effects.push(...r.effects);
  }
  return { effects, state };
}

/** Effects in a compact form: g3 = grant #3, d3@1000 = deadline, r3:timeout = refusal. */
function compact(effects: readonly GateEffect[]): string[] {
  return effects.map((e) => {
    if (e.type === 'grant') return `g${e.id}`;
    if (e.type === 'deadline') return `d${e.id}@${e.at}`;
    return `r${e.id}:${e.reason}`;
  });
}

describe('step: ordering', () => {
  const rows: [string, (GateEvent | Timed)[], string[]][] = [
    ['changes run together', [enter(1, 'change', ['a']), enter(2, 'change', ['a'])], ['g1', 'g2']],
    ['an exclusive alone is granted at once', [enter(1, 'exclusive', ['a'])], ['g1']],
    ['a change waits for a granted exclusive and goes when it leaves',
      [enter(1, 'exclusive', ['a']), enter(2, 'change', ['a']), leave(1)], ['g1', 'd2@1000', 'g2']],
    ['waiting changes are released in arrival order',
      [enter(1, 'exclusive', ['a']), enter(2, 'change', ['a']), enter(3, 'change', ['a']), enter(4, 'change', ['a']), leave(1)],
      ['g1', 'd2@1000', 'd3@1000', 'd4@1000', 'g2', 'g3', 'g4']],
    ['another partition is not held back', [enter(1, 'exclusive', ['a']), enter(2, 'change', ['b'])], ['g1', 'g2']],
    ['an exclusive waits for changes already running, and later changes wait behind it',
      [enter(1, 'change', ['a']), enter(2, 'exclusive', ['a']), enter(3, 'change', ['a']), leave(1), leave(2)],
      ['g1', 'd2@1000', 'd3@1000', 'g2', 'g3']],
    ['exclusives of one partition take turns in arrival order',
      [enter(1, 'exclusive', ['a']), enter(2, 'exclusive', ['a']), enter(3, 'change', ['a']), leave(1), leave(2)],
      ['g1', 'd2@1000', 'd3@1000', 'g2', 'g3']],
    ['a change claiming two partitions waits for an exclusive in either',
      [enter(1, 'exclusive', ['b']), enter(2, 'change', ['a', 'b']), leave(1)], ['g1', 'd2@1000', 'g2']],
    ['narrowing away from the busy partition lets it go',
      [enter(1, 'exclusive', ['b']), enter(2, 'change', ['a', 'b']), narrow(2, ['a'])], ['g1', 'd2@1000', 'g2']],
    ['an exclusive routing across every partition holds later changes only until it narrows',
      [enter(1, 'exclusive', ['a', 'b']), enter(2, 'change', ['a']), enter(3, 'change', ['b']), narrow(1, ['b'])],
      ['g1', 'd2@1000', 'd3@1000', 'g2']],
    ['a waiting exclusive that narrows keeps its place in its own partition',
      [enter(1, 'change', ['a']), enter(2, 'exclusive', ['a', 'b']), enter(3, 'change', ['a']), narrow(2, ['a']), leave(1)],
      ['g1', 'd2@1000', 'd3@1000', 'g2']],
    ['leaving while waiting unblocks those behind',
      [enter(1, 'change', ['a']), enter(2, 'exclusive', ['a']), enter(3, 'change', ['a']), leave(2)],
      ['g1', 'd2@1000', 'd3@1000', 'g3']],
    ['narrowing to nothing grants at once', [enter(1, 'exclusive', ['a']), enter(2, 'change', ['a']), narrow(2, [])], ['g1', 'd2@1000', 'g2']],
    ['leaving twice or unknown tickets changes nothing', [enter(1, 'change', ['a']), leave(1), leave(1), leave(9)], ['g1']],
  ];
  it.each(rows)('%s', (_n, events, expected) => {
    expect(compact(runAll(events).effects)).toEqual(expected);
  });
});

describe('step: bounds', () => {
  it('refuses one more than maxWaiting at once, naming what holds it back', () => {
    const { effects, state } = runAll([
      enter(1, 'exclusive', ['a'], 'DisableService of node 127.0.12.11'),
      enter(2, 'change', ['a']), enter(3, 'change', ['a']), enter(4, 'change', ['a']), enter(5, 'change', ['a']),
    ]);
    expect(compact(effects)).toEqual(['g1', 'd2@1000', 'd3@1000', 'd4@1000', 'r5:queue-full']);
    expect(effects.at(-1)).toMatchObject({ partition: 'a', blockedBy: 'DisableService of node 127.0.12.11 is pending' });
    expect(waitingByPartition(state).get('a')).toBe(3);
  });

  it('counts waiting per partition', () => {
    const { effects } = runAll([
      enter(1, 'exclusive', ['a']), enter(2, 'exclusive', ['b']),
      enter(3, 'change', ['a']), enter(4, 'change', ['a']), enter(5, 'change', ['a']), enter(6, 'change', ['b']),
    ]);
    expect(compact(effects).filter((e) => e.startsWith('r'))).toEqual([]);
  });

  it('a ticket that need not wait is granted even when the queue is full', () => {
    const { effects } = runAll([
      enter(1, 'exclusive', ['a', 'b']), enter(2, 'change', ['b']), enter(3, 'change', ['b']), enter(4, 'change', ['b']),
      narrow(1, ['a']), enter(5, 'change', ['b']),
    ]);
    expect(compact(effects).slice(-1)).toEqual(['g5']);
  });

  const timeouts: [string, (GateEvent | Timed)[], string[]][] = [
    ['not yet at the deadline', [enter(1, 'exclusive', ['a']), enter(2, 'change', ['a']), { at: 999, event: tick }], ['g1', 'd2@1000']],
    ['refused at the deadline', [enter(1, 'exclusive', ['a']), enter(2, 'change', ['a']), { at: 1000, event: tick }], ['g1', 'd2@1000', 'r2:timeout']],
    ['a timed-out exclusive lets the changes behind it go',
      [enter(1, 'change', ['a']), enter(2, 'exclusive', ['a']), { at: 500, event: enter(3, 'change', ['a']) }, { at: 1000, event: tick }],
      ['g1', 'd2@1000', 'd3@1500', 'r2:timeout', 'g3']],
    ['only the overdue ones go',
      [enter(1, 'exclusive', ['a']), enter(2, 'change', ['a']), { at: 600, event: enter(3, 'change', ['a']) }, { at: 1200, event: tick }, { at: 1200, event: leave(1) }],
      ['g1', 'd2@1000', 'd3@1600', 'r2:timeout', 'g3']],
    ['a granted ticket never times out', [enter(1, 'exclusive', ['a']), { at: 5000, event: tick }], ['g1']],
  ];
  it.each(timeouts)('timeout: %s', (_n, events, expected) => {
    expect(compact(runAll(events).effects)).toEqual(expected);
  });

  it('a timeout names what held the ticket back', () => {
    const { effects } = runAll([enter(1, 'change', ['a'], 'RunInstances of 1 m1.small'), enter(2, 'exclusive', ['a'], 'MigrateInstances draining node 127.0.12.11'),
      enter(3, 'change', ['a']), { at: 1000, event: tick }]);
    expect(effects.filter((e) => e.type === 'refuse')).toEqual([
      { type: 'refuse', id: 2, reason: 'timeout', partition: 'a', blockedBy: 'RunInstances of 1 m1.small is pending' },
      { type: 'refuse', id: 3, reason: 'timeout', partition: 'a', blockedBy: 'MigrateInstances draining node 127.0.12.11 waits ahead' },
    ]);
  });
});

describe('step: illegal events', () => {
  it.each([
    ['entering twice', [enter(1, 'change', ['a']), enter(1, 'change', ['a'])]],
    ['narrowing after leaving', [enter(1, 'change', ['a']), leave(1), narrow(1, ['a'])]],
    ['widening a claim', [enter(1, 'change', ['a']), narrow(1, ['a', 'b'])]],
  ] as [string, GateEvent[]][])('%s is a GateError', (_n, events) => {
    expect(() => runAll(events)).toThrow(GateError);
  });
});

describe('step: properties', () => {
  const partitions = ['a', 'b', 'c'];
  const eventArb = fc.oneof(
    fc.record({
      type: fc.constant('enter' as const), kind: fc.constantFrom<GateKind>('change', 'exclusive'),
      partitions: fc.subarray(partitions, { minLength: 1 }),
    }),
    fc.record({ type: fc.constant('narrow' as const), pick: fc.nat(), keep: fc.subarray(partitions) }),
    fc.record({ type: fc.constant('leave' as const), pick: fc.nat() }),
    fc.record({ type: fc.constant('tick' as const), advance: fc.integer({ min: 0, max: 700 }) }),
  );

  function checkInvariants(state: GateState): void {
    const order = new Map(state.tickets.map((t, i) => [t.id, i]));
    for (const p of partitions) {
      const granted = state.tickets.filter((t) => t.granted && t.partitions.includes(p));
      // Never an exclusive beside anything else in one partition.
      if (granted.some((t) => t.kind === 'exclusive')) expect(granted).toHaveLength(1);
      expect(state.tickets.filter((t) => !t.granted && t.partitions.includes(p)).length).toBeLessThanOrEqual(LIMITS.maxWaiting);
    }
    for (const t of state.tickets.filter((x) => !x.granted)) {
      // A waiting ticket is held back by a granted or an earlier ticket, never by a later waiting one: no deadlock.
      const holders = state.tickets.filter((o) => o.id !== t.id && o.partitions.some((p) => t.partitions.includes(p))
        && (t.kind === 'exclusive' || o.kind === 'exclusive') && (o.granted || (order.get(o.id) ?? 0) < (order.get(t.id) ?? 0)));
      expect(holders.length).toBeGreaterThan(0);
    }
    for (const t of state.tickets.filter((x) => x.granted)) {
      // Arrival order: nothing was granted past an earlier ticket it conflicts with that still waits.
      const skipped = state.tickets.filter((o) => !o.granted && (order.get(o.id) ?? 0) < (order.get(t.id) ?? 0)
        && o.partitions.some((p) => t.partitions.includes(p)) && (t.kind === 'exclusive' || o.kind === 'exclusive'));
      expect(skipped).toEqual([]);
    }
  }

  it('no conflicting grants, bounded queues, and every wait points back in time', () => {
    fc.assert(fc.property(fc.array(eventArb, { maxLength: 60 }), (raw) => {
      let state = EMPTY_GATE;
      let now = 0;
      let id = 0;
      for (const r of raw) {
        let event: GateEvent;
        const live = state.tickets;
        if (r.type === 'enter') event = enter(++id, r.kind, r.partitions);
        else if (r.type === 'tick') {
          now += r.advance;
          event = tick;
        } else {
          const t = live[r.pick % Math.max(1, live.length)];
          if (!t) continue;
          event = r.type === 'leave' ? leave(t.id) : narrow(t.id, t.partitions.filter((p) => r.keep.includes(p)));
        }
        const out = step(state, event, now, LIMITS);
        // Every granted ticket is reported once, and only tickets that were waiting are granted.
        for (const e of out.effects) if (e.type === 'grant') expect(state.tickets.find((t) => t.id === e.id)?.granted ?? false).toBe(false);
        state = out.next;
        checkInvariants(state);
      }
      // Once every granted ticket leaves, repeatedly, all that wait are let through.
      for (let guard = 0; guard < 200 && state.tickets.length > 0; guard++) {
        const g = state.tickets.find((t) => t.granted);
        expect(g, 'something waits while nothing is granted').toBeDefined();
        state = step(state, leave((g as { id: number }).id), now, LIMITS).next;
      }
      expect(state.tickets).toEqual([]);
    }), { numRuns: 300 });
  });
});

describe('PartitionGate (runner)', () => {
  const gateOn = (clock: ManualClock, limits: GateLimits = LIMITS) => new PartitionGate({ clock, limits });

  it('resolves waiting tickets in arrival order once the exclusive leaves', async () => {
    const gate = gateOn(new ManualClock(0));
    const order: string[] = [];
    const x = gate.enter('exclusive', 'DisableService of node 127.0.12.11', ['a']);
    await x.ready();
    const waits = [1, 2, 3].map((n) => gate.enter('change', `change ${n}`, ['a']).ready().then(() => { order.push(`change ${n}`); }));
    await Promise.resolve();
    expect(order).toEqual([]);
    expect(gate.waiting('a')).toBe(3);
    order.push('exclusive replied');
    x.leave();
    await Promise.all(waits);
    expect(order).toEqual(['exclusive replied', 'change 1', 'change 2', 'change 3']);
    expect(gate.waiting()).toBe(0);
  });

  it('refuses with PartitionBusy after maxWaitMs on the injected clock, and not before', async () => {
    const clock = new ManualClock(0);
    const gate = gateOn(clock);
    gate.enter('exclusive', 'MigrateInstances draining node 127.0.12.11', ['a']);
    let outcome: unknown = 'waiting';
    const w = gate.enter('change', 'RunInstances', ['a']).ready().then(() => { outcome = 'granted'; }, (e: unknown) => { outcome = e; });
    clock.advance(999);
    await Promise.resolve();
    expect(outcome).toBe('waiting');
    clock.advance(1);
    await w;
    expect(outcome).toBeInstanceOf(FerryError);
    expect(outcome).toMatchObject({ code: 'PartitionBusy', status: 503, retryable: true, fields: { partition: 'a', reason: 'timeout' } });
    expect((outcome as FerryError).message).toBe(
      'Partition a is busy (MigrateInstances draining node 127.0.12.11 is pending); the request was not run: it waited 1000 ms; retry later');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('refuses at once when the queue is full', async () => {
    const gate = gateOn(new ManualClock(0), { maxWaiting: 1, maxWaitMs: 1000 });
    gate.enter('exclusive', 'X', ['a']);
    const first = gate.enter('change', 'C1', ['a']).ready();
    await expect(gate.enter('change', 'C2', ['a']).ready()).rejects.toMatchObject({ code: 'PartitionBusy', fields: { reason: 'queue-full' } });
    expect(gate.waiting('a')).toBe(1);
    void first.catch(() => {});
  });

  it('a granted ticket cancels its deadline; a ticket that leaves while waiting frees its place', async () => {
    const clock = new ManualClock(0);
    const gate = gateOn(clock);
    const x = gate.enter('exclusive', 'X', ['a']);
    const c = gate.enter('change', 'C', ['a']);
    expect(clock.pendingTimers()).toBe(1);
    x.leave();
    await c.ready();
    expect(clock.pendingTimers()).toBe(0);
    expect(c.holds('a')).toBe(true);
    expect(c.holds('b')).toBe(false);
    c.leave();
    expect(c.holds('a')).toBe(false);

    const y = gate.enter('exclusive', 'Y', ['a']);
    const d = gate.enter('change', 'D', ['a']);
    d.leave();
    expect(gate.waiting('a')).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    y.leave();
  });

  it('changes that queued send in the order they queued, whatever order their reads finish in', async () => {
    const gate = gateOn(new ManualClock(0));
    const x = gate.enter('exclusive', 'X', ['a']);
    const [c1, c2, c3] = ['C1', 'C2', 'C3'].map((l) => gate.enter('change', l, ['a'])) as [Ticket, Ticket, Ticket];
    x.leave();
    await Promise.all([c1.ready(), c2.ready(), c3.ready()]);
    const sent: string[] = [];
    const third = c3.sendTurn('a').then(() => sent.push('C3'));
    const second = c2.sendTurn('a').then(() => sent.push('C2'));
    await Promise.resolve();
    expect(sent).toEqual([]);
    await c1.sendTurn('a');
    sent.push('C1');
    await Promise.all([second, third]);
    expect(sent).toEqual(['C1', 'C2', 'C3']);
  });

  it('an earlier queued change that leaves without sending, or narrows away, gives up its turn', async () => {
    const gate = gateOn(new ManualClock(0));
    const x = gate.enter('exclusive', 'X', ['a', 'b']);
    const c1 = gate.enter('change', 'C1', ['a', 'b']);
    const c2 = gate.enter('change', 'C2', ['a', 'b']);
    const c3 = gate.enter('change', 'C3', ['a']);
    x.leave();
    await Promise.all([c1.ready(), c2.ready(), c3.ready()]);
    let done = false;
    const last = c3.sendTurn('a').then(() => { done = true; });
    c1.narrow(['b']);
    await Promise.resolve();
    expect(done).toBe(false);
    c2.leave();
    await last;
    expect(done).toBe(true);
  });

  it('a change that never queued never waits for its turn', async () => {
    const gate = gateOn(new ManualClock(0));
    const x = gate.enter('exclusive', 'X', ['a']);
    const queued = gate.enter('change', 'C1', ['a']);
    x.leave();
    await queued.ready();
    const late = gate.enter('change', 'C2', ['a']);
    await late.ready();
    await late.sendTurn('a');
    expect(late.holds('a')).toBe(true);
  });

  it('ready(partitions) narrows before waiting', async () => {
    const gate = gateOn(new ManualClock(0));
    gate.enter('exclusive', 'X', ['b']);
    const c = gate.enter('change', 'C', ['a', 'b']);
    await c.ready(['a']);
    expect(c.holds('a')).toBe(true);
  });

  it('a refused ticket that nobody awaits is not an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const note = (e: unknown): void => { unhandled.push(e); };
    process.on('unhandledRejection', note);
    try {
      const clock = new ManualClock(0);
      const gate = gateOn(clock);
      gate.enter('exclusive', 'X', ['a']);
      const c = gate.enter('change', 'C', ['a']);
      clock.advance(1000);
      // Node reports a rejection nobody handled once the microtasks have run: one turn of the event loop.
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
      c.leave();
      c.narrow(['a']);
      expect(gate.waiting()).toBe(0);
    } finally {
      process.off('unhandledRejection', note);
    }
  });
});
