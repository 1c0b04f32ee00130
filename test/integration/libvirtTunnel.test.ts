/**
 * Per-migration tunnels on real libvirt (scripts/libvirt-lab.sh, two libvirtd "hosts" on
 * 127.0.57.1 and 127.0.57.2): the drivers have NO libvirt TLS directory, only the tunnel, so a
 * credentialed migration that completes went through it. The destination checks the source's
 * certificate exactly as the simulated hypervisor does (checkMigrationPeer): a foreign, an
 * expired, a reused (of a migration already cleaned) and another migration's credential are each
 * refused with MigrationCredentialRejected and its reason, and the guest keeps running on the
 * source. Two migrations out of host 1 into host 2 run at once: their libvirt jobs overlap.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FerryError } from '../../shared/errors/registry.js';
import type { DomainSpec, MigrationCredential, MigrationStats } from '../../nc/hypervisor/driver.js';
import { LibvirtDriver, type LibvirtDriverOptions } from '../../nc/hypervisor/libvirt/libvirtDriver.js';
import { labLayout, startLab, stopLab, virsh } from '../helpers/libvirtLab.js';
import { credentialFor, credentialPair, makeMigrationCa, type TestMigrationCa } from '../helpers/migrationPki.js';

const ADDRS = ['127.0.57.1', '127.0.57.2'] as const;
const lab = labLayout('/tmp/ferry-lab-tunnel/driver', { addrs: ADDRS, port: 17509 });
const [H1, H2] = lab.hosts;
const TUNNEL = { port: 17514, local: 'host' as const, dataPorts: { min: 17600, max: 17699 } };
const drivers: LibvirtDriver[] = [];
const ids: string[] = [];
let ca: TestMigrationCa;
let foreign: TestMigrationCa;

function driver(n: 1 | 2, extra: Partial<LibvirtDriverOptions> = {}): LibvirtDriver {
  const d = new LibvirtDriver({
    uri: (n === 1 ? H1 : H2).uri, host: n === 1 ? ADDRS[0] : ADDRS[1], tunnel: TUNNEL, guestMemoryCapMiB: 64, guestVcpuCap: 1, progressIntervalMs: 50, ...extra,
  });
  drivers.push(d);
  return d;
}

let host2: LibvirtDriver | undefined;
/** Host 2's NC: one driver, as one NC process holds the host's tunnel listener port. */
function destination(): LibvirtDriver {
  host2 ??= driver(2);
  return host2;
}

function spec(id: string): DomainSpec {
  ids.push(id);
  return { id, resources: { cores: 1, memoryMiB: 64, diskGiB: 1 }, imageId: 'emi-firmware' };
}

const item = (migrationId: string, instanceId: string) => ({ migrationId, instanceId, source: ADDRS[0], destination: ADDRS[1] });
const key = (migrationId: string, id: string): string => `${migrationId}-${id}`;

async function refusal(p: Promise<unknown>): Promise<{ code: string; reason: unknown; message: string }> {
  const e = await p.then(() => undefined, (x: unknown) => x as FerryError);
  return { code: e?.code ?? 'no error', reason: e?.fields.reason, message: e?.message ?? '' };
}

async function stillOnSource(id: string): Promise<void> {
  expect(await virsh(H1.uri, 'domstate', id)).toBe('running');
  expect(await virsh(H2.uri, 'list', '--all', '--name')).not.toContain(id);
}

beforeAll(async () => {
  await startLab(lab);
  ca = makeMigrationCa('tunnel');
  foreign = makeMigrationCa('foreign');
}, 600_000);

afterEach(async () => {
  const done = ids.splice(0);
  for (const n of [1, 2] as const) {
    const d = driver(n);
    for (const id of done) await d.destroy(id).catch(() => undefined);
  }
}, 60_000);

afterAll(async () => {
  for (const d of drivers) await d.close();
  await stopLab(lab);
}, 120_000);

