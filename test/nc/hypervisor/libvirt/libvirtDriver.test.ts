/** The libvirt driver's own logic against a hand-written fake libvirtd (fakeLibvirt.ts). */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, systemClock } from '../../../../shared/clock.js';
import { isFerryError } from '../../../../shared/errors/registry.js';
import type { DomainSpec, HypervisorEvent } from '../../../../nc/hypervisor/driver.js';
import { buildDomainXml } from '../../../../nc/hypervisor/libvirt/domainXml.js';
import { VIR_ERR } from '../../../../nc/hypervisor/libvirt/errorMap.js';
import { VIR } from '../../../../nc/hypervisor/libvirt/ffi.js';
import { LibvirtCallError } from '../../../../nc/hypervisor/libvirt/libvirtApi.js';
import { LibvirtDriver, type LibvirtDriverOptions } from '../../../../nc/hypervisor/libvirt/libvirtDriver.js';
import { TunnelListener } from '../../../../nc/hypervisor/libvirt/tunnelListener.js';
import { FakeLibvirtd } from './fakeLibvirt.js';
import { credentialPair, makeMigrationCa } from '../../../helpers/migrationPki.js';
import { codeOf } from '../../../helpers/codeOf.js';

const URI = 'qemu+tcp://127.0.0.1:16511/system';
const DEST = 'qemu+tcp://127.0.0.2:16509/system';
const spec: DomainSpec = { id: 'i-00000001', resources: { cores: 1, memoryMiB: 256, diskGiB: 5 }, imageId: 'emi-1' };
const cred = { caPem: 'CA', certPem: 'CERT', keyPem: 'KEY' };
const dirs: string[] = [];

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(extra: Partial<LibvirtDriverOptions> = {}): { fake: FakeLibvirtd; driver: LibvirtDriver; events: HypervisorEvent[]; clock: ManualClock } {
  const fake = new FakeLibvirtd();
  const clock = new ManualClock(1_000);
  const driver = new LibvirtDriver({ uri: URI, host: '127.0.0.1', domainType: 'qemu', guestMemoryCapMiB: 64, open: fake.open, clock, ...extra });
  const events: HypervisorEvent[] = [];
  driver.onEvent((e) => events.push(e));
  return { fake, driver, events, clock };
}

function tlsDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'ferry-lvdrv-'));
  dirs.push(d);
  return join(d, 'tls');
}


