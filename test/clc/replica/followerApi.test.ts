/**
 * A CLC replica that does not lead (issue 21), through the admin API over the fake CCs: reads are
 * served; every change is refused NotLeader (503) naming the leader, in the message and in the
 * X-Ferry-Leader header, with nothing sent to a CC and nothing stored; requests waiting in the change
 * gate of a leader that loses its lease are refused NotLeader, never run.
 */
import { describe, expect, it } from 'vitest';
import { ACTIONS, READ_ACTIONS } from '../../../clc/api/actions/index.js';
import { CLC_PATH } from '../../../clc/api/app.js';
import { notLeaderError, type Leadership } from '../../../clc/core/leadership.js';
import { StoreErrors } from '../../../shared/store/errors.js';
import { errorCode, eventually, harness, launchRunning, query } from '../harness.js';
import request from 'supertest';
import { createServer } from 'node:http';

const LEADER = 'http://127.0.12.2:8773';

/** A leadership a test switches; `leader` is what the election last observed. */
function switchable(leading: boolean, leader: string | undefined = LEADER): Leadership & { set(l: boolean, who?: string): void } {
  let now = leading;
  let who: string | undefined = leader;
  return {
    self: 'http://127.0.12.1:8773',
    leading: () => now,
    leaderUrl: () => who,
    epoch: () => (now ? '7' : undefined),
    set(l, w) {
      now = l;
      who = w;
    },
  };
}

/** Every change action: the refusal comes before its parameters are parsed, so none are sent. */
const CHANGES = Object.keys(ACTIONS).filter((a) => !READ_ACTIONS.has(a));

describe('the read actions', () => {
  it('are exactly the Describe* and List* actions, all of them known', () => {
    expect([...READ_ACTIONS].filter((a) => !(a in ACTIONS))).toEqual([]);
    expect(Object.keys(ACTIONS).filter((a) => /^(Describe|List)[A-Z]/.test(a)).sort()).toEqual([...READ_ACTIONS].sort());
    expect(CHANGES.length).toBeGreaterThan(20);
  });
});

describe('a follower', () => {
  it.each(CHANGES)('refuses %s with NotLeader naming the leader; nothing reaches a CC or the store', async (action) => {
    const h = await harness({ leadership: switchable(false) });
    const before = JSON.stringify(h.store.read());
    const ccBefore = h.clusters.snapshot();
    const r = await query(h.app, { Action: action });
    expect(r.status, r.text).toBe(503);
    expect(errorCode(r)).toBe('NotLeader');
    expect(r.doc.Response.Errors.Error.Message).toContain(`the leader is ${LEADER}`);
    expect(h.clusters.mutatingCalls()).toEqual([]);
    expect(h.clusters.snapshot()).toBe(ccBefore);
    expect(JSON.stringify(h.store.read())).toBe(before);
  });

  it('serves reads', async () => {
    const h = await harness({ leadership: switchable(false) });
    for (const action of ['DescribeInstances', 'DescribeAvailabilityZones', 'DescribeNodes', 'DescribeMigrations', 'DescribeHostHA']) {
      const r = await query(h.app, { Action: action });
      expect(r.status, `${action}: ${r.text}`).toBe(200);
    }
  });

  it('puts the leader in the X-Ferry-Leader header; without a leader elected, no header and a message that says so', async () => {
    const l = switchable(false);
    const h = await harness({ leadership: l });
    const server = createServer(h.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.12.1', resolve));
    try {
      const send = () => request(server).post(CLC_PATH).type('form').send('Action=RunInstances&Version=2013-02-01&ImageId=emi-00000001');
      const named = await send();
      expect(named.headers['x-ferry-leader']).toBe(LEADER);
      l.set(false, undefined);
      const none = await send();
      expect(none.status).toBe(503);
      expect(none.headers['x-ferry-leader']).toBeUndefined();
      expect(none.text).toContain('no leader is elected now');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('serves changes once it leads', async () => {
    const l = switchable(false);
    const h = await harness({ leadership: l });
    expect(errorCode(await query(h.app, { Action: 'RunInstances', ImageId: 'emi-00000001' }))).toBe('NotLeader');
    l.set(true);
    const r = await query(h.app, { Action: 'RunInstances', ImageId: 'emi-00000001' });
    expect(r.status, r.text).toBe(200);
  });
});

describe('a leader that loses its lease', () => {
  it('refuses the changes waiting in its gate with NotLeader (never run); the change holding the gate finishes', async () => {
    const l = switchable(true);
    const h = await harness({ leadership: l });
    const [a] = await launchRunning(h, 'cluster01');
    const held = h.clusters.hold('ccModifyNode');
    const disable = query(h.app, { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11', Partition: 'cluster01' });
    await held.reached;
    const waiting = query(h.app, { Action: 'TerminateInstances', 'InstanceId.1': a as string });
    await eventually(() => h.gate.waiting('cluster01') === 1, 'the terminate waits in the gate');
    l.set(false);
    expect(h.gate.refuseWaiting(() => notLeaderError(l), 'lost its leadership')).toBe(1);
    const refused = await waiting;
    expect(errorCode(refused)).toBe('NotLeader');
    expect(h.gate.waiting()).toBe(0);
    held.release();
    await disable;
    expect(h.clusters.calls.filter((c) => c.op === 'ccTerminateInstances')).toEqual([]);
  });
});

describe('a leader that cannot prove it leads (etcd lost its quorum, or its key is gone)', () => {
  it.each([
    ['StoreUnavailable', 'ServiceUnavailable'],
    ['StoreNotLeader', 'NotLeader'],
  ])('a change whose leadership check fails %s is refused %s before anything reaches a CC or the store; reads are served', async (storeCode, clcCode) => {
    const l = switchable(true);
    let checks = 0;
    const h = await harness({
      leadership: {
        ...l,
        confirm: () => {
          checks++;
          return Promise.reject(storeCode === 'StoreUnavailable'
            ? StoreErrors.make('StoreUnavailable', { file: 'etcd:clc/election/', timeoutMs: 3000, detail: 'leadership check: deadline passed' })
            : StoreErrors.make('StoreNotLeader', { file: 'etcd:clc/election/', leader: 'none elected' }));
        },
      },
    });
    const before = JSON.stringify(h.store.read());
    const changes: Array<Record<string, string>> = [
      { Action: 'DisableService', Type: 'NODE', Host: '127.0.12.11', Partition: 'cluster01' },
      { Action: 'MigrateInstances', SourceHost: '127.0.12.11' },
      { Action: 'RunInstances', ImageId: 'emi-00000001' },
    ];
    for (const action of changes) {
      const r = await query(h.app, action);
      expect(r.status, r.text).toBe(503);
      expect(errorCode(r)).toBe(clcCode);
    }
    expect(checks).toBe(3);
    expect(h.clusters.mutatingCalls()).toEqual([]);
    expect(JSON.stringify(h.store.read())).toBe(before);
    expect((await query(h.app, { Action: 'DescribeInstances' })).status).toBe(200);
    expect(checks).toBe(3);
  });

  it('a change whose check succeeds is served', async () => {
    let checks = 0;
    const h = await harness({ leadership: { ...switchable(true), confirm: () => { checks++; return Promise.resolve(); } } });
    const r = await query(h.app, { Action: 'RunInstances', ImageId: 'emi-00000001' });
    expect(r.status, r.text).toBe(200);
    expect(checks).toBe(1);
  });
});
