/**
 * Bad input to the migration operations over HTTP, one test per class: each answers with its coded
 * <Fault> and HTTP status, and leaves the NCs, the CC's view and every reservation as they were.
 */
import request from 'supertest';
import xml2js from 'xml2js';
import { beforeEach, describe, expect, it } from 'vitest';
import { createCcApp } from '../../../cc/server.js';
import { reservationsOfView } from '../../../cc/view.js';
import { silentLogger } from '../../../shared/log.js';
import { CC_PATH } from '../../../shared/wire/transport.js';
import { wireHeaders } from '../../helpers/wireHeaders.js';
import { encodeMessage, type WireObject } from '../../../shared/wire/xmlCodec.js';
import { SMALL, slots } from '../fakeNodes.js';
import { D1, D2, id, item, plan, S } from './builders.js';
import { migrationHarness } from './migrationHarness.js';

const S2 = '127.0.11.5';
const DOWN = '127.0.11.6';
const DONE = 'mig-000000dd';
let h: Awaited<ReturnType<typeof migrationHarness>>;
let app: ReturnType<typeof createCcApp>;
let active = '';

beforeEach(async () => {
  h = await migrationHarness({ nodes: [[S, slots(4)], [S2, slots(4)], [D1, slots(2)], [D2, slots(2)], [DOWN, slots(4)]], mode: 'manual' });
  await h.settle();
  for (const i of [1, 2, 3]) h.fake.sneak(S, id(i));
  h.fake.nc(S).instances.push({ ...h.fake.nc(S).instances[0]!, instanceId: id(4), state: 'stopped' });
  for (const i of [0x21, 0x22, 0x23]) h.fake.sneak(S2, id(i));
  h.fake.sneak(DOWN, id(0x31));
  // A finished plan its source still holds.
  h.fake.nc(S2).plans.push(plan([item(id(0x29), D1, { state: 'completed' })], { migrationId: DONE, source: S2 }));
  await h.keeper.refreshHosts([S, S2, DOWN], 500);
  active = (await h.migrate({ instanceId: id(1), destinations: [D1] })).migrationId;
  await h.settle();
  h.fake.nc(D2).link = 'down';
  h.fake.nc(DOWN).link = 'down';
  await h.keeper.refreshHosts([D2, DOWN], 500);
  h.fake.calls.length = 0;
  app = createCcApp({ service: h.service, logger: silentLogger() });
});

function snapshot(): string {
  const view = h.keeper.get();
  const r = reservationsOfView(view);
  return JSON.stringify({
    ncs: [...h.fake.ncs.values()].map(({ refuseMigrate: _r, ...nc }) => nc),
    view: view.entries.map((e) => ({ node: { ...e.node, lastSeen: 0 }, plans: e.plans, incoming: e.incoming })),
    reserved: [...r.byHost], reservedHosts: [...r.reservedHosts],
  });
}

async function post(body: string): Promise<{ status: number; code: string; message: string }> {
  const res = await request(app).post(CC_PATH).set(wireHeaders(body)).send(body);
  const doc = (await xml2js.parseStringPromise(res.text, { explicitArray: false })) as { Fault?: { code: { _: string } | string; message: { _: string } | string } };
  const text = (v: unknown): string => (typeof v === 'string' ? v : (v as { _: string })._);
  expect(doc.Fault, res.text).toBeDefined();
  return { status: res.status, code: text(doc.Fault?.code), message: text(doc.Fault?.message) };
}

const migrate = (over: WireObject): string => encodeMessage('ccMigrateInstances', { destinations: [], allowHosts: true, reserveDestinations: false, partial: false, vmTypes: [{ ...SMALL }], ...over });

