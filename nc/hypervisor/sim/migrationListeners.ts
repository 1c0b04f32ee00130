/**
 * The host's migration ports: the only TCP a simhv serves. Each serves one route, the incoming
 * stream of a migration the NC prepared over the control socket; nothing else (no domain is
 * created, destroyed or sent away from here). The TLS port (libvirt's 16514) takes streams with
 * the migration's own credential; the plaintext port (libvirt's 16509) exists only on a host
 * started with --insecure-plaintext, for migrations prepared without one.
 */
import express from 'express';
import http from 'node:http';
import https from 'node:https';
import { createSecureContext, type TLSSocket } from 'node:tls';
import type { Logger } from '../../../shared/log.js';
import { param, useCodedErrors } from './httpEdge.js';
import { receiveIncomingStream } from './incomingStreamRoute.js';
import { PLAINTEXT_PEER, type StreamPeer } from './migrationChannel.js';
import { SAFE_ID } from './protocol.js';
import type { SimHost } from './simHost.js';

const STREAM_ROUTE = '/v1/incoming/:id/:migrationId/stream';

function streamApp(host: SimHost, log: Logger, peerOf: (req: express.Request) => StreamPeer): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.post(STREAM_ROUTE, async (req, res) => {
    await receiveIncomingStream(host, param(req, 'id'), param(req, 'migrationId'), req, res, log, peerOf(req));
  });
  useCodedErrors(app, log);
  return app;
}

/**
 * The TLS migration listener: serves the certificate of the migration named by the client (SNI =
 * domain id) and hands the client's certificate to the host's peer check. No migration prepared
 * with a credential: no handshake.
 */
export function createMigrationTlsServer(host: SimHost, log: Logger): https.Server {
  const app = streamApp(host, log, (req) => ({ kind: 'tls', cert: (req.socket as TLSSocket).getPeerX509Certificate() }));
  return https.createServer({
    // The client's certificate is checked by checkMigrationPeer (coded refusals), not in the handshake.
    requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2',
    SNICallback: (name, done) => {
      const c = SAFE_ID.test(name) ? host.incomingCredential(name) : undefined;
      if (!c) {
        log.warn({ serverName: name }, 'refused a TLS migration handshake: no migration prepared for it');
        // Node's SNICallback wants an Error: the peer sees only a TLS alert; the warn line above is the record.
        done(new Error(`no TLS migration prepared for ${name}`));
        return;
      }
      done(null, createSecureContext({ key: c.keyPem, cert: c.certPem, ca: c.caPem, minVersion: 'TLSv1.2' }));
    },
  }, app);
}

/**
 * The plaintext migration listener (--insecure-plaintext only): streams for migrations prepared
 * without a credential. A migration prepared with one is refused here (no downgrade).
 */
export function createPlaintextMigrationServer(host: SimHost, log: Logger): http.Server {
  return http.createServer(streamApp(host, log, () => PLAINTEXT_PEER));
}
