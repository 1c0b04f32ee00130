/** Sending to the leading replica (shared/leader/leaderRouting.ts): NotLeader and refused connections move on; anything else is the caller's. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LeaderRoute, namedLeaderOf, notLeaderText, wireRouteFailure } from '../../shared/leader/leaderRouting.js';
import { WireErrors } from '../../shared/wire/errors.js';

const A = 'http://127.0.96.1:19860';
const B = 'http://127.0.96.2:19861';
const C = 'http://127.0.96.3:19862';

const notLeader = (leader?: string) => WireErrors.make('RemoteFault', {
  peer: 'cc', operation: 'ccModifyNode', remoteCode: 'NotLeader', remoteMessage: `CC replica x of partition p does not lead: ${notLeaderText('x', leader)}`,
});
const refused = () => WireErrors.make('PeerUnreachable', { peer: 'cc', detail: 'ECONNREFUSED' });
const reset = () => WireErrors.make('PeerUnreachable', { peer: 'cc', detail: 'ECONNRESET' });
const otherFault = () => WireErrors.make('RemoteFault', { peer: 'cc', operation: 'op', remoteCode: 'NodeNotFound', remoteMessage: 'no' });

/** Answers per URL from a table: an Error is thrown, anything else returned. */
function replicas(table: Record<string, unknown>): { attempt: (url: string) => Promise<unknown>; tried: string[] } {
  const tried: string[] = [];
  return {
    tried,
    attempt: (url) => {
      tried.push(url);
      const v = table[url];
      return v instanceof Error ? Promise.reject(v) : Promise.resolve(v);
    },
  };
}

describe('NotLeader messages name the leader', () => {
  it('round-trips any http(s) origin', () => {
    fc.assert(fc.property(fc.webUrl({ withQueryParameters: false, withFragments: false }), (u) => {
      const origin = new URL(u).origin;
      expect(namedLeaderOf(`replica r does not lead: ${notLeaderText('r', origin)}`)).toBe(origin);
    }));
  });

  it('names none while no leader is elected, or when the leader is the replica itself', () => {
    expect(namedLeaderOf(notLeaderText(A, undefined))).toBeUndefined();
    expect(namedLeaderOf(notLeaderText(A, A))).toBeUndefined();
  });

  it.each([
    ['NotLeader naming B', notLeader(B), { kind: 'notLeader', leader: B }],
    ['NotLeader naming none', notLeader(undefined), { kind: 'notLeader' }],
    ['a refused connection', refused(), { kind: 'notDelivered' }],
    ['a reset connection (may have arrived)', reset(), { kind: 'final' }],
    ['another refusal', otherFault(), { kind: 'final' }],
    ['not a coded error', new Error('bug'), { kind: 'final' }],
  ])('%s is %j', (_n, e, expected) => {
    expect(wireRouteFailure(e)).toEqual(expected);
  });
});

describe('LeaderRoute', () => {
  it('follows the named leader, then sends there first', async () => {
    const r = new LeaderRoute([A, B, C]);
    const first = replicas({ [A]: notLeader(C), [B]: 'b', [C]: 'c' });
    await expect(r.send(first.attempt)).resolves.toBe('c');
    expect(first.tried).toEqual([A, C]);
    expect(r.current()).toBe(C);
    const second = replicas({ [A]: 'a', [B]: 'b', [C]: 'c' });
    await expect(r.send(second.attempt)).resolves.toBe('c');
    expect(second.tried).toEqual([C]);
  });

  it('moves to the next URL on a refused connection or a NotLeader naming nobody known', async () => {
    const r = new LeaderRoute([A, B, C]);
    const s = replicas({ [A]: refused(), [B]: notLeader('http://127.0.96.9:1'), [C]: 'c' });
    await expect(r.send(s.attempt)).resolves.toBe('c');
    expect(s.tried).toEqual([A, B, C]);
  });

  it('gives any other failure to the caller at once (a reset may have arrived: not sent twice)', async () => {
    const r = new LeaderRoute([A, B]);
    const s = replicas({ [A]: reset(), [B]: 'b' });
    await expect(r.send(s.attempt)).rejects.toMatchObject({ code: 'PeerUnreachable', fields: { detail: 'ECONNRESET' } });
    expect(s.tried).toEqual([A]);
  });

  it('tries each URL once and rejects with the last failure when none leads', async () => {
    const r = new LeaderRoute([A, B]);
    const s = replicas({ [A]: notLeader(B), [B]: notLeader(A) });
    await expect(r.send(s.attempt)).rejects.toMatchObject({ code: 'RemoteFault', fields: { remoteCode: 'NotLeader' } });
    expect(s.tried).toEqual([A, B]);
    expect(r.current()).toBe(A);
  });

  it('with one URL behaves as a plain call', async () => {
    const r = new LeaderRoute([A]);
    const s = replicas({ [A]: refused() });
    await expect(r.send(s.attempt)).rejects.toMatchObject({ code: 'PeerUnreachable' });
    expect(s.tried).toEqual([A]);
  });
});
