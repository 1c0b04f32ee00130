/**
 * RunInstances with a ClientToken, through the admin API (EC2 idempotency, issue 14): a repeat
 * answers with the original reservation and launches nothing, other parameters are refused and
 * change nothing, concurrent repeats launch once, a refused launch frees its token, tokens outlive a
 * CLC restart and are forgotten after their retention.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CLC_ORIGIN, type ActionContext } from '../../clc/api/action.js';
import { runInstances } from '../../clc/api/actions/runInstances.js';
import { parseQueryParams } from '../../clc/api/queryParams.js';
import type { Clusters } from '../../clc/clusters/clusters.js';
import { ClcErrors } from '../../clc/core/errors.js';
import { KeyedMutex } from '../../shared/keyedMutex.js';
import { gatedClusters, openRequestGate } from '../../clc/core/requestGate.js';
import { RUN_TOKEN_RETENTION_MS } from '../../clc/core/runTokens.js';
import { silentLogger } from '../../shared/log.js';
import { signedQuery, testAuthenticator, TEST_ADMIN, TEST_USER } from './authFixtures.js';
import type { FakeClusters } from './fakeClusters.js';
import { counterIds, errorCode, harness, items, query, type Harness, type QueryReply } from './harness.js';

const RUN = { Action: 'RunInstances', ImageId: 'emi-00000001', MinCount: '1', MaxCount: '2', 'Placement.AvailabilityZone': 'cluster01' };

function runCalls(h: Harness): number {
  return h.clusters.calls.filter((c) => c.op === 'ccRunInstances').length;
}

function reservationOf(r: QueryReply): { reservationId: string; ids: string[] } {
  expect(r.status, r.text).toBe(200);
  const res = r.doc.RunInstancesResponse;
  return { reservationId: res.reservationId as string, ids: items(res.instancesSet).map((i) => i.instanceId as string) };
}

/** The raw RunInstancesResponse too, for fields reservationOf leaves out. */
function withRaw(r: QueryReply): { reservationId: string; ids: string[]; raw: any } {
  return { ...reservationOf(r), raw: r.doc.RunInstancesResponse };
}

