/**
 * Issue 16 item 8 with real processes on 127.0.54.0/24. A whole mutual-TLS cloud (CLC and CC at .254,
 * hosts .1 and .2): the source NC is kill -9'd exactly after it persisted `migrating` and before its
 * hypervisor heard of the migration (a hold on its hypervisor link: the NC's migrateOut call is
 * never forwarded), then started again. Its hypervisor cannot start the migration without the
 * credential the dead process held, so the CC re-issues both sides a pair of the next generation and
 * the item completes: the instance runs once, on the destination, and the source is cleaned.
 * Then two bare simhv daemons (.21 source, .22 destination) show how a re-issued pair is bound:
 * only to its item and its two hosts, and every credential of an earlier generation is refused.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainSpec } from '../../nc/hypervisor/driver.js';
import type { SimDriver } from '../../nc/hypervisor/sim/simDriver.js';
import { simSocketOf } from '../../scripts/cloudLayout.js';
import { TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, hypervisorDomains, placeOn, runningCopies } from '../helpers/cloudApi.js';
import { HypervisorHold } from '../helpers/hypervisorHold.js';
import { credentialPair, makeMigrationCa } from '../helpers/migrationPki.js';
import { openStream } from '../helpers/migrationStream.js';
import { SimhvHosts } from '../helpers/simhvPair.js';

const SUBNET = 54;
const n1 = `127.0.${SUBNET}.1`;
const n2 = `127.0.${SUBNET}.2`;
/** Where the source NC reaches its simhv: through the hold. */
const hold = new HypervisorHold(join(tmpdir(), `ferry-rejoin-hold-${process.pid}.sock`));
const cloud = new TestCloud(SUBNET, 2, {
  // 256 MiB guests take ~1.5 s (as migration.test.ts).
  simArgs: ['--time-scale', '0.5', '--cores', '4', '--memory-mib', '2048', '--disk-gib', '100'],
  ccArgs: ['--poll-interval-ms', '1000'],
  simSocket: (host) => (host === n1 ? hold.socket : undefined),
});

async function migration(id: string): Promise<any> {
  const r = await adminCall(cloud, { Action: 'DescribeMigrations', 'MigrationId.1': id });
  return arr<any>(r.migrationSet?.item)[0];
}

/** Polls DescribeMigrations until the migration is no longer active (a bounded wait on an observable state, not a sleep). */
async function waitFinal(id: string, timeoutMs: number): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = await migration(id);
    if (m && m.state !== 'active') return m;
    if (Date.now() > deadline) throw new Error(`migration ${id} still active: ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

const ncStore = (host: string): any => JSON.parse(readFileSync(join(cloud.baseDir, 'hosts', host, 'nc', 'nc.json'), 'utf8'));

beforeAll(async () => {
  await hold.start(simSocketOf({ baseDir: cloud.baseDir }, n1));
  await cloud.start();
}, 120_000);

afterAll(async () => {
  await cloud.destroy();
  await hold.close();
});

describe('a source NC killed right after it persisted migrating (issue 16 item 8)', () => {
  it('re-joins on restart with a re-issued credential: the item completes, the instance runs once on the destination, the source is clean', async () => {
    const [id] = await placeOn(cloud, n1, 1);
    const held = hold.holdNext((method, path) => method === 'POST' && path === `/v1/domains/${id}/migrations`);
    const r = await adminCall(cloud, { Action: 'MigrateInstances', InstanceId: id!, 'DestinationHost.1': n2, AllowHosts: 'true' });
    const migrationId = r.migrationId as string;
    await held;
    // The NC sends migrateOut only after its store says migrating: this is the crash point.
    const item = ncStore(n1).data.plans[migrationId].items[0];
    expect(item).toMatchObject({ instanceId: id, state: 'migrating', destinationUri: `https://${n2}:16514` });
    await cloud.crash(`nc-${n1}`);
    hold.dropHeld();
    // Its hypervisor never heard of the migration: the VM runs there, and the destination holds it paused.
    expect((await hypervisorDomains(cloud, n1)).find((d) => d.id === id)?.state).toBe('running');
    expect((await hypervisorDomains(cloud, n2)).find((d) => d.id === id)?.state).toBe('paused');

    await cloud.start([`nc-${n1}`]);
    const done = await waitFinal(migrationId, 60_000);
    const final = arr<any>(done.itemSet.item)[0];
    expect(final.state, JSON.stringify(final)).toBe('completed');
    expect(Number(final.stats.bytesTransferred)).toBeGreaterThan(0);
    expect(Object.fromEntries(await runningCopies(cloud))).toEqual({ [id!]: [n2] });
    expect((await hypervisorDomains(cloud, n1)).map((d) => d.id)).not.toContain(id);
    expect(ncStore(n1).data.instances[id!]).toBeUndefined();
    expect(ncStore(n2).data.instances[id!]).toMatchObject({ phase: 'running', migrationState: 'none', arrivedBy: migrationId });
    expect(ncStore(n2).data.incoming).toEqual({});
    // How: the restarted source asked for generation 1; the destination took it first, then the source.
    expect(cloud.log(`nc-${n1}`)).toMatch(/awaiting a re-issued one/);
    expect(cloud.log(`nc-${n1}`)).toMatch(/re-joining a migration with a re-issued credential/);
    expect(cloud.log(`nc-${n2}`)).toMatch(/credential re-issued/);
    // No state file or log holds a key.
    for (const name of [`nc-${n1}`, `nc-${n2}`, 'cc']) expect(cloud.log(name)).not.toContain('PRIVATE KEY');
    expect(JSON.stringify([ncStore(n1), ncStore(n2)])).not.toContain('PRIVATE KEY');
  }, 120_000);
});

