/**
 * Destination end of the per-migration tunnels (docs/libvirt.md): one TLS listener per host that
 * dispatches by server name (the domain id) to the incoming migration prepared for it, serves that
 * migration's own certificate, checks the source's exactly as the simulated hypervisor does
 * (checkMigrationPeer: CA, role, validity, migration, instance, host pair, generation, replay) and
 * only then carries the stream to the local port its QEMU listens on. Cleaning a migration closes
 * its tunnels and revokes both credentials: they are refused from then on.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Clock } from '../../../shared/clock.js';
import { checkMigrationPeer } from '../../../shared/pki/migrationPeer.js';
import type { MigrationCredential } from '../driver.js';
import { HypervisorErrors } from '../errors.js';
import { guardOf, UsedSerials, type MigrationGuard } from '../migrationGuard.js';
import { decodeHello, encodeAnswer, readLine, type PortRange, type TunnelAnswer } from './tunnelProtocol.js';

export interface TunnelListenerOptions {
  /** The host's own address: where sources reach this listener. */
  readonly listenHost: string;
  readonly port: number;
  /** Where this host's incoming QEMU listens (never reachable from other hosts in production). */
  readonly localAddress: string;
  readonly dataPorts: PortRange;
  readonly clock: Clock;
  /** How long a source may take to send its hello. */
  readonly helloTimeoutMs?: number;
  readonly onRefusal?: (r: { id: string; migrationId: string; reason: string; detail: string }) => void;
}

interface Expected {
  readonly migrationId: string;
  readonly guard: MigrationGuard;
  readonly sockets: Set<net.Socket>;
  readonly peerSerials: { serial: string; notAfter: number }[];
}

const SAFE_NAME = /^[A-Za-z0-9._-]{1,128}$/;

export class TunnelListener {
  private server: tls.Server | undefined;
  private listening: Promise<void> | undefined;
  private readonly expected = new Map<string, Expected>();
  /** Serials of source certificates that carried a stream: one stream per credential. */
  private readonly used = new UsedSerials();
  /** Serials of both sides' certificates of migrations cleaned here. */
  private readonly revoked = new UsedSerials();

  constructor(private readonly o: TunnelListenerOptions) {}

  /** Accept a tunnel for incoming migration `migrationId` of domain `id`, with this credential. */
  async expect(id: string, migrationId: string, credential: MigrationCredential): Promise<void> {
    const guard = guardOf(credential, 'destination', id, migrationId);
    if (this.revoked.has(guard.own.serial)) {
      throw HypervisorErrors.make('MigrationCredentialRejected', {
        migrationId, id, reason: 'replayed', detail: `credential ${guard.own.serial} was revoked when its migration was cleaned`,
      });
    }
    const previous = this.expected.get(id);
    if (previous && previous.migrationId !== migrationId) this.revoke(id, previous.migrationId);
    this.expected.set(id, { migrationId, guard, sockets: previous?.sockets ?? new Set(), peerSerials: previous?.peerSerials ?? [] });
    await this.start();
  }

  /** Cleaning: close the migration's tunnels and revoke its credentials. Idempotent. */
  revoke(id: string, migrationId: string): void {
    const e = this.expected.get(id);
    if (!e || e.migrationId !== migrationId) return;
    this.expected.delete(id);
    const now = this.o.clock.now();
    this.revoked.add(e.guard.own.serial, e.guard.own.notAfter, now);
    for (const p of e.peerSerials) this.revoked.add(p.serial, p.notAfter, now);
    for (const s of e.sockets) s.destroy();
  }

  /** How many tunnels carry a stream now (for tests and operators). */
  openTunnels(): number {
    let n = 0;
    for (const e of this.expected.values()) n += e.sockets.size;
    return n;
  }

