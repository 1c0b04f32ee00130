/**
 * A host's migration tunnels, both ends (docs/libvirt.md): the destination listener for incoming
 * migrations and, per outgoing migration, a source end that QEMU migrates to. Any number run at
 * once, each with its own credential; cleaning closes a tunnel and revokes its credentials.
 */
import type { Clock } from '../../../shared/clock.js';
import type { MigrationCredential, MigrationTarget } from '../driver.js';
import { HypervisorErrors } from '../errors.js';
import { guardOf, UsedSerials } from '../migrationGuard.js';
import type { IncomingCredentials } from './incomingMigrations.js';
import { destinationHost, tunnelRoute } from './migrationParams.js';
import type { MigrationRouteHold } from './outgoingMigrations.js';
import { openSourceTunnel } from './tunnelDialer.js';
import { TunnelListener } from './tunnelListener.js';
import type { PortRange } from './tunnelProtocol.js';

export interface TunnelSettings {
  /** Every host's tunnel listener port (one port cloud-wide, as libvirt's 16514 is). */
  readonly port: number;
  /**
   * Where QEMU meets the tunnel on each host: 'loopback' (127.0.0.1, production: QEMU's plaintext
   * stream never leaves the host) or 'host' (the host's own address: one-machine labs, where every
   * "host" shares one loopback).
   */
  readonly local: 'loopback' | 'host';
  /** Ports QEMU's stream may use on the local ends (libvirt's migration_port_min/max by default). */
  readonly dataPorts?: PortRange;
}

export const DEFAULT_DATA_PORTS: PortRange = { min: 49152, max: 49215 };

export class MigrationTunnels implements IncomingCredentials {
  readonly listener: TunnelListener;
  private readonly dataPorts: PortRange;
  /** Source credentials of outgoing migrations that ended here. */
  private readonly revoked = new UsedSerials();

  constructor(private readonly s: TunnelSettings, private readonly host: string, private readonly clock: Clock) {
    this.dataPorts = s.dataPorts ?? DEFAULT_DATA_PORTS;
    this.listener = new TunnelListener({
      listenHost: host, port: s.port, localAddress: this.localOf(host), dataPorts: this.dataPorts, clock,
    });
  }

  hold(id: string, migrationId: string, credential: MigrationCredential): Promise<void> {
    return this.listener.expect(id, migrationId, credential);
  }

  release(id: string, migrationId: string): Promise<void> {
    this.listener.revoke(id, migrationId);
    return Promise.resolve();
  }

  /** Source: authenticate both ends, then QEMU migrates to the local end; release closes and revokes. */
  async open(id: string, target: MigrationTarget, credential: MigrationCredential): Promise<MigrationRouteHold> {
    const { migrationId } = target;
    const guard = guardOf(credential, 'source', id, migrationId);
    if (this.revoked.has(guard.own.serial)) {
      throw HypervisorErrors.make('MigrationCredentialRejected', {
        migrationId, id, reason: 'replayed', detail: `credential ${guard.own.serial} was revoked when its migration ended here`,
      });
    }
    const peer = destinationHost(target.destinationUri);
    const tunnel = await openSourceTunnel({
      guard, id, migrationId, destination: { host: peer, port: this.s.port }, localAddress: this.localOf(this.host),
      dataPorts: this.dataPorts, clock: this.clock,
    });
    return {
      stream: tunnelRoute(this.localOf(this.host), this.localOf(peer), tunnel.port),
      tls: false,
      release: () => {
        tunnel.close();
        this.revoked.add(guard.own.serial, guard.own.notAfter, this.clock.now());
        return Promise.resolve();
      },
    };
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  private localOf(host: string): string {
    return this.s.local === 'host' ? host : '127.0.0.1';
  }
}
