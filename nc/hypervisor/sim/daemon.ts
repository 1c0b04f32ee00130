/**
 * The sim daemon's HTTP surface (driver-private JSON protocol, not Ferry's wire protocol). Requests
 * are validated once here; every error leaves through one handler as `{ error: { code, message,
 * fields } }` with the registry's status.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import http, { type Server } from 'node:http';
import https from 'node:https';
import { createSecureContext, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock, type TimerHandle } from '../../../shared/clock.js';
import type { Logger } from '../../../shared/log.js';
import type { z } from 'zod';
import { HypervisorErrors } from '../errors.js';
import { sleepOn } from '../clockSleep.js';
import { toCodedResponse } from './errorBody.js';
import { receiveIncomingStream } from './incomingStreamRoute.js';
import { PLAINTEXT_PEER, type StreamPeer } from './migrationChannel.js';
import { describeIssues, DomainSpecSchema, MigrateRequest, PrepareIncomingRequest, SAFE_ID } from './protocol.js';
import { SimHost } from './simHost.js';
import type { SimHvConfig } from './config.js';
import { fsDiskIo } from './diskIo.js';
import { openSimHvFileStore } from './hostStore.js';
import { httpMigrationDialer } from './httpMigrationDialer.js';

export const JSON_LIMIT = '64kb';
const MAX_WAIT_MS = 60_000;
const SSE_KEEPALIVE_MS = 15_000;

export interface SimHvApp {
  readonly app: express.Express;
  /** Ends open event streams and long polls (they would hold the server open). */
  closeStreams(): void;
}

export function createSimHvApp(host: SimHost, clock: Clock, log: Logger): SimHvApp {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: JSON_LIMIT }));
  const streams = new Set<Response>();
  const closing = new AbortController();

  app.get('/v1/host', (_req, res) => {
    res.json({ ...host.info(), free: host.free(), domains: host.list().length });
  });

  app.get('/v1/domains', (_req, res) => {
    res.json({ domains: host.list() });
  });

  app.get('/v1/domains/:id', (req, res) => {
    const id = param(req, 'id');
    const info = host.get(id);
    if (!info) throw HypervisorErrors.make('DomainNotFound', { id, host: host.hostName });
    res.json(info);
  });

  app.post('/v1/domains', async (req, res) => {
    res.json(await host.create(body(DomainSpecSchema, req)));
  });

  app.delete('/v1/domains/:id', async (req, res) => {
    await host.destroy(param(req, 'id'));
    res.status(204).end();
  });

  app.post('/v1/incoming', async (req, res) => {
    const { spec, migrationId, credential } = body(PrepareIncomingRequest, req);
    res.json(await host.prepareIncoming(spec, migrationId, credential));
  });

  app.delete('/v1/incoming/:id/:migrationId', async (req, res) => {
    await host.abortIncoming(param(req, 'id'), param(req, 'migrationId'));
    res.status(204).end();
  });

  app.post('/v1/incoming/:id/:migrationId/stream', async (req, res) => {
    await receiveIncomingStream(host, param(req, 'id'), param(req, 'migrationId'), req, res, log, PLAINTEXT_PEER);
  });

  // Starts (or joins) a migration and answers 202 at once; the outcome is collected by long poll,
  // so no single request has to outlive a long migration.
  app.post('/v1/domains/:id/migrations', async (req, res) => {
    const target = body(MigrateRequest, req);
    const entry = await host.beginMigration(param(req, 'id'), target);
    res.status(202).json({ migrationId: entry.migrationId });
  });

  app.get('/v1/domains/:id/migrations/:migrationId', async (req, res) => {
    const id = param(req, 'id');
    const migrationId = param(req, 'migrationId');
    const waitMs = Math.min(Math.max(Number(req.query.waitMs ?? 0) || 0, 0), MAX_WAIT_MS);
    const settled = host.whenMigrationSettles(id, migrationId);
    if (settled && waitMs > 0) {
      const stop = new AbortController();
      const onGone = (): void => stop.abort();
      res.on('close', onGone);
      closing.signal.addEventListener('abort', onGone, { once: true });
      await Promise.race([settled, sleepOn(clock, waitMs, stop.signal).catch(() => undefined)]);
      stop.abort();
      closing.signal.removeEventListener('abort', onGone);
    }
    res.json(host.migrationStatus(id, migrationId));
  });

  app.delete('/v1/domains/:id/migrations/:migrationId', async (req, res) => {
    await host.abortMigration(param(req, 'id'), param(req, 'migrationId'));
    res.status(204).end();
  });

  // Server-Sent Events: one `data:` line of HypervisorEvent JSON per event. Events are a hint;
  // a client that reconnects re-reads state with list() (level-based, so a missed event is harmless).
  app.get('/v1/events', (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write(': connected\n\n');
    streams.add(res);
    const off = host.onEvent((e) => res.write(`event: ${e.kind}\ndata: ${JSON.stringify(e)}\n\n`));
    // Comments keep idle proxies and clients from timing the stream out.
    let timer: TimerHandle | undefined;
    const keepalive = (): void => {
      timer = clock.setTimer(SSE_KEEPALIVE_MS, () => {
        res.write(': keepalive\n\n');
        keepalive();
      });
    };
    keepalive();
    res.on('close', () => {
      off();
      timer?.cancel();
      streams.delete(res);
    });
  });

  useCodedErrors(app, log);

  return {
    app,
    closeStreams() {
      closing.abort();
      for (const s of streams) s.end();
    },
  };
}

