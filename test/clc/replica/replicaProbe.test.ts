/**
 * A dead CLC leader is not listed ENABLED (issue 21): every replica answers GET REPLICA_ALIVE_PATH with
 * 204; the real probe (clc/replica/replicaProbe.ts) over HTTP on 127.0.106.10 tells a live replica from a
 * closed port, a silent one and something else; DescribeServices at a follower asks the replicas it
 * lists through a hand-written probe and shows a silent leader NOTREADY.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { REPLICA_ALIVE_PATH, type Leadership, type ReplicaProbe } from '../../../clc/core/leadership.js';
import { httpReplicaProbe } from '../../../clc/replica/replicaProbe.js';
import { harness, query } from '../harness.js';

const HOST = '127.0.106.10';
const SELF = 'http://127.0.106.10:20240';
const LEADER = 'http://127.0.106.11:20241';

const servers: Server[] = [];
async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return `http://${HOST}:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const follower = (replicas: string[]): Leadership => ({ self: SELF, leading: () => false, leaderUrl: () => LEADER, epoch: () => undefined, replicas: () => replicas });

/** A fake probe: answers as told, and records whom it was asked about. */
function fakeProbe(alive: ReadonlySet<string>): ReplicaProbe & { asked: string[] } {
  const asked: string[] = [];
  return { asked, answers: (url) => { asked.push(url); return Promise.resolve(alive.has(url)); } };
}

describe('httpReplicaProbe against a real CLC app', () => {
  it('a live replica answers 204 at its liveness path: true', async () => {
    const h = await harness();
    const url = await serve(h.app);
    const res = await fetch(`${url}${REPLICA_ALIVE_PATH}`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(await httpReplicaProbe().answers(url)).toBe(true);
  });

  it.each<[string, () => Promise<string>]>([
    ['a closed port (a killed replica)', async () => {
      const url = await serve((_q, r) => r.end());
      const s = servers.pop()!;
      await new Promise((r) => s.close(r));
      return url;
    }],
    ['a process that never answers (frozen)', () => serve(() => undefined)],
    ['something that is not a CLC replica (200)', () => serve((_q, r) => r.end('hello'))],
  ])('%s: false, never a throw', async (_n, target) => {
    expect(await httpReplicaProbe(300).answers(await target())).toBe(false);
  });
});

describe('DescribeServices at a follower CLC replica', () => {
  const clcRows = (r: Awaited<ReturnType<typeof query>>): string[] => {
    const items = (r.doc.DescribeServicesResponse.serviceStatuses.item) as any;
    return (Array.isArray(items) ? items : [items]).map((s: any) => `${s.serviceId.name} ${s.localState} ${s.serviceId.uri}`);
  };

  it('a leader that does not answer is NOTREADY under clc; once it answers, ENABLED', async () => {
    const probe = fakeProbe(new Set());
    const h = await harness({ leadership: follower([LEADER, SELF]), replicaProbe: probe });
    const dead = await query(h.app, { Action: 'DescribeServices', ByServiceType: 'eucalyptus' });
    expect(dead.status, dead.text).toBe(200);
    expect(clcRows(dead)).toEqual([`clc NOTREADY ${LEADER}/services/Eucalyptus`, `clc@127.0.106.10-20240 DISABLED ${SELF}/services/Eucalyptus`]);
    expect(probe.asked).toEqual([LEADER]);

    const h2 = await harness({ leadership: follower([LEADER, SELF]), replicaProbe: fakeProbe(new Set([LEADER])) });
    const alive = await query(h2.app, { Action: 'DescribeServices', ByServiceType: 'eucalyptus' });
    expect(clcRows(alive)).toEqual([`clc ENABLED ${LEADER}/services/Eucalyptus`, `clc@127.0.106.10-20240 DISABLED ${SELF}/services/Eucalyptus`]);
  });

  it('a question only about nodes asks no replica', async () => {
    const probe = fakeProbe(new Set());
    const h = await harness({ leadership: follower([LEADER, SELF]), replicaProbe: probe });
    expect((await query(h.app, { Action: 'DescribeServices', ByServiceType: 'node' })).status).toBe(200);
    expect(probe.asked).toEqual([]);
  });
});