// --- the re-issued pair on two bare hypervisors ---

const S = `127.0.${SUBNET}.21`;
const D = `127.0.${SUBNET}.22`;
const TLS_PORT = 16514;
const ITEM = { migrationId: 'mig-0000feed', instanceId: 'i-0000feed', source: S, destination: D };
const KEY = `${ITEM.migrationId}-${ITEM.instanceId}`;
const SPEC: DomainSpec = { id: ITEM.instanceId, imageId: 'emi-00000001', resources: { cores: 1, memoryMiB: 256, diskGiB: 5 } };

describe('a re-issued pair between two real simhv hosts', () => {
  const ca = makeMigrationCa('rejoin');
  const base = mkdtempSync(join(tmpdir(), 'ferry-rejoin-'));
  const hosts = new SimhvHosts(base, TLS_PORT);
  const target = { host: D, port: TLS_PORT, caPem: ca.certPem, instanceId: ITEM.instanceId, key: KEY };
  const gen = (generation: number, over: Partial<typeof ITEM> = {}) => credentialPair(ca, { ...ITEM, ...over, generation });
  const first = gen(0);
  const second = gen(1);
  let src: SimDriver;
  let dst: SimDriver;

  async function startHost(host: string): Promise<SimDriver> {
    const driver = await hosts.start(host);
    await driver.connect();
    return driver;
  }

  const destinationState = async (): Promise<unknown> => (await dst.info(ITEM.instanceId))?.state;

  beforeAll(async () => {
    src = await startHost(S);
    dst = await startHost(D);
    await src.create(SPEC);
    // The item's first pair; then the re-join's: the destination is prepared again with generation 1.
    await dst.prepareIncoming(SPEC, KEY, first.destination);
    await dst.prepareIncoming(SPEC, KEY, second.destination);
  }, 60_000);

  afterAll(async () => {
    await hosts.stop();
    rmSync(base, { recursive: true, force: true });
  });

  it.each([
    ['the superseded source credential (the one the dead NC held)', () => first.source, 'superseded'],
    ['a re-issued credential of another migration', () => gen(1, { migrationId: 'mig-0000beef' }).source, 'other-migration'],
    ['a re-issued credential of another instance', () => gen(1, { instanceId: 'i-0000beef' }).source, 'other-migration'],
    ['a re-issued credential for another source host', () => gen(1, { source: `127.0.${SUBNET}.23` }).source, 'other-host'],
    ['a re-issued credential for another destination', () => gen(1, { destination: `127.0.${SUBNET}.23` }).source, 'other-host'],
    ['a later generation than the destination holds', () => gen(2).source, 'superseded'],
  ])('the destination refuses %s with a coded error and changes nothing', async (_name, cred, reason) => {
    expect(await openStream(target, cred())).toMatchObject({ status: 403, code: 'MigrationCredentialRejected', reason });
    expect(await destinationState()).toBe('paused');
  });

  it('a source holding a later generation refuses a destination that still serves an earlier one; the VM stays on the source', async () => {
    // A second item, so that this refused migration id does not stand in the way of the first's.
    const other = { ...ITEM, migrationId: 'mig-0000fee2', instanceId: 'i-0000fee2' };
    const spec = { ...SPEC, id: other.instanceId };
    const key = `${other.migrationId}-${other.instanceId}`;
    await src.create(spec);
    await dst.prepareIncoming(spec, key, credentialPair(ca, { ...other, generation: 1 }).destination);
    const refused = await src.migrateOut(other.instanceId, {
      migrationId: key, destinationUri: `https://${D}:${TLS_PORT}`, credential: credentialPair(ca, { ...other, generation: 2 }).source,
    }).then(() => undefined, (e: Error & { code?: string }) => e);
    expect(refused).toMatchObject({ code: 'MigrationCredentialRejected' });
    expect(refused?.message).toMatch(/superseded/);
    expect((await src.info(other.instanceId))?.state).toBe('running');
    expect((await dst.info(other.instanceId))?.state).toBe('paused');
  });

  it('the source\'s hypervisor starts the re-joined migration with the re-issued credential, and the VM moves', async () => {
    const stats = await src.migrateOut(ITEM.instanceId, { migrationId: KEY, destinationUri: `https://${D}:${TLS_PORT}`, credential: second.source });
    expect(stats.bytesTransferred).toBeGreaterThan(0);
    expect(await destinationState()).toBe('running');
    expect(await src.info(ITEM.instanceId)).toBeUndefined();
  });
});
