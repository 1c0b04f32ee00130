/** CC replicas (cc/replicas.ts): a follower serves reads and refuses changes naming the leader; NC changes carry this term's epoch. */
import { describe, expect, it } from 'vitest';
import { StoreErrors } from '../../shared/store/errors.js';
import { CC_READ_OPS, leaderOnly, replicaReport, SOLE_CC, stampEpochs, type CcLeadership } from '../../cc/replicas.js';
import { namedLeaderOf } from '../../shared/leader/leaderRouting.js';
import { CC_EPOCH_OPS, CC_OPS, type CcOp } from '../../shared/protocol/ccProtocol.js';
import { NC_CHANGE_OPS } from '../../shared/protocol/leaderEpoch.js';
import { NC_OPS } from '../../shared/protocol/ncProtocol.js';
import type { WireHandlers, WireTransport } from '../../shared/wire/transport.js';
import type { WireObject } from '../../shared/wire/xmlCodec.js';

const SELF = 'http://127.0.96.2:19861';
const LEADER = 'http://127.0.96.1:19860';

function leadership(leading: boolean, epoch?: string): CcLeadership {
  return { leading: () => leading, leaderUrl: () => (leading ? SELF : LEADER), epoch: () => (leading ? epoch : undefined), self: SELF };
}

describe('leaderOnly', () => {
  const served: string[] = [];
  const handlers: WireHandlers = Object.fromEntries(Object.keys(CC_OPS).map((op) => [op, () => { served.push(op); return Promise.resolve({}); }]));
  const ctx = { peer: '127.0.96.10' };

  it('on a follower: reads are served, every other operation is NotLeader naming the leader, and nothing runs', async () => {
    const h = leaderOnly(handlers, leadership(false), 'cluster01');
    served.length = 0;
    for (const op of Object.keys(CC_OPS)) {
      if (CC_READ_OPS.has(op as never)) {
        await h[op]!({}, ctx);
      } else {
        const e = await h[op]!({}, ctx).then(() => undefined, (x: unknown) => x);
        expect(e, op).toMatchObject({ code: 'NotLeader', status: 503, fields: { partition: 'cluster01', replica: SELF } });
        expect(namedLeaderOf((e as Error).message)).toBe(LEADER);
      }
    }
    expect(served.sort()).toEqual([...CC_READ_OPS].sort());
  });

  it('on the leader (and the sole CC) everything is served', async () => {
    for (const l of [leadership(true, '5'), SOLE_CC]) {
      const h = leaderOnly(handlers, l, 'cluster01');
      served.length = 0;
      for (const op of Object.keys(CC_OPS)) await h[op]!({}, ctx);
      expect(served.length).toBe(Object.keys(CC_OPS).length);
    }
  });
});

/**
 * The CC's own leadership check (issue 21): a leader proves with etcd that it still leads before a
 * change from the CLC starts, as the CLC does before its own. A hand-written fake of the election's
 * confirm() (EtcdElection.confirm: one quorum read), which counts its calls and answers as told.
 */
