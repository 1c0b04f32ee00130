/**
 * ncMigrateInstances at the NC's HTTP edge, in process over loopback (127.0.10.201): each class of
 * bad input gets its coded <Fault> and leaves the node exactly as it was (store and hypervisor).
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNcApp } from '../../nc/server.js';
import { wireHeaders } from '../helpers/wireHeaders.js';
import { silentLogger } from '../../shared/log.js';
import type { NcMigrateRequest } from '../../shared/protocol/migrationProtocol.js';
import { NC_OPS } from '../../shared/protocol/ncProtocol.js';
import { TypedClient } from '../../shared/protocol/typedClient.js';
import { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { NC_PATH } from '../../shared/wire/transport.js';
import { encodeMessage, type WireObject } from '../../shared/wire/xmlCodec.js';
import { FakeDriver } from './fakeDriver.js';
import { harness, runRequest, SMALL, type Harness } from './fixtures.js';
import { A, B, C, commit, item, MIG, MIG2, plan, prepareDest, prepareSource, replan, SRC } from './migrationFixtures.js';

const HTTP_HOST = '127.0.10.201';
let h: Harness;
let server: Server;
let base: string;
const transport = new HttpWireTransport({ path: NC_PATH, defaultTimeoutMs: 5000 });
const client = new TypedClient(transport, NC_OPS);
const DRAIN = { kind: 'drain' as const, destinations: [], allowHosts: true, reserveDestinations: false };

beforeEach(async () => {
  // Room for exactly two m1.small: A and B take it.
  h = await harness({ host: SRC, driver: new FakeDriver(SRC, { cores: 2, memoryMiB: 512, diskGiB: 10 }) });
  await h.controller.run(runRequest(A));
  await h.controller.run(runRequest(B));
  h.driver.domains.set(B, { ...(h.driver.domains.get(B) as NonNullable<ReturnType<typeof h.driver.domains.get>>), state: 'shutoff' });
  // A drain of this node is under way: A is queued in it, C could not be placed.
  await h.controller.migrate(prepareSource(plan([item(A), item(C, { state: 'failed', destination: '', error: 'too-large' })], { migrationId: MIG2, request: DRAIN })));
  server = createNcApp({ controller: h.controller, logger: silentLogger() }).listen(0, HTTP_HOST);
  await new Promise((r) => server.once('listening', r));
  base = `http://${HTTP_HOST}:${(server.address() as AddressInfo).port}`;
});
afterAll(() => transport.close());
afterEach(async () => {
  await h.controller.stop();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function post(body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}${NC_PATH}`, { method: 'POST', headers: wireHeaders(body), body });
  return { status: res.status, text: await res.text() };
}

const msg = (req: NcMigrateRequest | WireObject) => encodeMessage('ncMigrateInstances', req as WireObject);

describe('ncMigrateInstances at the HTTP edge', () => {
  it('serves the handshake through the typed contract', async () => {
    const res = await client.call(base, 'ncMigrateInstances', { action: 'rollback', role: 'source', migrationId: MIG2, instanceId: A, reason: 'no', cancel: true });
    expect(res.plan?.items.map((i) => i.state)).toEqual(['cancelled', 'failed']);
    const node = await client.call(base, 'ncDescribeResource', {});
    expect(node.plans?.map((p) => p.migrationId)).toEqual([MIG2]);
    expect(node.incoming).toEqual([]);
  });

  const bad: [string, () => Promise<unknown> | void, string, number, string][] = [
    ['commit of an item that was never prepared (unplaced)', () => undefined, msg(commit(C, { migrationId: MIG2 })), 409, 'MigrationNotPrepared'],
    ['commit with an unknown migration id', () => undefined, msg(commit(A)), 409, 'MigrationNotPrepared'],
    ['replan with an unknown migration id', () => undefined, msg(replan(A, '127.0.10.3')), 409, 'MigrationNotPrepared'],
    ['commit to another destination than planned', () => undefined, msg(commit(A, { migrationId: MIG2, destination: '127.0.10.9' })), 409, 'MigrationNotPrepared'],
    ['a malformed migration id', () => undefined, msg({ ...commit(A), migrationId: 'mig-NOTHEX!' }), 400, 'InvalidParameter'],
    ['a malformed instance id', () => undefined, msg({ ...commit(A), instanceId: 'i-123' }), 400, 'InvalidParameter'],
    ['a destination that is not an address', () => undefined, msg({ ...commit(A), destination: 'nc2.example' }), 400, 'InvalidParameter'],
    ['an unknown action', () => undefined, msg({ action: 'teleport', migrationId: MIG }), 400, 'InvalidParameter'],
    ['a plan without items', () => undefined, msg({ action: 'prepare', role: 'source', plan: { ...plan([item(A)]), items: [] } }), 400, 'InvalidParameter'],
    ['a source prepare of an instance that is not here', () => undefined, msg(prepareSource(plan([item('i-000000ff')]))), 404, 'InstanceNotFound'],
    ['a source prepare of an instance that is not running', () => undefined, msg(prepareSource(plan([item(B)]))), 409, 'InstanceNotRunning'],
    ['a source prepare of an instance already in a live plan', () => undefined, msg(prepareSource(plan([item(A)]))), 409, 'MigrationInProgress'],
    ['a second drain of the node', () => undefined, msg(prepareSource(plan([item(C, { state: 'failed', destination: '' })], { request: DRAIN }))), 409, 'MigrationInProgress'],
    ['a plan whose source is another node', () => undefined, msg(prepareSource(plan([item(A)], { source: '127.0.10.9' }))), 400, 'MigrationPlanInvalid'],
    ['a destination prepare on a full node', () => undefined, msg(prepareDest('i-000000dd', { source: '127.0.10.9' })), 409, 'InsufficientCapacity'],
    ['a destination prepare on a disabled node without allowDisabled',
      () => h.controller.modify('disabled'), msg(prepareDest('i-000000dd', { source: '127.0.10.9' })), 409, 'NodeDisabled'],
    ['a terminate of an instance in a migration', () => undefined, encodeMessage('ncTerminateInstance', { instanceId: A }), 409, 'InstanceMigrating'],
  ];
  it.each(bad)('answers %s with a coded Fault and changes nothing', async (_n, setup, body, status, code) => {
    await setup();
    const before = structuredClone(h.store.read());
    const calls = h.driver.calls.length;
    const domains = structuredClone([...h.driver.domains.entries()]);
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.text).toContain('<Fault');
    expect(res.text).toContain(`<code>${code}</code>`);
    expect(h.store.read()).toEqual(before);
    // Looking is allowed (a source prepare lists, a commit checks its domain); acting is not.
    expect(h.driver.calls.slice(calls).filter((c) => c !== 'list' && !c.startsWith('info '))).toEqual([]);
    expect([...h.driver.domains.entries()]).toEqual(domains);
  });

  it('takes a destination prepare on a disabled node the plan named', async () => {
    await h.controller.terminate(B);
    await h.controller.modify('disabled');
    const res = await client.call(base, 'ncMigrateInstances', prepareDest('i-000000dd', { source: '127.0.10.9', allowDisabled: true }));
    expect(res.incoming).toMatchObject({ instanceId: 'i-000000dd', state: 'ready', vmType: SMALL });
  });
});
