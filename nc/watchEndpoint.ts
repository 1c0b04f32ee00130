/**
 * The NC's end of the node watch (shared/protocol/nodeWatch.ts): WebSocket upgrades at
 * NC_WATCH_PATH on the NC's own server. Under mutual TLS only a `cc` certificate may open one (the
 * same rule as every NC operation, server.ts NC_ACCESS); anything else is answered with an HTTP
 * refusal and closed before any WebSocket exists. Each check runs the NC's describe and answers its
 * version, with the report when the CC does not hold that version; a connection takes one check at a
 * time, and a bad message closes it with a coded reason.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Logger } from '../shared/log.js';
import type { NcNode } from '../shared/protocol/ncProtocol.js';
import {
  NC_WATCH_PATH, parseWatchFrame, WATCH_CLOSE_CODES, WATCH_CLOSE_REASONS, WATCH_MAX_MESSAGE_BYTES, watchCheckSchema, type WatchAnswer,
} from '../shared/protocol/nodeWatch.js';
import { peerIdentityOf } from '../shared/wire/peerAuth.js';

export interface WatchEndpointOptions {
  /** The NC's report now, with its version (NodeController.describe, as a poll runs it). */
  readonly describe: () => Promise<NcNode>;
  /** mTLS: only a caller whose certificate says `cc` may open the watch. */
  readonly checkPeers: boolean;
  readonly logger: Logger;
  /** Told of each connection upgraded (ConnectionGuard.established: no longer a pending one). */
  readonly established?: (socket: Socket) => void;
}

export interface WatchEndpoint {
  /** Connections open now (tests, logs). */
  connections(): number;
  /** Closes every watch connection (the NC stops); new upgrades are refused from here on. */
  close(): void;
}

/** Why an upgrade is refused, as an HTTP answer on the raw socket (no WebSocket is made). */
function refuse(socket: Socket, status: string, code: string): void {
  const body = `${code}\n`;
  if (socket.writable) {
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nX-Ferry-Error: ${code}\r\n\r\n${body}`);
  }
  socket.destroy();
}

/** Serves the node watch on `server` (the NC's HTTPS, or HTTP under --insecure-plaintext, server). */
export function serveNodeWatch(server: http.Server, o: WatchEndpointOptions): WatchEndpoint {
  const wss = new WebSocketServer({ noServer: true, maxPayload: WATCH_MAX_MESSAGE_BYTES, perMessageDeflate: false, clientTracking: true });
  let closed = false;
  server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
    if (closed) return refuse(socket, '503 Service Unavailable', WATCH_CLOSE_REASONS.shutdown);
    const path = (req.url ?? '').split('?')[0];
    if (path !== NC_WATCH_PATH) return refuse(socket, '404 Not Found', 'UnknownOperation');
    if (o.checkPeers && peerIdentityOf(socket)?.role !== 'cc') return refuse(socket, '403 Forbidden', 'PeerNotAuthorized');
    wss.handleUpgrade(req, socket, head, (ws) => {
      o.established?.(socket);
      watchConnection(ws, o);
    });
  });
  return {
    connections: () => wss.clients.size,
    close() {
      closed = true;
      for (const ws of wss.clients) ws.close(WATCH_CLOSE_CODES.shutdown, WATCH_CLOSE_REASONS.shutdown);
      wss.close();
    },
  };
}

function watchConnection(ws: WebSocket, o: WatchEndpointOptions): void {
  let busy = false;
  const fail = (code: number, reason: string): void => ws.close(code, reason);
  ws.on('error', (err) => o.logger.debug({ err }, 'node watch connection failed'));
  ws.on('message', (data: RawData, isBinary: boolean) => {
    const check = parseWatchFrame(watchCheckSchema, isBinary ? undefined : String(data));
    if (!check.success) return fail(WATCH_CLOSE_CODES.badMessage, WATCH_CLOSE_REASONS.badMessage);
    // One check at a time: the CC waits for each answer, so a second one means a broken or hostile peer.
    if (busy) return fail(WATCH_CLOSE_CODES.badMessage, WATCH_CLOSE_REASONS.overlapping);
    busy = true;
    o.describe().then(
      (report) => {
        busy = false;
        const version = report.version ?? '';
        const answer: WatchAnswer = version !== '' && version === check.data.known
          ? { seq: check.data.check, version }
          : { seq: check.data.check, version, report };
        ws.send(JSON.stringify(answer));
      },
      (err: unknown) => {
        busy = false;
        // The CC falls back to the ordinary describe, which answers the coded error itself.
        o.logger.warn({ err }, 'node watch: the describe for a check failed');
        fail(WATCH_CLOSE_CODES.failed, WATCH_CLOSE_REASONS.describeFailed);
      },
    );
  });
}