  async close(): Promise<void> {
    for (const e of this.expected.values()) for (const s of e.sockets) s.destroy();
    this.expected.clear();
    const server = this.server;
    this.server = undefined;
    this.listening = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private start(): Promise<void> {
    this.listening ??= new Promise<void>((resolve, reject) => {
      const server = tls.createServer({
        // The source's certificate is checked by checkMigrationPeer (coded refusals), not by OpenSSL.
        requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2',
        SNICallback: (name, done) => {
          const e = SAFE_NAME.test(name) ? this.expected.get(name) : undefined;
          if (!e) {
            // Node's SNICallback wants an Error: the peer sees only a TLS alert (tlsClientError is dropped below).
            done(new Error(`no migration tunnel prepared for ${name}`));
            return;
          }
          const c = e.guard.credential;
          done(null, tls.createSecureContext({ key: c.keyPem, cert: c.certPem, ca: c.caPem, minVersion: 'TLSv1.2' }));
        },
      }, (sock) => {
        this.serve(sock).catch(() => sock.destroy());
      });
      server.on('tlsClientError', () => undefined);
      server.once('error', (e) => {
        this.listening = undefined;
        reject(HypervisorErrors.make('HypervisorUnavailable', {
          uri: `tls://${this.o.listenHost}:${this.o.port}`, detail: `the migration tunnel listener cannot start: ${e.message}`,
        }));
      });
      server.listen(this.o.port, this.o.listenHost, () => {
        this.server = server;
        resolve();
      });
    });
    return this.listening;
  }

  private async serve(sock: tls.TLSSocket): Promise<void> {
    const id = typeof sock.servername === 'string' ? sock.servername : '';
    const e = this.expected.get(id);
    if (!e) {
      sock.destroy();
      return;
    }
    sock.on('error', () => undefined);
    sock.setNoDelay(true);
    e.sockets.add(sock);
    sock.once('close', () => e.sockets.delete(sock));
    sock.setTimeout(this.o.helloTimeoutMs ?? 30_000, () => sock.destroy());
    const hello = decodeHello(await readLine(sock), this.o.dataPorts);
    if (!('port' in hello)) return this.refuse(sock, id, e, hello);
    const answer = this.check(sock, e);
    if (!answer.ok) return this.refuse(sock, id, e, answer);
    sock.setTimeout(0);
    sock.write(encodeAnswer({ ok: true }));
    // QEMU listens only once libvirt prepared the incoming domain: connect when the first bytes come.
    sock.once('data', (first: Buffer) => {
      sock.pause();
      const qemu = net.connect({ host: this.o.localAddress, port: hello.port, noDelay: true });
      qemu.write(first);
      sock.pipe(qemu);
      qemu.pipe(sock);
      qemu.on('error', () => sock.destroy());
      qemu.once('close', () => sock.destroy());
      sock.once('close', () => qemu.destroy());
    });
    sock.resume();
  }

  private check(sock: tls.TLSSocket, e: Expected): TunnelAnswer {
    const peer = sock.getPeerX509Certificate();
    const now = this.o.clock.now();
    if (peer && this.revoked.has(peer.serialNumber.toUpperCase())) {
      return { ok: false, reason: 'replayed', detail: `serial ${peer.serialNumber.toUpperCase()} was revoked when its migration was cleaned` };
    }
    const c = checkMigrationPeer({ own: e.guard.own, ca: e.guard.ca, peer, now, used: (s) => this.used.has(s) });
    if (!c.ok) return c;
    // A credential carries one stream: used once, it is spent (a replay is refused).
    this.used.add(c.peer.serial, c.peer.notAfter, now);
    e.peerSerials.push({ serial: c.peer.serial, notAfter: c.peer.notAfter });
    return { ok: true };
  }

  private refuse(sock: tls.TLSSocket, id: string, e: Expected, a: TunnelAnswer & { ok: false }): void {
    this.o.onRefusal?.({ id, migrationId: e.migrationId, reason: a.reason, detail: a.detail });
    sock.end(encodeAnswer(a));
  }
}