describe('libvirt migrations through per-migration tunnels', () => {
  it('migrates with the CC-style credential pair through the tunnel, then refuses that pair as reused', async () => {
    const src = driver(1);
    const dst = destination();
    const s = spec('i-tn000001');
    await src.create(s);
    const pair = credentialPair(ca, item('mig-t1', s.id));
    await dst.prepareIncoming(s, key('mig-t1', s.id), pair.destination);
    const stats = await src.migrateOut(s.id, { migrationId: key('mig-t1', s.id), destinationUri: H2.uri, credential: pair.source });
    console.log(`tunnelled migration: job ${stats.elapsedMs} ms, downtime ${stats.downtimeMs} ms, ${stats.bytesTransferred} bytes`);
    expect(stats.bytesTransferred).toBeGreaterThan(0);
    expect(await virsh(H2.uri, 'domstate', '--reason', s.id)).toBe('running (migrated)');
    expect(await virsh(H1.uri, 'list', '--all', '--name')).not.toContain(s.id);

    // Back on host 1 (a new guest of the same id), the cleaned migration's credentials are dead.
    await dst.destroy(s.id);
    await src.create(s);
    // The destination's own credential cannot be prepared again once it arrived (cleaning revoked it).
    await expect.poll(async () => (await refusal(dst.prepareIncoming(s, key('mig-t1', s.id), pair.destination))).reason, { timeout: 10_000 })
      .toBe('replayed');
    // A fresh destination credential of the same item: the source's spent one is refused by the destination...
    const again = credentialPair(ca, item('mig-t1', s.id));
    await dst.prepareIncoming(s, key('mig-t1', s.id), again.destination);
    const restarted = driver(1); // a source process with no memory of it (or a thief holding it)
    const byDestination = await refusal(restarted.migrateOut(s.id, { migrationId: key('mig-t1', s.id), destinationUri: H2.uri, credential: pair.source }));
    expect(byDestination).toMatchObject({ code: 'MigrationCredentialRejected', reason: 'replayed' });
    expect(byDestination.message).toMatch(/destination refused/);
    // ...and by the source that ended it.
    const bySource = await refusal(src.migrateOut(s.id, { migrationId: key('mig-t1', s.id), destinationUri: H2.uri, credential: pair.source }));
    expect(bySource).toMatchObject({ code: 'MigrationCredentialRejected', reason: 'replayed' });
    await stillOnSource(s.id);
    await dst.abortIncoming(s.id, key('mig-t1', s.id));
  }, 120_000);

  const hour = 3_600_000;
  let refusedCase = 0;
  it.each<[string, (id: string) => MigrationCredential, string, RegExp]>([
    ['a certificate of another CA, presented with ours', (id) => ({ ...credentialPair(foreign, item('mig-t2', id)).source, caPem: ca.certPem }), 'foreign-ca', /destination refused/],
    ['a credential wholly of another CA', (id) => credentialPair(foreign, item('mig-t2', id)).source, 'foreign-ca', /destination certificate/],
    ['an expired credential', (id) => credentialFor(ca, { migrationId: 'mig-t2', instanceId: id, side: 'source', host: ADDRS[0], peerHost: ADDRS[1], generation: 0 },
      { notBefore: Date.now() - 2 * hour, notAfter: Date.now() - hour }), 'expired', /destination refused/],
    ['a credential for the other host pair', (id) => credentialPair(ca, { ...item('mig-t2', id), source: '127.0.57.9' }).source, 'other-host', /destination/],
  ])('refuses %s; the guest keeps running on the source', async (_name, cred, reason, side) => {
    const src = driver(1);
    const dst = destination();
    const s = spec(`i-tn00002${++refusedCase}`);
    await src.create(s);
    await dst.prepareIncoming(s, key('mig-t2', s.id), credentialPair(ca, item('mig-t2', s.id)).destination);
    const r = await refusal(src.migrateOut(s.id, { migrationId: key('mig-t2', s.id), destinationUri: H2.uri, credential: cred(s.id) }));
    console.log(`refused: ${r.message}`);
    expect(r).toMatchObject({ code: 'MigrationCredentialRejected', reason });
    expect(r.message).toMatch(side);
    await stillOnSource(s.id);
    await dst.abortIncoming(s.id, key('mig-t2', s.id));
  }, 60_000);

  it('refuses the credential of another migration (prepared for one, presented for another)', async () => {
    const src = driver(1);
    const dst = destination();
    const s = spec('i-tn000003');
    await src.create(s);
    await dst.prepareIncoming(s, key('mig-t3', s.id), credentialPair(ca, item('mig-t3', s.id)).destination);
    const other = credentialPair(ca, item('mig-t4', s.id)).source;
    const r = await refusal(src.migrateOut(s.id, { migrationId: key('mig-t4', s.id), destinationUri: H2.uri, credential: other }));
    expect(r).toMatchObject({ code: 'MigrationCredentialRejected', reason: 'other-migration' });
    // Presented under the prepared migration's name, it is not even sent: it names another migration.
    const named = await refusal(src.migrateOut(s.id, { migrationId: key('mig-t3', s.id), destinationUri: H2.uri, credential: other }));
    expect(named.code).toBe('MigrationCredentialInvalid');
    await stillOnSource(s.id);
    // The refusals left the prepared migration intact: its own credential still migrates.
    const good = credentialPair(ca, item('mig-t3', s.id));
    await dst.prepareIncoming(s, key('mig-t3', s.id), good.destination);
    await src.migrateOut(s.id, { migrationId: key('mig-t3', s.id), destinationUri: H2.uri, credential: good.source });
    expect(await virsh(H2.uri, 'domstate', s.id)).toBe('running');
  }, 60_000);

  it('an aborted tunnelled migration leaves the guest on the source and its credentials revoked', async () => {
    const src = driver(1, { migrationBandwidthMiBs: 1 });
    const dst = destination();
    const s = spec('i-tn000004');
    await src.create(s);
    const pair = credentialPair(ca, item('mig-t6', s.id));
    await dst.prepareIncoming(s, key('mig-t6', s.id), pair.destination);
    let progressed = false;
    src.onEvent((e) => {
      if (e.kind === 'migration-progress' && e.progress.id === s.id) progressed = true;
    });
    const migrating = refusal(src.migrateOut(s.id, { migrationId: key('mig-t6', s.id), destinationUri: H2.uri, credential: pair.source }));
    await expect.poll(() => progressed, { timeout: 20_000, interval: 20 }).toBe(true);
    await src.abortMigration(s.id, key('mig-t6', s.id));
    expect((await migrating).code).toBe('MigrationAborted');
    await dst.abortIncoming(s.id, key('mig-t6', s.id));
    await stillOnSource(s.id);
    expect((await refusal(dst.prepareIncoming(s, key('mig-t6', s.id), pair.destination))).reason).toBe('replayed');
    expect((await refusal(src.migrateOut(s.id, { migrationId: key('mig-t6', s.id), destinationUri: H2.uri, credential: pair.source }))).reason).toBe('replayed');
  }, 60_000);

  it('runs two migrations out of host 1 and into host 2 at once, each with its own credentials', async () => {
    // 1 MiB/s: each ~0.6 MB firmware guest's job takes over a second, long enough to see two at once.
    const src = driver(1, { migrationBandwidthMiBs: 1 });
    const dst = destination();
    const specs = [spec('i-tn000005'), spec('i-tn000006')];
    for (const s of specs) await src.create(s);
    const pairs = specs.map((s) => credentialPair(ca, item('mig-t5', s.id)));
    for (const [i, s] of specs.entries()) await dst.prepareIncoming(s, key('mig-t5', s.id), pairs[i]!.destination);
    const t0 = Date.now();
    const runs = await Promise.all(specs.map(async (s, i): Promise<{ stats: MigrationStats; end: number }> => {
      const stats = await src.migrateOut(s.id, { migrationId: key('mig-t5', s.id), destinationUri: H2.uri, credential: pairs[i]!.source });
      return { stats, end: Date.now() - t0 };
    }));
    // Each job's span from libvirt's own elapsed time, ending when its migrateOut returned.
    const spans = runs.map((r) => ({ from: r.end - r.stats.elapsedMs, to: r.end }));
    console.log(`concurrent tunnelled jobs (ms from start): ${JSON.stringify(spans)}; jobs ${runs.map((r) => r.stats.elapsedMs).join(', ')} ms`);
    const [a, b] = spans as [typeof spans[0], typeof spans[0]];
    expect(runs.every((r) => r.stats.elapsedMs > 500)).toBe(true);
    const overlap = Math.min(a.to, b.to) - Math.max(a.from, b.from);
    expect(overlap).toBeGreaterThan(Math.min(...runs.map((r) => r.stats.elapsedMs)) / 2);
    for (const s of specs) expect(await virsh(H2.uri, 'domstate', '--reason', s.id)).toBe('running (migrated)');
  }, 120_000);
});