/** Unknown endpoints and every error leave as `{ error: { code, message, fields } }` with the registry's status. */
function useCodedErrors(app: express.Express, log: Logger): void {
  app.use((req, _res, next) => {
    next(HypervisorErrors.make('HypervisorUnknownEndpoint', { method: req.method, path: req.path }));
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const { status, body: errorBody } = toCodedResponse(fromBodyParser(err));
    if (status >= 500) log.error({ err }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(status).json(errorBody);
  });
}

/**
 * The migration listener (libvirt's TLS port): serves only incoming streams, over TLS with the
 * certificate of the migration named by the client (SNI = domain id), and hands the client's
 * certificate to the host's peer check. No migration prepared with a credential: no handshake.
 */
export function createMigrationTlsServer(host: SimHost, log: Logger): https.Server {
  const app = express();
  app.disable('x-powered-by');
  app.post('/v1/incoming/:id/:migrationId/stream', async (req, res) => {
    const socket = req.socket as TLSSocket;
    const peer: StreamPeer = { kind: 'tls', cert: socket.getPeerX509Certificate() };
    await receiveIncomingStream(host, param(req, 'id'), param(req, 'migrationId'), req, res, log, peer);
  });
  useCodedErrors(app, log);
  const server = https.createServer({
    // The client's certificate is checked by checkMigrationPeer (coded refusals), not in the handshake.
    requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2',
    SNICallback: (name, done) => {
      const c = SAFE_ID.test(name) ? host.incomingCredential(name) : undefined;
      if (!c) {
        log.warn({ serverName: name }, 'refused a TLS migration handshake: no migration prepared for it');
        done(new Error(`no TLS migration prepared for ${name}`));
        return;
      }
      done(null, createSecureContext({ key: c.keyPem, cert: c.certPem, ca: c.caPem, minVersion: 'TLSv1.2' }));
    },
  }, app);
  return server;
}

/** Listens on host:port; resolves with the server once bound. */
export function listen(server: Server, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
    // Migration streams and event streams are long-lived by design; per-request timeouts would cut them.
    server.requestTimeout = 0;
  });
}

function param(req: Request, name: string): string {
  const v = req.params[name];
  if (typeof v !== 'string' || !SAFE_ID.test(v)) {
    throw HypervisorErrors.make('HypervisorBadRequest', { detail: `${name}: must be 1-128 of [A-Za-z0-9._-]` });
  }
  return v;
}

function body<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  const parsed = schema.safeParse(req.body);
  if (!parsed.success) throw HypervisorErrors.make('HypervisorBadRequest', { detail: describeIssues(parsed.error) });
  return parsed.data;
}

/** body-parser's errors carry a `type`; turn them into our codes. */
function fromBodyParser(err: unknown): unknown {
  const type = (err as { type?: unknown })?.type;
  if (type === 'entity.too.large') return HypervisorErrors.make('HypervisorRequestTooLarge', { limit: JSON_LIMIT });
  if (type === 'entity.parse.failed') return HypervisorErrors.make('HypervisorBadRequest', { detail: 'body is not valid JSON' });
  if (typeof type === 'string') return HypervisorErrors.make('HypervisorBadRequest', { detail: (err as Error).message });
  return err;
}

export interface RunningSimHv {
  /** http://HOST:PORT, with the bound port. */
  readonly url: string;
  /** https://HOST:TLSPORT: where TLS migrations (per-migration credentials) come in. */
  readonly tlsUrl: string;
  readonly host: SimHost;
  close(): Promise<void>;
}

/** Wires a real daemon: durable store in stateDir, files on shared storage, HTTP migration streams. */
export async function startSimHvDaemon(config: SimHvConfig, log: Logger, clock: Clock = systemClock): Promise<RunningSimHv> {
  const store = await openSimHvFileStore(config.stateDir);
  const host = await SimHost.open(
    {
      host: config.host, capacity: config.capacity, storageDir: config.storageDir, migration: config.migration,
      writeIntervalMs: config.writeIntervalMs, timeScale: config.timeScale,
    },
    { clock, store, disk: fsDiskIo(), dialer: httpMigrationDialer({ clock }), log },
  );
  const { app, closeStreams } = createSimHvApp(host, clock, log);
  const server = await listen(http.createServer(app), config.host, config.port);
  const tlsServer = await listen(createMigrationTlsServer(host, log), config.host, config.tlsPort);
  host.start();
  const { port } = server.address() as AddressInfo;
  const tlsPort = (tlsServer.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${config.host}:${port}`,
    tlsUrl: `https://${config.host}:${tlsPort}`,
    host,
    close() {
      closing ??= (async () => {
        const stopped = Promise.all([server, tlsServer].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
        closeStreams();
        await host.close();
        server.closeAllConnections();
        tlsServer.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}
