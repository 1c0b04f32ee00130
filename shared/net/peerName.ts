/** How logs and connection caps name a peer. */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

/**
 * A verified client certificate's role and name ("nc 127.0.1.1") once TLS named it; else the
 * remote address. Not the port: that names one connection, not who opened it.
 */
type TLSSocketPeer = ReturnType<TLSSocket['getPeerCertificate']>;

export function peerNameOf(socket: Socket): string {
  const tls = socket as Partial<TLSSocket>;
  if (typeof tls.getPeerCertificate === 'function' && tls.authorized === true) {
    // Null, not an object, once the socket is gone (a clientError on a connection being destroyed): that stopped a CC under 10,000 hosts.
    const { OU, CN } = (tls.getPeerCertificate() as TLSSocketPeer | null)?.subject ?? {};
    if (typeof OU === 'string' && typeof CN === 'string') return `${OU} ${CN}`;
  }
  return socket.remoteAddress ?? 'unknown';
}
