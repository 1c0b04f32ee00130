import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, type TimerHandle } from '../../shared/clock.js';

describe('ManualClock', () => {
  it('fires timers in time order, ties in creation order, with now() at the due time', () => {
    const c = new ManualClock(1000);
    const seen: string[] = [];
    c.setTimer(50, () => seen.push(`b@${c.now()}`));
    c.setTimer(10, () => seen.push(`a@${c.now()}`));
    c.setTimer(50, () => seen.push(`c@${c.now()}`));
    const cancelled = c.setTimer(20, () => seen.push('never'));
    cancelled.cancel();
    c.advance(49);
    expect(seen).toEqual(['a@1010']);
    c.advance(1);
    expect(seen).toEqual(['a@1010', 'b@1050', 'c@1050']);
    expect(c.now()).toBe(1050);
  });

  it('fires timers scheduled by timers within the same advance', () => {
    const c = new ManualClock();
    let fired = 0;
    const tick = (): void => { fired++; if (fired < 5) c.setTimer(10, tick); };
    c.setTimer(10, tick);
    c.advance(100);
    expect(fired).toBe(5);
    expect(c.pendingTimers()).toBe(0);
  });

  it('says when the next live timer is due (the simulator steps to it)', () => {
    const c = new ManualClock(100);
    expect(c.nextTimerAt()).toBeUndefined();
    const early = c.setTimer(5, () => undefined);
    c.setTimer(20, () => undefined);
    expect(c.nextTimerAt()).toBe(105);
    early.cancel();
    expect(c.nextTimerAt()).toBe(120);
    c.advance(20);
    expect(c.nextTimerAt()).toBeUndefined();
  });

  it('fires exactly as a sorted list would, for any mix of timers, cancels, nested timers and advances (heap property)', () => {
    type Op = { kind: 'set'; ms: number; nested: number } | { kind: 'cancel'; pick: number } | { kind: 'advance'; ms: number };
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), ms: fc.integer({ min: 0, max: 50 }), nested: fc.integer({ min: -1, max: 20 }) }),
      fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 }) }),
    );
    /** The reference: every pending timer in a list, sorted on each step. */
    const reference = (ops: readonly Op[]): string[] => {
      let now = 0;
      let seq = 0;
      const timers: { at: number; seq: number; name: string; nested: number; cancelled: boolean }[] = [];
      const log: string[] = [];
      const set = (ms: number, name: string, nested: number) => timers.push({ at: now + ms, seq: seq++, name, nested, cancelled: false });
      ops.forEach((o, i) => {
        if (o.kind === 'set') set(o.ms, `t${i}`, o.nested);
        else if (o.kind === 'cancel') { const live = timers.filter((t) => !t.cancelled); const t = live[o.pick % Math.max(1, live.length)]; if (t) t.cancelled = true; }
        else {
          const target = now + o.ms;
          for (;;) {
            const due = timers.filter((t) => !t.cancelled && t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
            if (!due) break;
            due.cancelled = true;
            now = due.at;
            log.push(`${due.name}@${now}`);
            if (due.nested >= 0) set(due.nested, `${due.name}'`, -1);
          }
          now = target;
        }
      });
      return [...log, `pending ${timers.filter((t) => !t.cancelled).length}`];
    };
    const actual = (ops: readonly Op[]): string[] => {
      const c = new ManualClock(0);
      const handles: { h: TimerHandle; fired: boolean; cancelled: boolean }[] = [];
      const log: string[] = [];
      const set = (ms: number, name: string, nested: number) => {
        const entry: { h: TimerHandle; fired: boolean; cancelled: boolean } = { h: { cancel: () => undefined }, fired: false, cancelled: false };
        entry.h = c.setTimer(ms, () => {
          entry.fired = true;
          log.push(`${name}@${c.now()}`);
          if (nested >= 0) set(nested, `${name}'`, -1);
        });
        handles.push(entry);
      };
      ops.forEach((o, i) => {
        if (o.kind === 'set') set(o.ms, `t${i}`, o.nested);
        else if (o.kind === 'cancel') {
          const live = handles.filter((t) => !t.fired && !t.cancelled);
          const t = live[o.pick % Math.max(1, live.length)];
          if (t) { t.cancelled = true; t.h.cancel(); }
        } else c.advance(o.ms);
      });
      return [...log, `pending ${c.pendingTimers()}`];
    };
    fc.assert(fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      expect(actual(ops)).toEqual(reference(ops));
    }), { numRuns: 300 });
  });
});