describe('RunInstances with a ClientToken', () => {
  it('answers a repeat with the original reservation and launches nothing', async () => {
    const h = await harness();
    const first = reservationOf(await query(h.app, { ...RUN, ClientToken: 'tok-1' }));
    expect(first.ids).toHaveLength(2);
    const store = JSON.stringify(h.store.read().instances);
    const again = withRaw(await query(h.app, { ...RUN, ClientToken: 'tok-1' }));
    expect({ reservationId: again.reservationId, ids: again.ids }).toEqual(first);
    expect(runCalls(h)).toBe(1);
    expect(JSON.stringify(h.store.read().instances)).toBe(store);
    expect(Object.values(h.store.read().instances).map((r) => r.clientToken)).toEqual(['tok-1', 'tok-1']);
    const described = await query(h.app, { Action: 'DescribeInstances', 'Filter.1.Name': 'client-token', 'Filter.1.Value.1': 'tok-1' });
    const shown = items(described.doc.DescribeInstancesResponse.reservationSet).flatMap((r) => items(r.instancesSet));
    expect(shown.map((i) => [i.instanceId, i.clientToken])).toEqual(first.ids.map((id) => [id, 'tok-1']));
    expect(items(again.raw.instancesSet).map((i) => i.clientToken)).toEqual(['tok-1', 'tok-1']);
  });

  it('shows the reservation as it stands now: running, then terminated', async () => {
    const h = await harness();
    const first = reservationOf(await query(h.app, { ...RUN, ClientToken: 'tok-state' }));
    for (const id of first.ids) h.clusters.setInstanceState(id, 'running');
    const states = async () => items((await query(h.app, { ...RUN, ClientToken: 'tok-state' })).doc.RunInstancesResponse.instancesSet)
      .map((i) => i.instanceState.name as string);
    expect(await states()).toEqual(['running', 'running']);
    for (const id of first.ids) h.clusters.dropInstance(id);
    expect(await states()).toEqual(['terminated', 'terminated']);
    expect(runCalls(h)).toBe(1);
  });

  it.each([
    ['another image', { ImageId: 'emi-00000002' }, 'ImageId emi-00000001 then emi-00000002'],
    ['another count', { MaxCount: '3' }, 'MaxCount 2 then 3'],
    ['another instance type', { InstanceType: 'c1.medium' }, 'InstanceType m1.small then c1.medium'],
    ['the zone left to the CLC', { 'Placement.AvailabilityZone': undefined }, 'Placement.AvailabilityZone cluster01 then (none)'],
  ])('refuses the same token with %s (IdempotentParameterMismatch) and changes nothing', async (_name, change, detail) => {
    const h = await harness();
    reservationOf(await query(h.app, { ...RUN, ClientToken: 'tok-2' }));
    const before = { store: JSON.stringify(h.store.read()), cc: h.clusters.snapshot(), calls: h.clusters.mutatingCalls().length };
    const params: Record<string, string> = { ...RUN, ClientToken: 'tok-2' };
    for (const [k, v] of Object.entries(change)) {
      if (v === undefined) delete params[k];
      else params[k] = v;
    }
    const r = await query(h.app, params);
    expect([r.status, errorCode(r)], r.text).toEqual([400, 'IdempotentParameterMismatch']);
    expect(r.text).toContain(detail);
    expect({ store: JSON.stringify(h.store.read()), cc: h.clusters.snapshot(), calls: h.clusters.mutatingCalls().length }).toEqual(before);
  });

  it('launches anew for a new token, and without a token every time', async () => {
    const h = await harness();
    const a = reservationOf(await query(h.app, { ...RUN, MaxCount: '1', ClientToken: 'tok-a' }));
    const b = reservationOf(await query(h.app, { ...RUN, MaxCount: '1', ClientToken: 'tok-b' }));
    reservationOf(await query(h.app, { ...RUN, MaxCount: '1' }));
    reservationOf(await query(h.app, { ...RUN, MaxCount: '1' }));
    expect(a.reservationId).not.toBe(b.reservationId);
    expect(runCalls(h)).toBe(4);
  });

  it('refuses a malformed token with InvalidParameterValue, launching nothing', async () => {
    const h = await harness();
    for (const token of ['x'.repeat(65), 'has space']) {
      const r = await query(h.app, { ...RUN, ClientToken: token });
      expect([r.status, errorCode(r)], r.text).toEqual([400, 'InvalidParameterValue']);
    }
    expect(h.clusters.calls).toEqual([]);
    expect(h.store.read().runTokens).toEqual({});
  });

  it('launches once for concurrent requests carrying one token', async () => {
    const h = await harness();
    // Both arrive in one turn, before either can have written the token: only ctx.keyLocks keeps the second from launching.
    const keyLocks = new KeyedMutex();
    const held = h.clusters.hold('ccDescribeResources');
    const params = parseQueryParams(Object.entries({ ...RUN, ClientToken: 'tok-c' }).filter(([k]) => k !== 'Action'));
    const calls = [0, 1, 2].map(() => {
      const gate = openRequestGate(h.gate);
      const ctx: ActionContext = {
        clusters: gatedClusters(h.clusters, gate), gate, store: h.store, clock: h.clock, logger: silentLogger(), ids: counterIds(),
        principal: { accessKeyId: undefined, accountId: '000000000000', isAdmin: true }, origin: DEFAULT_CLC_ORIGIN, keyLocks,
      };
      return runInstances.handle(params, ctx).finally(() => gate.leaveAll());
    });
    await held.reached;
    held.release();
    const [r1, r2, r3] = await Promise.all(calls);
    expect(r2?.reservationId).toBe(r1?.reservationId);
    expect(r3?.reservationId).toBe(r1?.reservationId);
    expect(runCalls(h)).toBe(1);
  });

  it('keeps tokens per account: another account\'s same token launches its own', async () => {
    const h = await harness({ authenticator: (clock) => testAuthenticator(clock) });
    const now = h.clock.now();
    const admin = reservationOf(await signedQuery(h.app, { ...RUN, ClientToken: 'shared' }, TEST_ADMIN, now));
    const user = reservationOf(await signedQuery(h.app, { ...RUN, ClientToken: 'shared' }, TEST_USER, now));
    expect(user.reservationId).not.toBe(admin.reservationId);
    expect(runCalls(h)).toBe(2);
  });

  it('frees the token of a launch the CC refused, so a retry launches', async () => {
    let refuse = true;
    const wrap = (fake: FakeClusters): Clusters => ({
      partitions: fake.partitions,
      call: (partition, op, req) => {
        if (op === 'ccRunInstances' && refuse) {
          refuse = false;
          return Promise.reject(ClcErrors.make('InsufficientInstanceCapacity', { minCount: 1, vmType: 'm1.small', scope: partition, detail: 'test', delivered: 'yes' }));
        }
        return fake.call(partition, op, req);
      },
    });
    const h = await harness({ wrap });
    const r = await query(h.app, { ...RUN, ClientToken: 'tok-r' });
    expect([r.status, errorCode(r)]).toEqual([503, 'InsufficientInstanceCapacity']);
    expect(h.store.read().runTokens).toEqual({});
    expect(h.store.read().instances).toEqual({});
    reservationOf(await query(h.app, { ...RUN, ClientToken: 'tok-r' }));
    expect(Object.keys(h.store.read().instances)).toHaveLength(2);
  });

  it('remembers a token across a CLC restart (a new app on the same store)', async () => {
    const h = await harness();
    const first = reservationOf(await query(h.app, { ...RUN, ClientToken: 'tok-restart' }));
    const restarted = await harness({ clusters: h.clusters, store: h.store });
    expect(reservationOf(await query(restarted.app, { ...RUN, ClientToken: 'tok-restart' }))).toEqual(first);
    expect(runCalls(restarted)).toBe(1);
  });

  it('forgets a token after its retention: the same token then launches again', async () => {
    const h = await harness();
    const first = reservationOf(await query(h.app, { ...RUN, MaxCount: '1', ClientToken: 'tok-old' }));
    h.clock.advance(RUN_TOKEN_RETENTION_MS);
    const later = reservationOf(await query(h.app, { ...RUN, MaxCount: '1', ClientToken: 'tok-old' }));
    expect(later.reservationId).not.toBe(first.reservationId);
    expect(runCalls(h)).toBe(2);
    // Writing the new one dropped the expired one; only the fresh record is kept.
    expect(Object.values(h.store.read().runTokens).map((t) => t.reservationId)).toEqual([later.reservationId]);
  });

  it('answers DryRun=true with DryRunOperation and launches nothing', async () => {
    const h = await harness();
    const r = await query(h.app, { ...RUN, ClientToken: 'tok-dry', DryRun: 'true' });
    expect([r.status, errorCode(r)], r.text).toEqual([412, 'DryRunOperation']);
    expect(h.clusters.calls).toEqual([]);
    expect(h.store.read().runTokens).toEqual({});
  });
});