describe('leaderOnly: the leadership check before a change', () => {
  const served: string[] = [];
  const handlers: WireHandlers = Object.fromEntries(Object.keys(CC_OPS).map((op) => [op, () => { served.push(op); return Promise.resolve({}); }]));
  const ctx = { peer: '127.0.96.10' };
  const ETCD = 'etcd:it/cc/cluster01/election/';

  function checked(answer: () => Promise<void>): CcLeadership & { checks: number } {
    const l = {
      checks: 0, leading: () => true, leaderUrl: () => SELF, epoch: () => '7', self: SELF,
      confirm: () => { l.checks++; return answer(); },
    };
    return l;
  }

  it('a change from the CLC is served after one check; reads and an NC\'s hint need none', async () => {
    const l = checked(() => Promise.resolve());
    const h = leaderOnly(handlers, l, 'cluster01');
    served.length = 0;
    for (const op of Object.keys(CC_OPS)) await h[op]!({}, ctx);
    expect(served.length).toBe(Object.keys(CC_OPS).length);
    expect(l.checks).toBe(CC_EPOCH_OPS.size);
    expect(CC_EPOCH_OPS.has('ccNodeEvent')).toBe(false);
  });

  it.each<[string, () => Error, string, number]>([
    ['etcd without quorum (StoreUnavailable)', () => StoreErrors.make('StoreUnavailable', { file: ETCD, timeoutMs: 3000, detail: 'leadership check: deadline passed' }), 'LeadershipUnconfirmed', 503],
    ['its key gone (StoreNotLeader)', () => StoreErrors.make('StoreNotLeader', { file: ETCD, leader: 'none elected' }), 'NotLeader', 503],
  ])('%s: every change refused %s, its handler never run; reads still served', async (_n, fail, code, status) => {
    const l = checked(() => Promise.reject(fail()));
    const h = leaderOnly(handlers, l, 'cluster01');
    served.length = 0;
    for (const op of CC_EPOCH_OPS) {
      const e = await h[op]!({}, ctx).then(() => undefined, (x: unknown) => x);
      expect(e, op).toMatchObject({ code, status, fields: { partition: 'cluster01', replica: SELF } });
      if (code === 'LeadershipUnconfirmed') expect((e as Error).message).toContain(ETCD);
    }
    expect(served).toEqual([]);
    for (const op of CC_READ_OPS) await h[op]!({}, ctx);
    expect(served.sort()).toEqual([...CC_READ_OPS].sort());
  });

  it('a foreign failure of the check passes unchanged (the wire reports it as our bug)', async () => {
    const h = leaderOnly(handlers, checked(() => Promise.reject(new TypeError('boom'))), 'cluster01');
    await expect(h['ccModifyNode' satisfies CcOp]!({}, ctx)).rejects.toThrow('boom');
  });
});

describe('replicaReport (ccDescribeReplica)', () => {
  it.each<[string, CcLeadership, unknown]>([
    ['the leader: leading, its epoch, itself as leader', leadership(true, '9'), { partition: 'cluster01', self: SELF, leading: true, leaderUrl: SELF, epoch: '9' }],
    ['a follower: not leading, no epoch, the leader it observes', leadership(false), { partition: 'cluster01', self: SELF, leading: false, leaderUrl: LEADER }],
    ['the sole CC: leads with epoch 0, names nobody', SOLE_CC, { partition: 'cluster01', self: 'this CC', leading: true, epoch: '0' }],
    ['a replica while none is elected', { leading: () => false, leaderUrl: () => undefined, epoch: () => undefined, self: SELF }, { partition: 'cluster01', self: SELF, leading: false }],
  ])('%s', (_, l, expected) => {
    const r = replicaReport(l, 'cluster01');
    expect(r).toEqual(expected);
    expect(CC_OPS.ccDescribeReplica.response.safeParse(r).success).toBe(true);
  });

  it('is served by a follower (a read)', () => {
    expect(CC_READ_OPS.has('ccDescribeReplica')).toBe(true);
  });
});

describe('stampEpochs', () => {
  function recorder(): WireTransport & { calls: { operation: string; body: WireObject }[] } {
    const calls: { operation: string; body: WireObject }[] = [];
    return { calls, call: (_e, operation, body) => { calls.push({ operation, body }); return Promise.resolve({}); } };
  }

  it('adds this term\'s epoch to every NC change and to no read', async () => {
    const t = recorder();
    const s = stampEpochs(t, leadership(true, '123'), 'cluster01');
    for (const op of Object.keys(NC_OPS)) await s.call('http://127.0.96.31:19870', op, { a: 1 });
    for (const c of t.calls) expect(c.body, c.operation).toEqual(NC_CHANGE_OPS.has(c.operation) ? { a: 1, leaderEpoch: '123' } : { a: 1 });
  });

  it('the sole CC sends "0"', async () => {
    const t = recorder();
    await stampEpochs(t, SOLE_CC, 'cluster01').call('u', 'ncModifyNode', { stateName: 'disabled' });
    expect(t.calls[0]?.body).toEqual({ stateName: 'disabled', leaderEpoch: '0' });
  });

  it('a replica that does not lead sends no change (NotLeader) but still reads', async () => {
    const t = recorder();
    const s = stampEpochs(t, leadership(false), 'cluster01');
    await expect(s.call('u', 'ncMigrateInstances', {})).rejects.toMatchObject({ code: 'NotLeader' });
    await s.call('u', 'ncDescribeResource', {});
    expect(t.calls.map((c) => c.operation)).toEqual(['ncDescribeResource']);
  });
});
