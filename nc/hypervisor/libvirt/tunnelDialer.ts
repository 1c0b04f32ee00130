/**
 * Source end of a per-migration tunnel (docs/libvirt.md): a local TCP listener the source's QEMU
 * migrates to (libvirt's VIR_MIGRATE_PARAM_URI tcp://LOCAL:P), joined to a TLS connection to the
 * destination NC's tunnel listener that both ends authenticate with this migration's credentials.
 * The TLS connection is opened and both checks pass before libvirt is asked for anything: a refused
 * credential fails the migration with a coded error and the guest never leaves the source.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Clock } from '../../../shared/clock.js';
import type { FerryError } from '../../../shared/errors/registry.js';
import { checkMigrationPeer } from '../../../shared/pki/migrationPeer.js';
import { HypervisorErrors } from '../errors.js';
import type { MigrationGuard } from '../migrationGuard.js';
import { decodeAnswer, encodeHello, readLine, type PortRange } from './tunnelProtocol.js';

export interface SourceTunnelOptions {
  readonly guard: MigrationGuard;
  /** The domain id (the server name the destination dispatches by). */
  readonly id: string;
  readonly migrationId: string;
  /** The destination NC's tunnel listener. */
  readonly destination: { readonly host: string; readonly port: number };
  /** The address the local end listens on, for this host's QEMU only. */
  readonly localAddress: string;
  readonly dataPorts: PortRange;
  readonly clock: Clock;
  readonly timeoutMs?: number;
}

export interface SourceTunnel {
  /** The local port QEMU migrates to; the destination's QEMU listens on the same port. */
  readonly port: number;
  close(): void;
}

/** Opens the local end on a free data port and the authenticated TLS end; throws coded errors. */
export async function openSourceTunnel(o: SourceTunnelOptions): Promise<SourceTunnel> {
  const { local, port } = await listenOnFreePort(o.localAddress, o.dataPorts, o);
  let remote: tls.TLSSocket | undefined;
  try {
    remote = await dialAuthenticated(o, port);
  } catch (e) {
    local.close();
    throw e;
  }
  const r = remote;
  let qemu: net.Socket | undefined;
  // One connection: QEMU's precopy stream (its return path shares the socket). Nobody else after it.
  local.once('connection', (s) => {
    qemu = s;
    // No Nagle on any hop: the switchover's last small writes must not wait for an ACK (downtime).
    s.setNoDelay(true);
    local.close();
    s.pipe(r);
    r.pipe(s);
    s.on('error', () => r.destroy());
    r.on('error', () => s.destroy());
    s.once('close', () => r.end());
    r.once('close', () => s.destroy());
  });
  r.resume();
  return {
    port,
    close() {
      local.close();
      qemu?.destroy();
      r.destroy();
    },
  };
}

function failed(o: SourceTunnelOptions, detail: string): FerryError {
  return HypervisorErrors.make('MigrationFailed', { migrationId: o.migrationId, id: o.id, detail });
}

async function listenOnFreePort(address: string, range: PortRange, o: SourceTunnelOptions): Promise<{ local: net.Server; port: number }> {
  const span = range.max - range.min + 1;
  const first = Math.floor(Math.random() * span);
  for (let i = 0; i < span; i++) {
    const port = range.min + ((first + i) % span);
    const local = net.createServer();
    const ok = await new Promise<boolean>((resolve) => {
      local.once('error', () => resolve(false));
      local.listen({ host: address, port, exclusive: true }, () => resolve(true));
    });
    if (ok) return { local, port };
  }
  throw failed(o, `no free migration data port on ${address} in ${range.min}-${range.max}`);
}

function dialAuthenticated(o: SourceTunnelOptions, port: number): Promise<tls.TLSSocket> {
  const c = o.guard.credential;
  const rejected = (reason: string, detail: string): FerryError =>
    HypervisorErrors.make('MigrationCredentialRejected', { migrationId: o.migrationId, id: o.id, reason, detail });
  return new Promise<tls.TLSSocket>((resolve, reject) => {
    let secured = false;
    const sock = tls.connect({
      host: o.destination.host, port: o.destination.port, servername: o.id,
      key: c.keyPem, cert: c.certPem, ca: c.caPem, minVersion: 'TLSv1.2',
      // The destination's certificate is checked below by checkMigrationPeer (coded refusals).
      rejectUnauthorized: false,
    });
    sock.setNoDelay(true);
    const fail = (e: FerryError): void => {
      sock.destroy();
      reject(e);
    };
    sock.setTimeout(o.timeoutMs ?? 30_000, () => fail(failed(o, `the destination tunnel at ${o.destination.host}:${o.destination.port} did not answer in time`)));
    sock.on('error', (e: NodeJS.ErrnoException) => {
      if (secured) return;
      fail(e.code === 'ECONNREFUSED' || e.code === 'EHOSTUNREACH'
        ? failed(o, `the destination tunnel at ${o.destination.host}:${o.destination.port} is unreachable (${e.code})`)
        : rejected('handshake', `TLS handshake with the destination tunnel failed (${e.code ?? e.message}): it has no migration prepared for this domain or refused it`));
    });
    sock.once('secureConnect', () => {
      secured = true;
      const check = checkMigrationPeer({ own: o.guard.own, ca: o.guard.ca, peer: sock.getPeerX509Certificate(), now: o.clock.now(), used: () => false });
      if (!check.ok) {
        fail(rejected(check.reason, `destination certificate: ${check.detail}`));
        return;
      }
      sock.write(encodeHello(port));
      readLine(sock).then((line) => {
        const a = decodeAnswer(line);
        if (!a.ok) fail(rejected(a.reason, `the destination refused this source: ${a.detail}`));
        else {
          sock.setTimeout(0);
          resolve(sock);
        }
      }, (e: Error) => fail(rejected('handshake', `the destination closed the tunnel before answering: ${e.message}`)));
    });
  });
}
