import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PendingConnections, type PendingLimits } from '../../../shared/net/pendingConnections.js';

type Step =
  | ['open', string, string]
  | ['identify', string, string]
  | ['receive', string]
  | ['answer', string, boolean]
  | ['close', string];

/** Runs steps on connections named by strings; returns the names closed by the caps, in order. */
function run(limits: PendingLimits, steps: readonly Step[]): { closed: string[]; core: PendingConnections<string> } {
  const core = new PendingConnections<string>(limits);
  const closed: string[] = [];
  for (const s of steps) {
    const out = s[0] === 'open' ? core.opened(s[1], s[2])
      : s[0] === 'identify' ? core.identified(s[1], s[2])
        : s[0] === 'answer' ? core.answered(s[1], s[2])
          : (s[0] === 'receive' ? core.received(s[1]) : core.closed(s[1]), []);
    closed.push(...out.map((e) => `${e.conn}:${e.reason}`));
  }
  return { closed, core };
}

const open = (conn: string, peer: string): Step => ['open', conn, peer];

describe('PendingConnections', () => {
  it.each<[string, PendingLimits, Step[], string[]]>([
    ['under the caps nothing is closed', { maxPending: 3, maxPendingPerPeer: 3 }, [open('a', 'x'), open('b', 'x'), open('c', 'y')], []],
    ['past the total the oldest goes, never the newcomer', { maxPending: 2, maxPendingPerPeer: 2 }, [open('a', 'x'), open('b', 'y'), open('c', 'z')], ['a:total']],
    ['past a peer\'s cap that peer\'s oldest goes', { maxPending: 10, maxPendingPerPeer: 2 }, [open('a', 'x'), open('b', 'y'), open('c', 'x'), open('d', 'x')], ['a:peer']],
    ['past the total the peer holding the most loses, not the oldest overall',
      { maxPending: 4, maxPendingPerPeer: 4 }, [open('admin', 'x'), open('f1', 'y'), open('f2', 'y'), open('f3', 'y'), open('f4', 'y')], ['f1:total']],
    ['a connection being served is never closed', { maxPending: 1, maxPendingPerPeer: 1 },
      [open('a', 'x'), ['receive', 'a'], open('b', 'x'), open('c', 'x')], ['b:peer']],
    ['an answered connection is pending again, and makes room like a newcomer', { maxPending: 2, maxPendingPerPeer: 2 },
      [open('a', 'x'), ['receive', 'a'], open('b', 'x'), open('c', 'x'), ['answer', 'a', false]], ['b:peer']],
    ['regulars (answered with a success) go only when no stranger is pending', { maxPending: 2, maxPendingPerPeer: 2 },
      [open('admin', 'x'), ['receive', 'admin'], ['answer', 'admin', true], open('f1', 'x'), open('f2', 'x'), open('f3', 'x')], ['f1:peer', 'f2:peer']],
    ['with only regulars pending, the oldest regular goes', { maxPending: 2, maxPendingPerPeer: 2 },
      [open('a', 'x'), ['receive', 'a'], ['answer', 'a', true], open('b', 'x'), ['receive', 'b'], ['answer', 'b', true], open('c', 'x')], ['a:peer']],
    ['a TLS peer named by its certificate counts under that name', { maxPending: 10, maxPendingPerPeer: 2 },
      [open('a', '127.0.0.1'), open('b', '127.0.0.1'), ['identify', 'a', 'nc 127.0.1.1'], ['identify', 'b', 'nc 127.0.1.1'], open('c', '127.0.0.1'), open('d', '127.0.0.1'), ['identify', 'c', 'nc 127.0.1.1']], ['a:peer']],
    ['closing forgets; closing again or an unknown one is a no-op', { maxPending: 1, maxPendingPerPeer: 1 },
      [open('a', 'x'), ['close', 'a'], ['close', 'a'], ['close', 'zz'], open('b', 'x')], []],
    ['a second request on a connection keeps it served until both are answered', { maxPending: 1, maxPendingPerPeer: 1 },
      [open('a', 'x'), ['receive', 'a'], ['receive', 'a'], ['answer', 'a', true], open('b', 'y'), open('c', 'y')], ['b:peer']],
  ])('%s', (_name, limits, steps, closed) => {
    expect(run(limits, steps).closed).toEqual(closed);
  });

  it('counts pending and open connections', () => {
    const { core } = run({ maxPending: 5, maxPendingPerPeer: 5 }, [open('a', 'x'), open('b', 'x'), ['receive', 'b'], open('c', 'y')]);
    expect([core.pending, core.open, core.pendingOf('x'), core.pendingOf('y')]).toEqual([2, 3, 1, 1]);
  });

  it('refuses caps below 1', () => {
    expect(() => new PendingConnections({ maxPending: 0, maxPendingPerPeer: 1 })).toThrow(RangeError);
  });

  it('keeps within both caps whatever happens, and never closes a connection being served or the newcomer', () => {
    const conn = fc.integer({ min: 0, max: 30 }).map((i) => `c${i}`);
    const peer = fc.constantFrom('a', 'b', 'c', 'nc 1');
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.tuple(fc.constant('open' as const), conn, peer),
      fc.tuple(fc.constant('identify' as const), conn, peer),
      fc.tuple(fc.constant('receive' as const), conn),
      fc.tuple(fc.constant('answer' as const), conn, fc.boolean()),
      fc.tuple(fc.constant('close' as const), conn),
    );
    fc.assert(fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 6 }), fc.array(step, { maxLength: 80 }), (max, per, steps) => {
      const limits = { maxPending: max, maxPendingPerPeer: Math.min(per, max) };
      const core = new PendingConnections<string>(limits);
      const serving = new Map<string, number>();
      const known = new Set<string>();
      for (const s of steps) {
        let out: { conn: string }[] = [];
        if (s[0] === 'open') {
          out = core.opened(s[1], s[2]);
          expect(out.map((e) => e.conn)).not.toContain(s[1]);
          known.add(s[1]);
        } else if (s[0] === 'identify') out = core.identified(s[1], s[2]);
        else if (s[0] === 'receive') {
          core.received(s[1]);
          if (known.has(s[1])) serving.set(s[1], (serving.get(s[1]) ?? 0) + 1);
        } else if (s[0] === 'answer') {
          out = core.answered(s[1], s[2]);
          const n = serving.get(s[1]) ?? 0;
          if (n > 1) serving.set(s[1], n - 1);
          else serving.delete(s[1]);
        } else {
          core.closed(s[1]);
          known.delete(s[1]);
          serving.delete(s[1]);
        }
        for (const e of out) {
          expect(serving.has(e.conn)).toBe(false);
          known.delete(e.conn);
        }
        expect(core.pending).toBeLessThanOrEqual(limits.maxPending);
        for (const p of ['a', 'b', 'c', 'nc 1']) expect(core.pendingOf(p)).toBeLessThanOrEqual(limits.maxPendingPerPeer);
        expect(core.open).toBe(known.size);
      }
    }));
  });
});