const xmlOf = (s: DomainSpec): string => buildDomainXml({ spec: s, domainType: 'qemu', startedAt: 5, emulator: 'q', memoryMiB: 64, vcpus: 1 });
const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('LibvirtDriver', () => {
  it('describes the host from libvirt, and re-opens a connection after libvirtd was unreachable', async () => {
    const { fake, driver } = setup();
    fake.reachable = false;
    expect(await codeOf(driver.connect())).toBe('HypervisorUnavailable');
    fake.reachable = true;
    expect(await driver.connect()).toEqual({ host: '127.0.0.1', capacity: { cores: 4, memoryMiB: 4096, diskGiB: 100 }, hypervisor: 'libvirt' });
    expect(fake.opens).toBe(2);
  });

  it('creates a capped TCG domain recording the VM type, idempotently', async () => {
    const { fake, driver, events } = setup();
    const d = await driver.create(spec);
    expect(d).toMatchObject({ id: spec.id, state: 'running', resources: spec.resources, imageId: 'emi-1', startedAt: 1_000 });
    const xml = fake.domains.get(spec.id)?.xml ?? '';
    expect(xml).toMatch(/^<domain type='qemu'>/);
    expect(xml).toContain("<memory unit='MiB'>64</memory>");
    expect(await driver.create(spec)).toEqual(d);
    expect(events).toEqual([{ kind: 'started', id: spec.id }]);
    expect(await codeOf(driver.create({ ...spec, imageId: 'emi-2' }))).toBe('DomainExists');
  });

  it('leaves no definition behind when the domain fails to start', async () => {
    const { fake, driver } = setup();
    fake.failStart = new LibvirtCallError('virDomainCreate', { code: VIR_ERR.OPERATION_FAILED, domain: 10, message: 'qemu died' });
    expect(await codeOf(driver.create(spec))).toBe('HypervisorInternalError');
    expect(fake.domains.size).toBe(0);
  });

  it('destroys and undefines; an unknown domain is not an error', async () => {
    const { fake, driver, events } = setup();
    await driver.create(spec);
    await driver.destroy(spec.id);
    expect(fake.domains.size).toBe(0);
    await driver.destroy(spec.id);
    expect(events.filter((e) => e.kind === 'stopped')).toEqual([{ kind: 'stopped', id: spec.id, reason: 'destroyed' }]);
  });

  it('hides a definition left by a migration and drops it at list()', async () => {
    const { fake, driver } = setup();
    await driver.create(spec);
    await driver.create({ ...spec, id: 'i-00000002' });
    fake.complete(fake.domains.get(spec.id)!);
    expect(await driver.info(spec.id)).toBeUndefined();
    expect((await driver.list()).map((d) => d.id)).toEqual(['i-00000002']);
    expect([...fake.domains.keys()]).toEqual(['i-00000002']);
  });

  describe('destination side', () => {
    it('refuses an incoming domain that does not fit', async () => {
      const { fake, driver } = setup();
      fake.put('i-big', xmlOf({ ...spec, id: 'i-big', resources: { cores: 4, memoryMiB: 1024, diskGiB: 5 } }), VIR.DOMAIN_STATE.RUNNING);
      expect(await codeOf(driver.prepareIncoming(spec, 'm-1'))).toBe('InsufficientHostResources');
    });

    it('needs the TLS directory for a credential', async () => {
      const { driver } = setup();
      expect(await codeOf(driver.prepareIncoming(spec, 'm-1', cred))).toBe('HypervisorBadRequest');
    });

    it('holds the server TLS files until the domain arrives, then says so', async () => {
      const dir = tlsDir();
      const { fake, driver, events, clock } = setup({ migrationTlsDir: dir });
      await driver.prepareIncoming(spec, 'm-1', cred);
      expect(readdirSync(dir).sort()).toEqual(['ca-cert.pem', 'server-cert.pem', 'server-key.pem']);
      clock.advance(200);
      await flush();
      expect(events).toEqual([]);
      fake.put(spec.id, xmlOf(spec), VIR.DOMAIN_STATE.RUNNING);
      clock.advance(200);
      await expect.poll(() => events).toEqual([{ kind: 'migration-incoming-done', migrationId: 'm-1', id: spec.id }]);
      await expect.poll(() => readdirSync(dir)).toEqual([]);
      await driver.prepareIncoming(spec, 'm-1'); // a repeat after arrival is fine
    });

    it('abortIncoming removes a half-received domain and its files, but keeps one that arrived', async () => {
      const dir = tlsDir();
      const { fake, driver } = setup({ migrationTlsDir: dir });
      await driver.prepareIncoming(spec, 'm-1', cred);
      fake.put(spec.id, xmlOf(spec), VIR.DOMAIN_STATE.PAUSED);
      await driver.abortIncoming(spec.id, 'm-1');
      expect(fake.domains.has(spec.id)).toBe(false);
      expect(readdirSync(dir)).toEqual([]);

      await driver.prepareIncoming(spec, 'm-2');
      fake.put(spec.id, xmlOf(spec), VIR.DOMAIN_STATE.RUNNING);
      await driver.abortIncoming(spec.id, 'm-2');
      expect(fake.domains.get(spec.id)?.state).toBe(VIR.DOMAIN_STATE.RUNNING);
    });
    it('a paused guest arrives suspended (paused by its user): that is its arrival, its credential goes, and abort keeps it', async () => {
      const dir = tlsDir();
      const { fake, driver, events, clock } = setup({ migrationTlsDir: dir });
      await driver.prepareIncoming(spec, 'm-1', cred);
      fake.put(spec.id, xmlOf(spec), VIR.DOMAIN_STATE.PAUSED);
      fake.domains.get(spec.id)!.reason = 2; // VIR_DOMAIN_PAUSED_MIGRATION: still receiving
      clock.advance(200);
      await flush();
      expect(events).toEqual([]);
      expect(readdirSync(dir)).toHaveLength(3);
      fake.domains.get(spec.id)!.reason = VIR.PAUSED_REASON.USER; // libvirt's finish with VIR_MIGRATE_PAUSED
      clock.advance(200);
      await expect.poll(() => events).toEqual([{ kind: 'migration-incoming-done', migrationId: 'm-1', id: spec.id }]);
      await expect.poll(() => readdirSync(dir)).toEqual([]);
      await driver.prepareIncoming(spec, 'm-1'); // a repeat after arrival is fine
      expect(await codeOf(driver.prepareIncoming(spec, 'm-9'))).toBe('DomainExists');
      await driver.abortIncoming(spec.id, 'm-1');
      expect(fake.domains.get(spec.id)?.state).toBe(VIR.DOMAIN_STATE.PAUSED);
    });
  });

  describe('source side', () => {
    it('migrates live peer-to-peer to the destination address and returns the completed job statistics', async () => {
      const { fake, driver, events } = setup();
      await driver.create(spec);
      const stats = await driver.migrateOut(spec.id, { migrationId: 'm-1', destinationUri: DEST });
      expect(stats).toEqual({ migrationId: 'm-1', id: spec.id, elapsedMs: 550, downtimeMs: 17, bytesTransferred: 623_000, iterations: 2 });
      const m = VIR.MIGRATE;
      expect(fake.migrations).toEqual([{
        name: spec.id, destUri: DEST, params: { migrate_uri: 'tcp://127.0.0.2', listen_address: '127.0.0.2' }, flags: m.LIVE | m.PEER2PEER | m.PERSIST_DEST,
      }]);
      expect(fake.domains.has(spec.id)).toBe(false);
      expect(events.at(-1)).toEqual({ kind: 'stopped', id: spec.id, reason: 'migrated' });
    });

    it('writes the client TLS files only for the migration and asks for TLS', async () => {
      const dir = tlsDir();
      const { fake, driver } = setup({ migrationTlsDir: dir });
      await driver.create(spec);
      let during: string[] = [];
      fake.migrate = async (_n, d) => {
        during = readdirSync(dir).sort();
        fake.complete(d);
      };
      await driver.migrateOut(spec.id, { migrationId: 'm-1', destinationUri: DEST, credential: cred });
      expect(during).toEqual(['ca-cert.pem', 'client-cert.pem', 'client-key.pem']);
      expect(readdirSync(dir)).toEqual([]);
      expect((fake.migrations[0]?.flags ?? 0) & VIR.MIGRATE.TLS).toBe(VIR.MIGRATE.TLS);
    });

    it('prefers the tunnel to the TLS directory: QEMU migrates in plain TCP to the tunnel\'s local end', async () => {
      const dir = tlsDir();
      const tunnel = { port: 17811, local: 'host' as const, dataPorts: { min: 17830, max: 17839 } };
      // The certificates' validity is checked against the driver's clock: a real one here.
      const { fake, driver } = setup({ host: '127.0.58.1', migrationTlsDir: dir, tunnel, clock: systemClock });
      const ca = makeMigrationCa('unit');
      const pair = credentialPair(ca, { migrationId: 'm', instanceId: spec.id, source: '127.0.58.1', destination: '127.0.58.2' });
      const destination = new TunnelListener({ listenHost: '127.0.58.2', port: 17811, localAddress: '127.0.58.2', dataPorts: tunnel.dataPorts, clock: systemClock });
      try {
        await destination.expect(spec.id, `m-${spec.id}`, pair.destination);
        await driver.create(spec);
        let during: string[] = [];
        fake.migrate = async (_n, d) => {
          during = existsSync(dir) ? readdirSync(dir) : [];
          fake.complete(d);
        };
        await driver.migrateOut(spec.id, { migrationId: `m-${spec.id}`, destinationUri: 'qemu+tcp://127.0.58.2:16509/system', credential: pair.source });
        const m = fake.migrations[0];
        expect(m?.params[VIR.MIGRATE_PARAM_URI]).toMatch(/^tcp:\/\/127\.0\.58\.1:178[34]\d$/);
        expect(m?.params[VIR.MIGRATE_PARAM_LISTEN_ADDRESS]).toBe('127.0.58.2');
        expect((m?.flags ?? 0) & VIR.MIGRATE.TLS).toBe(0);
        expect(during).toEqual([]);
      } finally {
        await destination.close();
        await driver.close();
      }
    });

    it('opens the migration\'s own connection while the tunnel is being set up; a refused tunnel closes it, libvirt never asked', async () => {
      // The destination's "tunnel listener" takes the TCP connection and never answers the TLS handshake.
      const held: net.Socket[] = [];
      const server = net.createServer((s) => { held.push(s); });
      await new Promise<void>((r) => server.listen(19790, '127.0.93.2', r));
      const tunnel = { port: 19790, local: 'host' as const, dataPorts: { min: 19791, max: 19794 } };
      const { fake, driver } = setup({ host: '127.0.93.1', tunnel, clock: systemClock });
      const ca = makeMigrationCa('unit');
      const pair = credentialPair(ca, { migrationId: 'm', instanceId: spec.id, source: '127.0.93.1', destination: '127.0.93.2' });
      try {
        await driver.create(spec);
        const out = driver.migrateOut(spec.id, { migrationId: `m-${spec.id}`, destinationUri: 'qemu+tcp://127.0.93.2:16509/system', credential: pair.source })
          .then(() => 'migrated', (e: unknown) => (isFerryError(e) ? `${e.code} ${String(e.fields.reason)}` : String(e)));
        // The driver's connection and the migration's own, opened while the handshake waits.
        await vi.waitFor(() => expect([held.length, fake.opens, fake.openSessions]).toEqual([1, 2, 2]), { timeout: 30_000 });
        for (const s of held) s.destroy();
        expect(await out).toBe('MigrationCredentialRejected handshake');
        expect(fake.openSessions).toBe(1);
        expect(fake.migrations).toEqual([]);
      } finally {
        server.close();
        await driver.close();
      }
    });

    it('a migration connection that cannot be opened releases the route it got meanwhile (no TLS files left)', async () => {
      const dir = tlsDir();
      const fake = new FakeLibvirtd();
      // The driver's own connection opens; the migration's does not.
      const open: typeof fake.open = (uri) => (fake.opens === 0 ? fake.open(uri) : Promise.reject(new LibvirtCallError('virConnectOpen', {
        code: VIR_ERR.SYSTEM_ERROR, domain: 7, message: `unable to connect to server at '${uri}': Connection refused`,
      })));
      const { driver } = setup({ migrationTlsDir: dir, open });
      await driver.create(spec);
      expect(await codeOf(driver.migrateOut(spec.id, { migrationId: 'm-1', destinationUri: DEST, credential: cred }))).toBe('HypervisorUnavailable');
      expect(readdirSync(dir)).toEqual([]);
      expect(fake.migrations).toEqual([]);
      await driver.close();
    });

    it.each([
      ['a TLS migration without the TLS directory', {}, { credential: cred }, 'MigrationFailed'],
      ['an unknown domain', { id: 'i-nosuch' }, {}, 'DomainNotFound'],
    ])('refuses %s', async (_what, idOverride: { id?: string }, extra, code) => {
      const { driver } = setup();
      await driver.create(spec);
      expect(await codeOf(driver.migrateOut(idOverride.id ?? spec.id, { migrationId: 'm-1', destinationUri: DEST, ...extra }))).toBe(code);
    });

    it('refuses to migrate a domain that is not running', async () => {
      const { fake, driver } = setup();
      await driver.create(spec);
      fake.domains.get(spec.id)!.state = VIR.DOMAIN_STATE.PAUSED;
      expect(await codeOf(driver.migrateOut(spec.id, { migrationId: 'm-1', destinationUri: DEST }))).toBe('DomainStateConflict');
    });

    it('translates a failed migration and keeps the guest', async () => {
      const { fake, driver } = setup();
      await driver.create(spec);
      fake.migrate = async () => {
        throw new LibvirtCallError('virDomainMigrateToURI3', { code: VIR_ERR.OPERATION_FAILED, domain: 10, message: "The certificate hasn't got a known issuer" });
      };
      const e = await driver.migrateOut(spec.id, { migrationId: 'm-1', destinationUri: DEST }).catch((x: unknown) => x);
      expect(isFerryError(e) && e.code).toBe('MigrationFailed');
      expect((e as Error).message).toContain('known issuer');
      expect(await driver.info(spec.id)).toMatchObject({ state: 'running' });
    });

    it('aborts a running migration; a repeat of the same migration joins it, another one is refused', async () => {
      const { fake, driver } = setup();
      await driver.create(spec);
      let fail: (e: unknown) => void = () => undefined;
      fake.migrate = () => new Promise((_resolve, reject) => (fail = reject));
      const target = { migrationId: 'm-1', destinationUri: DEST };
      const first = driver.migrateOut(spec.id, target);
      await flush();
      expect(driver.migrateOut(spec.id, target)).toBe(first);
      expect(await codeOf(driver.migrateOut(spec.id, { ...target, migrationId: 'm-2' }))).toBe('DomainStateConflict');
      await driver.abortMigration(spec.id, 'm-1');
      expect(fake.aborted).toEqual([spec.id]);
      fail(new LibvirtCallError('virDomainMigrateToURI3', { code: VIR_ERR.OPERATION_ABORTED, domain: 10, message: 'migration out job: canceled by client' }));
      expect(await codeOf(first)).toBe('MigrationAborted');
      expect(await driver.info(spec.id)).toMatchObject({ state: 'running' });
      await driver.abortMigration(spec.id, 'm-1'); // over: nothing to do
      expect(fake.aborted).toHaveLength(1);
    });

    it('joins a migration an earlier NC process left running in libvirtd', async () => {
      const { fake, driver, clock } = setup();
      await driver.create(spec);
      const d = fake.domains.get(spec.id)!;
      d.jobType = VIR.JOB_TYPE.UNBOUNDED; // started by the NC before it died
      const stats = driver.migrateOut(spec.id, { migrationId: 'm-1', destinationUri: DEST });
      await flush();
      fake.complete(d);
      clock.advance(200);
      expect(await stats).toMatchObject({ migrationId: 'm-1', downtimeMs: 17, bytesTransferred: 623_000 });
      expect(fake.migrations).toEqual([]);
      expect(fake.domains.has(spec.id)).toBe(false);
    });
  });

  describe('a repeat racing the end of the earlier process\'s job', () => {
    it('the job ends between the state read and the job read (libvirt: "domain is not running"): the repeat joins it', async () => {
      const { fake, driver, clock } = setup();
      await driver.create(spec);
      const d = fake.domains.get(spec.id)!;
      d.jobType = VIR.JOB_TYPE.UNBOUNDED;
      let reads = 0;
      fake.beforeJobStats = (x) => { if (reads++ === 0) fake.complete(x); };
      const stats = driver.migrateOut(spec.id, { migrationId: 'm-1', destinationUri: DEST });
      await flush();
      clock.advance(200);
      expect(await stats).toMatchObject({ migrationId: 'm-1', downtimeMs: 17 });
      expect(fake.migrations).toEqual([]);
    });

    it('the job ends after the repeat looked (no job seen) and before its own call took: the repeat returns that job\'s statistics', async () => {
      const { fake, driver } = setup();
      await driver.create(spec);
      const d = fake.domains.get(spec.id)!;
      // libvirtd is finishing the earlier job: no job listed, but the guest leaves under the repeat's own call.
      fake.migrate = async (_n, x) => {
        fake.complete(x);
        throw new LibvirtCallError('virDomainMigrateToURI3', { code: VIR_ERR.OPERATION_INVALID, domain: 10, message: 'Requested operation is not valid: domain is not running' });
      };
      expect(await driver.migrateOut(spec.id, { migrationId: 'm-1', destinationUri: DEST })).toMatchObject({ migrationId: 'm-1', downtimeMs: 17 });
      expect(fake.domains.has(spec.id)).toBe(false);
      expect(d.state).toBe(VIR.DOMAIN_STATE.SHUTOFF);
    });

    it('"domain is not running" with the guest still here (not migrated) stays a failure', async () => {
      const { fake, driver } = setup();
      await driver.create(spec);
      fake.migrate = async (_n, x) => {
        x.state = VIR.DOMAIN_STATE.SHUTOFF;
        x.reason = 2; // VIR_DOMAIN_SHUTOFF_DESTROYED
        throw new LibvirtCallError('virDomainMigrateToURI3', { code: VIR_ERR.OPERATION_INVALID, domain: 10, message: 'Requested operation is not valid: domain is not running' });
      };
      expect(await codeOf(driver.migrateOut(spec.id, { migrationId: 'm-1', destinationUri: DEST }))).toBe('DomainStateConflict');
    });
  });

  describe('with libvirt lifecycle events', () => {
    it('publishes what libvirt reports instead of repeating its own account', async () => {
      const { fake, driver, events } = setup({ lifecycleEvents: true });
      await driver.create(spec);
      expect(events).toEqual([]); // libvirt reports the start
      const E = VIR.EVENT;
      fake.fire(spec.id, E.STARTED, 0);
      fake.fire(spec.id, E.STOPPED, VIR.EVENT_STOPPED.CRASHED);
      fake.fire('i-elsewhere', E.STOPPED, VIR.EVENT_STOPPED.MIGRATED);
      fake.fire(spec.id, E.SUSPENDED, 0);
      expect(events).toEqual([
        { kind: 'started', id: spec.id },
        { kind: 'stopped', id: spec.id, reason: 'crashed' },
        { kind: 'stopped', id: 'i-elsewhere', reason: 'migrated' },
      ]);
    });

    it('takes a paused guest suspended on arrival as its arrival at once (libvirt suspends it, never resumes it)', async () => {
      const { fake, driver, events } = setup({ lifecycleEvents: true });
      await driver.prepareIncoming(spec, 'm-1');
      fake.put(spec.id, xmlOf(spec), VIR.DOMAIN_STATE.PAUSED);
      fake.domains.get(spec.id)!.reason = VIR.PAUSED_REASON.USER;
      fake.fire(spec.id, VIR.EVENT.SUSPENDED, 0);
      await expect.poll(() => events).toEqual([{ kind: 'migration-incoming-done', migrationId: 'm-1', id: spec.id }]);
    });

    it('takes a resumed incoming domain as its arrival at once', async () => {
      const { fake, driver, events } = setup({ lifecycleEvents: true });
      await driver.prepareIncoming(spec, 'm-1');
      fake.put(spec.id, xmlOf(spec), VIR.DOMAIN_STATE.RUNNING);
      fake.fire(spec.id, VIR.EVENT.RESUMED, VIR.EVENT_RESUMED.MIGRATED);
      await expect.poll(() => events).toEqual([{ kind: 'migration-incoming-done', migrationId: 'm-1', id: spec.id }]);
    });
  });
});

