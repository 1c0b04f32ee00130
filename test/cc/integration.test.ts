/**
 * The CC as a real process against real NCs and simulated hypervisors, on 127.0.11.x only:
 * 2 simhv + 2 NC + 1 CC, each stopped by PID afterwards. Needs a build (`npx tsc -p tsconfig.json`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CC_OPS, type CcRequest } from '../../shared/protocol/ccProtocol.js';
import { TypedClient } from '../../shared/protocol/typedClient.js';
import { CC_PATH } from '../../shared/wire/transport.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';

const ENTRIES = ['dist/cc/main.js', 'dist/nc/main.js', 'dist/nc/hypervisor/sim/main.js'];
const built = ENTRIES.every((e) => existsSync(join(ROOT, e)));

const SMALL = { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 };
const id = (n: number): string => `i-${n.toString(16).padStart(8, '0')}`;
const run = (reservation: number, from: number, count: number, minCount = count): CcRequest<'ccRunInstances'> => ({
  reservationId: `r-${reservation.toString(16).padStart(8, '0')}`, imageId: 'emi-00000001', ownerId: 'alice', vmType: SMALL,
  instanceIds: Array.from({ length: count }, (_, k) => id(from + k)), minCount, launchTime: Date.now(),
});

describe.skipIf(!built)('CC with real NCs (127.0.11.x)', () => {
  // Each host gets 4 cores: room for 4 m1.small instances.
  const cloud = new TestCloud(11, 2, { simArgs: ['--cores', '4'], ccArgs: ['--poll-interval-ms', '500', '--nc-timeout-ms', '1500'] });
  const [NC1, NC2] = cloud.nodeHosts as [string, string];
  // Dials the CC as its CLC does: over mutual TLS with the clc certificate.
  const cc = new TypedClient(cloud.tierClient(CC_PATH), CC_OPS);
  const url = cloud.ccUrl;
  const names = cloud.names().filter((n) => n !== 'clc');
  const nodes = async () => (await cc.call(url, 'ccDescribeNodes', {})).nodes;
  const node = async (host: string) => (await nodes()).find((n) => n.host === host);
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(async () => {
    await cloud.start(names);
  });
  afterAll(async () => {
    await cloud.destroy();
  });

  it('sees both NCs enabled and reachable', async () => {
    const ns = await nodes();
    expect(ns.map((n) => [n.host, n.nodeState, n.reachable, n.healthy, n.capacity.cores])).toEqual([
      [NC1, 'enabled', true, true, 4], [NC2, 'enabled', true, true, 4],
    ]);
  });

  it('spreads instances over both NCs', async () => {
    const { instances } = await cc.call(url, 'ccRunInstances', run(1, 1, 2));
    expect(instances.map((i) => i.host)).toEqual([NC1, NC2]);
    expect(instances.every((i) => i.partition === 'cluster01')).toBe(true);
  });

  it('after NC1 is disabled through ccModifyNode, new instances all land on NC2', async () => {
    const r = await cc.call(url, 'ccModifyNode', { host: NC1, stateName: 'disabled', vmTypes: [SMALL] });
    expect(r.previousState).toBe('enabled');
    expect(r.node).toMatchObject({ host: NC1, nodeState: 'disabled', reachable: true });
    expect(r.matrix).toEqual([{ vmType: 'm1.small', max: 8, available: 3, cores: 1, memoryMiB: 256, diskGiB: 5 }]);
    const { instances } = await cc.call(url, 'ccRunInstances', run(2, 3, 3));
    expect(instances.map((i) => i.host)).toEqual([NC2, NC2, NC2]);
    await expect(cc.call(url, 'ccRunInstances', run(3, 6, 1))).rejects.toMatchObject({
      fields: { remoteCode: 'InsufficientInstanceCapacity', remoteStatus: 409 },
    });
  });

  it('a CC killed with -9 and restarted rebuilds its view from the NCs', async () => {
    await cloud.crash('cc');
    await cloud.start(['cc']);
    const ns = await nodes();
    expect(ns.map((n) => [n.host, n.nodeState, n.reachable])).toEqual([[NC1, 'disabled', true], [NC2, 'enabled', true]]);
    const { instances } = await cc.call(url, 'ccDescribeInstances', {});
    expect(instances.map((i) => [i.instanceId, i.host]).sort()).toEqual([
      [id(1), NC1], [id(2), NC2], [id(3), NC2], [id(4), NC2], [id(5), NC2],
    ]);
  });

  it('an NC killed with -9 shows reachable=false, keeps its instances listed, and scheduling avoids it', async () => {
    await cc.call(url, 'ccModifyNode', { host: NC1, stateName: 'enabled', vmTypes: [SMALL] });
    await cloud.crash(`nc-${NC2}`);
    // No poll has noticed yet: NC2 still looks schedulable, refuses the connection, and the CC re-places.
    const { instances } = await cc.call(url, 'ccRunInstances', run(4, 0x10, 2));
    expect(instances.map((i) => i.host)).toEqual([NC1, NC1]);
    await pause(1100);
    const dead = await node(NC2);
    expect(dead).toMatchObject({ reachable: false });
    expect(dead?.instances.map((i) => i.instanceId).sort()).toEqual([id(2), id(3), id(4), id(5)]);
    const more = await cc.call(url, 'ccRunInstances', run(5, 0x20, 1));
    expect(more.instances.map((i) => i.host)).toEqual([NC1]);
  });

  it('terminating on a dead NC is NodeUnreachable and terminates nothing; on a live one it works', async () => {
    await expect(cc.call(url, 'ccTerminateInstances', { instanceIds: [id(1), id(2)] })).rejects.toMatchObject({
      fields: { remoteCode: 'NodeUnreachable', remoteStatus: 503 },
    });
    expect((await node(NC1))?.instances.find((i) => i.instanceId === id(1))?.state).not.toBe('terminated');
    const r = await cc.call(url, 'ccTerminateInstances', { instanceIds: [id(1)] });
    expect(r.instances).toEqual([expect.objectContaining({ instanceId: id(1), currentState: expect.stringMatching(/shutting-down|terminated/) })]);
  });
});
