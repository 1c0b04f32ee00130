/** How logs and connection caps name a peer. */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

/**
 * A verified client certificate's role and name ("nc 127.0.1.1") once TLS named it; else the
 * remote address. Not the port: that names one connection, not who opened it.
 */
export function peerNameOf(socket: Socket): string {
  const tls = socket as Partial<TLSSocket>;
  if (typeof tls.getPeerCertificate === 'function' && tls.authorized === true) {
    const { OU, CN } = tls.getPeerCertificate().subject ?? {};
    if (typeof OU === 'string' && typeof CN === 'string') return `${OU} ${CN}`;
  }
  return socket.remoteAddress ?? 'unknown';
}