describe('LibvirtDriver pause and resume (issue 18)', () => {
  it('virDomainSuspend makes the domain suspended (paused, reason user), virDomainResume running; both idempotent', async () => {
    const { driver } = setup();
    await driver.create(spec);
    expect((await driver.pause(spec.id)).state).toBe('suspended');
    expect((await driver.pause(spec.id)).state).toBe('suspended');
    // A create of a suspended domain answers it as is (a power-on does not thaw it).
    expect((await driver.create(spec)).state).toBe('suspended');
    expect((await driver.resume(spec.id)).state).toBe('running');
    expect((await driver.resume(spec.id)).state).toBe('running');
  });

  it('a domain paused for another reason (a migration) is paused, not suspended, and refuses both', async () => {
    const { fake, driver } = setup();
    await driver.create(spec);
    const dom = fake.domains.get(spec.id);
    if (!dom) throw new Error('fake domain missing');
    dom.state = VIR.DOMAIN_STATE.PAUSED;
    dom.reason = 2; // VIR_DOMAIN_PAUSED_MIGRATION
    expect((await driver.info(spec.id))?.state).toBe('paused');
    expect(await codeOf(driver.pause(spec.id))).toBe('DomainStateConflict');
    expect(await codeOf(driver.resume(spec.id))).toBe('DomainStateConflict');
    expect(dom.state).toBe(VIR.DOMAIN_STATE.PAUSED);
  });

  it('an unknown domain is DomainNotFound', async () => {
    const { driver } = setup();
    expect(await codeOf(driver.pause('i-0000ffff'))).toBe('DomainNotFound');
  });
});

