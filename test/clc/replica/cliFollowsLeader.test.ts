/**
 * Ferry's CLI client against CLC replicas (issue 21): a change sent to a follower is answered
 * NotLeader with the leader's URL, and the client sends it there, once, signed for the leader's URL;
 * a leader that itself answers NotLeader (a second hop) is an error, not a loop. leaderTarget's table.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CLC_PATH } from '../../../clc/api/app.js';
import { leaderTarget, QueryClient } from '../../../clc/cli/queryClient.js';
import type { Leadership } from '../../../clc/core/leadership.js';
import { systemClock } from '../../../shared/clock.js';
import { testAuthenticator, TEST_ADMIN } from '../authFixtures.js';
import { harness, type Harness } from '../harness.js';

const HOST = '127.0.12.1';
const servers: Server[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A replica on its own port, signing required; `leaderOf` says whom it names while it does not lead. */
async function replica(leads: () => boolean, leaderOf: () => string | undefined): Promise<{ h: Harness; origin: string }> {
  let origin = '';
  const leadership: Leadership = { get self() { return origin; }, leading: leads, leaderUrl: leaderOf, epoch: () => (leads() ? '1' : undefined) };
  const h = await harness({ authenticator: () => testAuthenticator(systemClock), leadership });
  const server = await new Promise<Server>((resolve) => { const s = h.app.listen(0, HOST, () => resolve(s)); });
  servers.push(server);
  origin = `http://${HOST}:${(server.address() as AddressInfo).port}`;
  return { h, origin };
}

describe('QueryClient and a follower', () => {
  it('sends a refused change to the leader the follower names, once, and returns the leader\'s answer', async () => {
    const leader = await replica(() => true, () => undefined);
    const follower = await replica(() => false, () => leader.origin);
    const client = new QueryClient({ url: `${follower.origin}${CLC_PATH}`, credentials: { accessKey: TEST_ADMIN.accessKey, secretKey: TEST_ADMIN.secretKey }, timeoutMs: 10_000 });
    const reply = await client.call('RunInstances', { ImageId: 'emi-00000001' });
    expect(reply.instancesSet).toBeDefined();
    // Stored by the leader, not the follower (each replica here has its own store).
    expect(Object.keys(leader.h.store.read().instances)).toHaveLength(1);
    expect(Object.keys(follower.h.store.read().instances)).toHaveLength(0);
  });

  it('does not follow a second time: a "leader" that refuses too is the NotLeader error', async () => {
    const b = await replica(() => false, () => 'http://127.0.12.1:9');
    const a = await replica(() => false, () => b.origin);
    const client = new QueryClient({ url: `${a.origin}${CLC_PATH}`, credentials: { accessKey: TEST_ADMIN.accessKey, secretKey: TEST_ADMIN.secretKey }, timeoutMs: 10_000 });
    await expect(client.call('RunInstances', { ImageId: 'emi-00000001' })).rejects.toMatchObject({ code: 'NotLeader' });
  });
});

describe('leaderTarget', () => {
  it.each([
    ['the leader\'s origin with this path', 'http://127.0.0.1:1/services/compute', 'http://127.0.0.2:2', 'http://127.0.0.2:2/services/compute'],
    ['a header with a path keeps only its origin', 'http://127.0.0.1:1/services/Eucalyptus', 'https://clc.example.com:8773/x', 'https://clc.example.com:8773/services/Eucalyptus'],
    ['no header', 'http://127.0.0.1:1/services/Eucalyptus', null, undefined],
    ['not a URL', 'http://127.0.0.1:1/services/Eucalyptus', 'the leader', undefined],
    ['not http(s)', 'http://127.0.0.1:1/services/Eucalyptus', 'file:///etc/passwd', undefined],
    ['this very replica', 'http://127.0.0.1:1/services/Eucalyptus', 'http://127.0.0.1:1', undefined],
  ])('%s', (_what, url, header, expected) => {
    expect(leaderTarget(url, header)).toBe(expected);
  });
});
