/**
 * A CC and an NC as real processes, mutual TLS, attacked with one stolen node certificate
 * (docs/SECURITY.md "Connections"), on 127.0.52.0/24: handshaken, half-sent connections past the
 * daemon's open-file limit must not keep out the tier that drives it (the CLC for a CC, the CC for
 * an NC), and refused calls must not flood its log. Each daemon runs under `ulimit -n 256`, alone:
 * the CC has no nodes, the NC no hypervisor (it starts and answers without one).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { certsDirOf, ensureCloudPki } from '../../scripts/cloudLayout.js';
import { stopPid } from '../../scripts/daemon.js';
import type { PeerRole } from '../../shared/pki/spec.js';
import { loadTlsIdentity } from '../../shared/pki/tlsIdentity.js';
import type { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { clientTlsOptions } from '../../shared/wire/tls.js';
import { CC_PATH, NC_PATH } from '../../shared/wire/transport.js';
import { expectClosedByHeaderTimeout, flood, logLines, spawnWithFileLimit, type HeldConnection, type LimitedDaemon } from '../helpers/floodConnections.js';
import { tierClient } from '../helpers/tierClient.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const CONTROLLER = '127.0.52.250';
const NODE = '127.0.52.21';
/** The stolen key: another node's certificate. */
const THIEF = '127.0.52.22';
const ATTACKERS = ['127.0.52.111', '127.0.52.112', '127.0.52.113'];
const OPEN_FILES = 256;
const HEADERS_TIMEOUT_MS = 2000;

interface Tier {
  readonly name: 'cc' | 'nc';
  readonly host: string;
  readonly path: string;
  /** The tier that drives it, and the cheap call it makes. */
  readonly caller: { readonly role: PeerRole; readonly host: string; readonly operation: string };
  readonly args: (port: number) => string[];
}

const TIERS: readonly Tier[] = [
  {
    name: 'cc', host: CONTROLLER, path: CC_PATH, caller: { role: 'clc', host: CONTROLLER, operation: 'ccDescribeNodes' },
    args: (port) => ['--host', CONTROLLER, '--port', String(port)],
  },
  {
    name: 'nc', host: NODE, path: NC_PATH, caller: { role: 'cc', host: CONTROLLER, operation: 'ncDescribeResource' },
    // No simhv behind it: the NC serves, its hypervisor unreachable, which is all this test needs.
    args: (port) => ['--host', NODE, '--port', String(port), '--sim-socket', join(base, 'no-simhv.sock')],
  },
];

let base: string;
let certs: string;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'ferry-tier-conns-'));
  ensureCloudPki({ baseDir: base, controllerHost: CONTROLLER, nodeHosts: [NODE, THIEF] });
  certs = certsDirOf({ baseDir: base });
}, 60_000);

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe.each(TIERS)('the $name under a stolen node certificate', (tier) => {
  let daemon: LimitedDaemon;
  let url: string;
  const clients: HttpWireTransport[] = [];
  let held: HeldConnection[] = [];

  const client = (role: PeerRole, host: string): HttpWireTransport => {
    // Generous: 200 refusals at once are 200 TLS handshakes on a CC sharing a busy 2-core machine.
    const t = tierClient({ certsDir: certs, role, host, path: tier.path, timeoutMs: 60_000 });
    clients.push(t);
    return t;
  };
  const driverCall = (t: HttpWireTransport) => t.call(url, tier.caller.operation, {});

  beforeAll(async () => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, tier.host, r));
    const { port } = probe.address() as AddressInfo;
    await new Promise((r) => probe.close(r));
    daemon = await spawnWithFileLimit(join(ROOT, 'dist', tier.name, 'main.js'), [
      ...tier.args(port), '--state-dir', join(base, tier.name), '--tls-dir', certs,
      '--headers-timeout-ms', String(HEADERS_TIMEOUT_MS), '--request-timeout-ms', String(2 * HEADERS_TIMEOUT_MS),
    ], OPEN_FILES, `${tier.name} listening on`);
    url = `https://${tier.host}:${port}`;
  }, 60_000);

  afterEach(() => {
    for (const h of held) h.socket.destroy();
    held = [];
  });

  afterAll(async () => {
    for (const t of clients) t.close();
    if (daemon) await stopPid(daemon.pid);
  });

  it('keeps serving the tier that drives it past its open-file limit, and closes half-sent connections at the header timeout', async () => {
    await expect.poll(() => logLines(daemon.stderr()).find((l) => l.connections !== undefined)?.connections)
      .toMatchObject({ openFileLimit: OPEN_FILES, maxPending: 96 });
    const driver = client(tier.caller.role, tier.caller.host);
    await driverCall(driver);

    // Handshaken with the stolen certificate, then half a request head; from three addresses, one peer.
    held = await flood({
      host: tier.host, port: Number(new URL(url).port), from: ATTACKERS, count: 3 * OPEN_FILES,
      tls: { ...clientTlsOptions(loadTlsIdentity(certs, 'nc', THIEF)), checkServerIdentity: () => undefined },
      send: () => `POST ${tier.path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n`,
    });

    // The driver's call, on its kept-alive connection and on a new one, is served.
    await driverCall(driver);
    await driverCall(client(tier.caller.role, tier.caller.host));
    // More handshakes completed than the daemon has handles: the oldest were closed to make room.
    expect(held.filter((h) => h.openedAt !== undefined).length).toBeGreaterThan(OPEN_FILES);

    await expectClosedByHeaderTimeout(held, HEADERS_TIMEOUT_MS);
    // The certificate is the peer, whatever address it came from.
    await expect.poll(() => logLines(daemon.stderr()).some((l) => l.code === 'ConnectionEvicted' && l.peer === `nc ${THIEF}`)).toBe(true);
  });

  it('logs refused calls once per code and certificate, with the count, not once per call', async () => {
    const thief = client('nc', THIEF);
    const refused = await Promise.all(Array.from({ length: 200 }, () => driverCall(thief).then(() => 'served', (e: Error) => e.message)));
    expect(refused.filter((m) => !m.includes('PeerNotAuthorized'))).toEqual([]);
    const exited = daemon.exited;
    await stopPid(daemon.pid);
    expect(await exited).toBe(0);
    const lines = logLines(daemon.stderr()).filter((l) => l.code === 'PeerNotAuthorized');
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(lines.every((l) => l.peer === `nc ${THIEF}` && l.level === 40)).toBe(true);
    expect(lines.reduce((n, l) => n + (typeof l.repeats === 'number' ? l.repeats : 1), 0)).toBe(200);
  });
});