describe('bad input to the migration operations', () => {
  it.each<[string, () => string, number, string, string?]>([
    ['both sourceHost and instanceId', () => migrate({ sourceHost: S, instanceId: id(2) }), 400, 'InvalidParameterCombination'],
    ['neither sourceHost nor instanceId', () => migrate({}), 400, 'InvalidParameterCombination'],
    ['unknown source host', () => migrate({ sourceHost: '127.0.11.99' }), 404, 'NodeNotFound', '127.0.11.99'],
    ['unknown destination host', () => migrate({ sourceHost: S2, destinations: ['127.0.11.98'] }), 404, 'NodeNotFound', '127.0.11.98'],
    ['unknown instance', () => migrate({ instanceId: id(0x77) }), 404, 'InstanceNotFound', id(0x77)],
    ['instance not running', () => migrate({ instanceId: id(4) }), 409, 'InstanceNotRunning', 'stopped'],
    ['source running nothing', () => migrate({ sourceHost: D1 }), 409, 'NothingToMigrate', D1],
    ['destination equal to source', () => migrate({ sourceHost: S2, destinations: [S2] }), 400, 'DestinationIsSource', S2],
    ['allow set naming only unusable hosts', () => migrate({ sourceHost: S2, destinations: [D2, DOWN] }), 409, 'NoEligibleDestination'],
    ['not enough room, partial=false', () => migrate({ sourceHost: S2, destinations: [D1] }), 409, 'InsufficientCapacityForMigration', id(0x23)],
    ['a second drain / an instance already moving', () => migrate({ sourceHost: S }), 409, 'MigrationInProgress', id(1)],
    ['the instance of an active plan', () => migrate({ instanceId: id(1) }), 409, 'MigrationInProgress'],
    ['source unreachable', () => migrate({ sourceHost: DOWN }), 503, 'NodeUnreachable', DOWN],
    ['malformed host', () => migrate({ sourceHost: 'node-1' }), 400, 'InvalidParameter', 'sourceHost'],
    ['missing vmTypes', () => encodeMessage('ccMigrateInstances', { sourceHost: S2 }), 400, 'InvalidParameter', 'vmTypes'],
    ['cancel: unknown plan', () => encodeMessage('ccCancelMigration', { migrationId: 'mig-0badf00d' }), 404, 'MigrationNotFound', 'mig-0badf00d'],
    ['cancel: malformed id', () => encodeMessage('ccCancelMigration', { migrationId: 'migration-1' }), 400, 'InvalidParameter', 'migrationId'],
    ['cancel: already finished', () => encodeMessage('ccCancelMigration', { migrationId: DONE }), 409, 'MigrationAlreadyFinished', DONE],
    ['describe: unknown plan', () => encodeMessage('ccDescribeMigrations', { migrationId: 'mig-0badf00d' }), 404, 'MigrationNotFound'],
    ['node event from an unregistered host', () => encodeMessage('ccNodeEvent', { host: '127.0.11.97', kind: 'migration' }), 404, 'NodeNotFound'],
    ['node event of an unknown kind', () => encodeMessage('ccNodeEvent', { host: S, kind: 'gossip' }), 400, 'InvalidParameter', 'kind'],
  ])('%s', async (_name, body, status, code, mention) => {
    const before = snapshot();
    const fault = await post(body());
    expect(fault).toMatchObject({ status, code });
    if (mention) expect(fault.message).toContain(mention);
    await h.settle();
    expect(snapshot()).toBe(before);
    expect(h.fake.calls.filter((c) => c.op !== 'describe')).toEqual([]);
  });

  it('a good request still works afterwards, and plans with partial=true', async () => {
    const res = await request(app).post(CC_PATH).set(wireHeaders('<ccMigrateInstances/>')).send(migrate({ sourceHost: S2, destinations: [D1], partial: true }));
    expect(res.status).toBe(200);
    expect(res.text).toContain('insufficient-capacity');
    await h.settle();
    expect(h.fake.nc(S2).plans.map((p) => p.migrationId)).toContain('mig-00000002');
    expect(active).toBe('mig-00000001');
  });
});
