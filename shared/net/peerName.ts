/** How logs and connection caps name a peer. */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

/**
 * A verified client certificate's role and name ("nc 127.0.1.1") once TLS named it; else the
 * remote address. Not the port: that names one connection, not who opened it.
 */
type TLSSocketPeer = ReturnType<TLSSocket['getPeerCertificate']>;

/**
 * The certificate a socket's peer proved, read once per connection: Node parses it into a new object
 * on every getPeerCertificate() call, and a CC serving 2,000 hosts' calls spent 8 % of its CPU there
 * (issue 19). A connection's peer certificate never changes: TLS 1.3 has no renegotiation, and
 * connectionGuard.ts disables TLS 1.2's on every server connection. Undefined when not verified, or
 * once the socket is gone (Node then answers null, whatever its types say: that stopped a CC under
 * 10,000 hosts); neither is remembered.
 */
const verified = new WeakMap<Socket, TLSSocketPeer>();

export function verifiedPeerCertificate(socket: Socket): TLSSocketPeer | undefined {
  const known = verified.get(socket);
  if (known !== undefined) return known;
  const tls = socket as Partial<TLSSocket>;
  if (typeof tls.getPeerCertificate !== 'function' || tls.authorized !== true) return undefined;
  const cert = tls.getPeerCertificate() as TLSSocketPeer | null;
  if (!cert || cert.subject === undefined) return undefined;
  verified.set(socket, cert);
  return cert;
}

export function peerNameOf(socket: Socket): string {
  const { OU, CN } = verifiedPeerCertificate(socket)?.subject ?? {};
  if (typeof OU === 'string' && typeof CN === 'string') return `${OU} ${CN}`;
  return socket.remoteAddress ?? 'unknown';
}