describe('LibvirtDriver shutdown and reboot (issue 18 part 5)', () => {
  it('a graceful shutdown (virDomainShutdown) leaves the domain shut off and defined; a repeat answers as is', async () => {
    const { fake, driver, events } = setup();
    await driver.create(spec);
    events.length = 0;
    expect((await driver.shutdown(spec.id, { force: false })).state).toBe('shutoff');
    expect(fake.domains.has(spec.id)).toBe(true);
    expect(events).toEqual([{ kind: 'stopped', id: spec.id, reason: 'shutdown' }]);
    expect((await driver.shutdown(spec.id, { force: true })).state).toBe('shutoff');
    expect(events).toHaveLength(1);
    // Started again from its own definition.
    expect((await driver.create(spec)).state).toBe('running');
  });

  it('force powers it off at once (virDomainDestroy, no undefine), even a guest that ignores ACPI', async () => {
    const { fake, driver } = setup();
    fake.ignoreAcpi = true;
    await driver.create(spec);
    expect((await driver.shutdown(spec.id, { force: true })).state).toBe('shutoff');
    expect(fake.domains.has(spec.id)).toBe(true);
  });

  it('a guest that ignores the ACPI request is powered off once the deadline passes, not before', async () => {
    const { fake, driver, clock } = setup({ shutdownTimeoutMs: 1_000 });
    fake.ignoreAcpi = true;
    await driver.create(spec);
    let done = false;
    const stopping = driver.shutdown(spec.id, { force: false }).then((d) => { done = true; return d; });
    await flush();
    clock.advance(500);
    await flush();
    expect(done).toBe(false);
    expect(fake.domains.get(spec.id)?.state).toBe(VIR.DOMAIN_STATE.RUNNING);
    for (let i = 0; i < 20 && !done; i++) {
      clock.advance(200);
      await flush();
    }
    expect((await stopping).state).toBe('shutoff');
    expect(fake.domains.has(spec.id)).toBe(true);
  });

  it('reboot (virDomainReboot) keeps a running domain running; a shut-off, suspended or unknown one is refused', async () => {
    const { fake, driver } = setup();
    await driver.create(spec);
    expect((await driver.reboot(spec.id)).state).toBe('running');
    expect(fake.reboots).toEqual([spec.id]);
    await driver.pause(spec.id);
    expect(await codeOf(driver.reboot(spec.id))).toBe('DomainStateConflict');
    expect(await codeOf(driver.shutdown(spec.id, { force: false }))).toBe('DomainStateConflict');
    await driver.resume(spec.id);
    await driver.shutdown(spec.id, { force: false });
    expect(await codeOf(driver.reboot(spec.id))).toBe('DomainStateConflict');
    expect(await codeOf(driver.reboot('i-0000ffff'))).toBe('DomainNotFound');
    expect(await codeOf(driver.shutdown('i-0000ffff', { force: false }))).toBe('DomainNotFound');
    expect(fake.reboots).toEqual([spec.id]);
  });

  it('reset (virDomainReset) of a running domain; libvirt\'s reboot events reach the NC as rebooted, a guest ignoring ACPI sends none', async () => {
    const { fake, driver, events } = setup({ lifecycleEvents: true });
    await driver.create(spec);
    fake.ignoreAcpi = true;
    await driver.reboot(spec.id);
    expect(events.filter((e) => e.kind === 'rebooted')).toEqual([]);
    expect((await driver.reset(spec.id)).state).toBe('running');
    expect(fake.resets).toEqual([spec.id]);
    expect(events.filter((e) => e.kind === 'rebooted')).toEqual([{ kind: 'rebooted', id: spec.id }]);
    fake.ignoreAcpi = false;
    await driver.reboot(spec.id);
    expect(events.filter((e) => e.kind === 'rebooted')).toHaveLength(2);
    await driver.shutdown(spec.id, { force: true });
    expect(await codeOf(driver.reset(spec.id))).toBe('DomainStateConflict');
    expect(fake.resets).toEqual([spec.id]);
  });

  it('define (a cold move) is virDomainDefineXML alone: shut off, not started; create starts it; another spec is DomainExists', async () => {
    const { fake, driver } = setup();
    expect((await driver.define(spec)).state).toBe('shutoff');
    expect(fake.domains.get(spec.id)?.state).toBe(VIR.DOMAIN_STATE.SHUTOFF);
    expect((await driver.define(spec)).state).toBe('shutoff');
    expect(await codeOf(driver.define({ ...spec, imageId: 'emi-2' }))).toBe('DomainExists');
    expect((await driver.create(spec)).state).toBe('running');
  });
});
