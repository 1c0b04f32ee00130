/**
 * Host HA's node reads over real HTTP (issue 19): the CLC's real Clusters adapter against the real CC
 * app (createCcApp over a CcService of fake NCs), and against an older CC that serves ccDescribeNodes
 * but not ccDescribeNodeHealth (a rolling upgrade): its wire refusal is recognised and the read falls
 * back. Loopback 127.0.112.1, ports 20300-20301.
 */
import express from 'express';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCcApp } from '../../../cc/server.js';
import { createCcClusters } from '../../../clc/clusters/ccClusters.js';
import { LEGACY_RETRY_MS, NodeHealthReader } from '../../../clc/ha/cloud/nodeHealthReader.js';
import { ManualClock } from '../../../shared/clock.js';
import { silentLogger } from '../../../shared/log.js';
import { CC_OPS } from '../../../shared/protocol/ccProtocol.js';
import { typedHandlers } from '../../../shared/protocol/typedServer.js';
import { HttpWireTransport } from '../../../shared/wire/httpTransport.js';
import { mountWireService } from '../../../shared/wire/server.js';
import { CC_PATH } from '../../../shared/wire/transport.js';
import { slots } from '../../cc/fakeNodes.js';
import { harness } from '../../cc/harness.js';

const HOST = '127.0.112.1';
const [NEW_PORT, OLD_PORT] = [20300, 20301];
const [A, B] = ['127.0.112.11', '127.0.112.12'] as const;

function listen(app: express.Express, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = app.listen(port, HOST, () => resolve(s));
    s.once('error', reject);
  });
}

describe('host HA\'s node reads over the wire', () => {
  const transport = new HttpWireTransport({ path: CC_PATH });
  const servers: Server[] = [];
  let cc: Awaited<ReturnType<typeof harness>>;
  let oldCalls: string[] = [];

  beforeAll(async () => {
    cc = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    servers.push(await listen(createCcApp({ service: cc.service, logger: silentLogger() }), NEW_PORT));
    // An older CC: the same answers, but no ccDescribeNodeHealth among its operations.
    const old = express();
    const { ccDescribeNodeHealth: _absent, ...olderOps } = CC_OPS;
    const handlers = typedHandlers(olderOps, {
      ...cc.service.ops,
      ccDescribeNodes: async (req, ctx) => { oldCalls.push('ccDescribeNodes'); return cc.service.ops.ccDescribeNodes(req, ctx); },
    });
    mountWireService(old, { path: CC_PATH, handlers, logger: silentLogger(), onRefused: (e) => { oldCalls.push(`refused ${e.code}`); } });
    servers.push(await listen(old, OLD_PORT));
  });

  afterAll(async () => {
    transport.close();
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
    await cc.settle();
  });

  const readerAt = (port: number, clock: ManualClock) => new NodeHealthReader(
    createCcClusters({ partitions: [{ name: 'cluster01', endpoint: `http://${HOST}:${port}` }], transport, timeoutMs: 10_000 }), clock,
  );

  it('a current CC: the full tuple list, then the very same list on `unchanged`', async () => {
    const reader = readerAt(NEW_PORT, new ManualClock(0));
    const first = await reader.read('cluster01', { cached: true });
    expect(first.hosts.map((h) => [h.host, h.reachable, h.healthy, h.quarantined])).toEqual([[A, true, true, false], [B, true, true, false]]);
    expect((await reader.read('cluster01', { cached: true })).hosts).toBe(first.hosts);
  });

  it('an older CC: refused as UnknownOperation, read with ccDescribeNodes until LEGACY_RETRY_MS has passed', async () => {
    oldCalls = [];
    const clock = new ManualClock(0);
    const reader = readerAt(OLD_PORT, clock);
    const first = await reader.read('cluster01', { cached: true });
    expect(first.hosts.map((h) => h.host)).toEqual([A, B]);
    await reader.read('cluster01', { cached: true });
    expect(oldCalls).toEqual(['refused UnknownOperation', 'ccDescribeNodes', 'ccDescribeNodes']);
    // Still older after the retry time: refused again, and read the old way again.
    clock.advance(LEGACY_RETRY_MS);
    expect((await reader.read('cluster01', { cached: true })).hosts).toHaveLength(2);
    expect(oldCalls.slice(3)).toEqual(['refused UnknownOperation', 'ccDescribeNodes']);
  });
});
