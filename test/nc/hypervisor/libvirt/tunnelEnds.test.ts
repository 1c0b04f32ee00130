/**
 * Both tunnel ends on loopback (127.0.58.0/24), without libvirt: a TCP echo server stands where the
 * destination's QEMU listens and a plain client where the source's QEMU connects. Bytes cross both
 * ways only after both credentials pass; a refused one never reaches the "QEMU"; cleaning closes
 * the tunnel. The real QEMU/libvirt path is test/integration/libvirtTunnel.test.ts.
 */
import net from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../../shared/clock.js';
import type { FerryError } from '../../../../shared/errors/registry.js';
import { guardOf } from '../../../../nc/hypervisor/migrationGuard.js';
import { openSourceTunnel, type SourceTunnel } from '../../../../nc/hypervisor/libvirt/tunnelDialer.js';
import { TunnelListener } from '../../../../nc/hypervisor/libvirt/tunnelListener.js';
import { credentialPair, makeMigrationCa, type TestMigrationCa } from '../../../helpers/migrationPki.js';

const SRC = '127.0.58.1';
const DST = '127.0.58.2';
const PORT = 17810;
const dataPorts = { min: 17820, max: 17829 };
const ID = 'i-0000e001';
const KEY = `mig-e1-${ID}`;
let ca: TestMigrationCa;
const closers: (() => unknown)[] = [];

beforeAll(() => {
  ca = makeMigrationCa('ends');
});

afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function listener(): TunnelListener {
  const l = new TunnelListener({ listenHost: DST, port: PORT, localAddress: DST, dataPorts, clock: systemClock });
  closers.push(() => l.close());
  return l;
}

async function echoOn(port: number): Promise<void> {
  const server = net.createServer((s) => s.pipe(s));
  await new Promise<void>((resolve) => server.listen(port, DST, resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
}

function open(pair: ReturnType<typeof credentialPair>): Promise<SourceTunnel> {
  return openSourceTunnel({
    guard: guardOf(pair.source, 'source', ID, KEY), id: ID, migrationId: KEY, destination: { host: DST, port: PORT },
    localAddress: SRC, dataPorts, clock: systemClock, timeoutMs: 20_000,
  }).then((t) => {
    closers.push(() => t.close());
    return t;
  });
}

function qemuClient(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: SRC, port }, () => resolve(s));
    s.once('error', reject);
    closers.push(() => s.destroy());
  });
}

function read(s: net.Socket, n: number): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    s.on('data', (d: Buffer) => {
      got += d.toString();
      if (got.length >= n) resolve(got);
    });
  });
}

const item = { migrationId: 'mig-e1', instanceId: ID, source: SRC, destination: DST };

describe('tunnel ends', () => {
  it('carries bytes both ways between the two "QEMU"s once both credentials pass; cleaning closes it', async () => {
    const l = listener();
    const pair = credentialPair(ca, item);
    await l.expect(ID, KEY, pair.destination);
    const t = await open(pair);
    expect(t.port).toBeGreaterThanOrEqual(dataPorts.min);
    await echoOn(t.port);
    const q = await qemuClient(t.port);
    const echoed = read(q, 5);
    q.write('hello');
    expect(await echoed).toBe('hello');
    expect(l.openTunnels()).toBe(1);
    const closed = new Promise((resolve) => q.once('close', resolve));
    l.revoke(ID, KEY);
    await closed;
    expect(l.openTunnels()).toBe(0);
    // Revoked: the same pair is refused from then on, at prepare and at the handshake.
    const again = await l.expect(ID, KEY, pair.destination).then(() => undefined, (e: FerryError) => e);
    expect([again?.code, again?.fields.reason]).toEqual(['MigrationCredentialRejected', 'replayed']);
  });

  it('refuses with a coded reason when nothing is prepared for the domain (no handshake)', async () => {
    const l = listener();
    const other = credentialPair(ca, { ...item, instanceId: 'i-0000e002', migrationId: 'mig-e2' });
    await l.expect('i-0000e002', `mig-e2-i-0000e002`, other.destination); // listening, but not for ID
    const e = await open(credentialPair(ca, item)).then(() => undefined, (x: FerryError) => x);
    expect([e?.code, e?.fields.reason]).toEqual(['MigrationCredentialRejected', 'handshake']);
  });

  it('a source credential carries one stream: a second tunnel with it is refused as replayed', async () => {
    const l = listener();
    const pair = credentialPair(ca, item);
    await l.expect(ID, KEY, pair.destination);
    await open(pair);
    const e = await open(pair).then(() => undefined, (x: FerryError) => x);
    expect([e?.code, e?.fields.reason]).toEqual(['MigrationCredentialRejected', 'replayed']);
  });

  it('an unreachable destination is a migration failure, not a credential matter', async () => {
    const e = await open(credentialPair(ca, item)).then(() => undefined, (x: FerryError) => x);
    expect(e?.code).toBe('MigrationFailed');
  });
});
