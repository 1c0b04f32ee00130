/**
 * The sim daemon's control API (driver-private JSON protocol, not Ferry's wire protocol), served on
 * the owner-only Unix socket (controlSocket.ts) and nowhere else: every request that creates,
 * destroys, prepares or migrates a domain comes from a process that could open it (the NC). The
 * TCP ports serve incoming migration streams only (migrationListeners.ts). Requests are validated
 * once here; every error leaves through one handler (httpEdge.ts).
 */
import express, { type Response } from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock, type TimerHandle } from '../../../shared/clock.js';
import type { Logger } from '../../../shared/log.js';
import { HypervisorErrors } from '../errors.js';
import { sleepOn } from '../clockSleep.js';
import { listenOnControlSocket } from './controlSocket.js';
import { body, JSON_LIMIT, listen, param, useCodedErrors } from './httpEdge.js';
import { createMigrationTlsServer, createPlaintextMigrationServer } from './migrationListeners.js';
import { IncomingSpecSchema, MigrateRequest, PrepareIncomingRequest, ShutdownRequest, VolumeAttachmentSchema } from './protocol.js';
import { SimHost } from './simHost.js';
import type { SimHvConfig } from './config.js';
import { fsDiskIo } from './diskIo.js';
import { openSimHvFileStore } from './hostStore.js';
import { httpMigrationDialer } from './httpMigrationDialer.js';

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
    res.json(await host.create(body(IncomingSpecSchema, req)));
  });

  app.delete('/v1/domains/:id', async (req, res) => {
    await host.destroy(param(req, 'id'));
    res.status(204).end();
  });

  app.post('/v1/domains/:id/volumes', async (req, res) => {
    res.json(await host.attachVolume(param(req, 'id'), body(VolumeAttachmentSchema, req)));
  });

  app.delete('/v1/domains/:id/volumes/:volumeId', async (req, res) => {
    res.json(await host.detachVolume(param(req, 'id'), param(req, 'volumeId')));
  });

  app.post('/v1/domains/:id/suspend', async (req, res) => {
    res.json(await host.pause(param(req, 'id')));
  });

  app.post('/v1/domains/:id/resume', async (req, res) => {
    res.json(await host.resume(param(req, 'id')));
  });

  app.post('/v1/definitions', async (req, res) => {
    res.json(await host.define(body(IncomingSpecSchema, req)));
  });

  app.post('/v1/domains/:id/shutdown', async (req, res) => {
    res.json(await host.shutdown(param(req, 'id'), body(ShutdownRequest, req)));
  });

  app.post('/v1/domains/:id/reboot', async (req, res) => {
    res.json(await host.reboot(param(req, 'id')));
  });

  app.post('/v1/domains/:id/reset', async (req, res) => {
    res.json(await host.reset(param(req, 'id')));
  });

  app.post('/v1/incoming', async (req, res) => {
    const { spec, migrationId, credential } = body(PrepareIncomingRequest, req);
    res.json(await host.prepareIncoming(spec, migrationId, credential));
  });

  app.delete('/v1/incoming/:id/:migrationId', async (req, res) => {
    await host.abortIncoming(param(req, 'id'), param(req, 'migrationId'));
    res.status(204).end();
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

export interface RunningSimHv {
  /** The control API's Unix socket (mode 0600). */
  readonly socketPath: string;
  /** https://HOST:TLSPORT: where TLS migrations (per-migration credentials) come in. */
  readonly tlsUrl: string;
  /** http://HOST:PORT where plaintext migrations come in: with --insecure-plaintext only. */
  readonly plaintextUrl: string | undefined;
  readonly host: SimHost;
  close(): Promise<void>;
}

/**
 * Wires a real daemon: durable store in stateDir, files on shared storage, the control API on its
 * socket, migration streams on the TLS port (and the plaintext one when the host is insecure on purpose).
 */
export async function startSimHvDaemon(config: SimHvConfig, log: Logger, clock: Clock = systemClock): Promise<RunningSimHv> {
  const store = await openSimHvFileStore(config.stateDir);
  const host = await SimHost.open(
    {
      host: config.host, capacity: config.capacity, storageDir: config.storageDir, migration: config.migration,
      writeIntervalMs: config.writeIntervalMs, timeScale: config.timeScale, requireMigrationCredentials: !config.insecurePlaintext,
      guestIgnoresAcpi: config.guestIgnoresAcpi,
    },
    { clock, store, disk: fsDiskIo(), dialer: httpMigrationDialer({ clock }), log },
  );
  const { app, closeStreams } = createSimHvApp(host, clock, log);
  const control = http.createServer(app);
  // Event streams and migration long polls are long-lived by design.
  control.requestTimeout = 0;
  const servers: http.Server[] = [];
  let tlsServer: http.Server;
  let plainServer: http.Server | undefined;
  try {
    await listenOnControlSocket(control, config.socketPath);
    servers.push(control);
    servers.push((tlsServer = await listen(createMigrationTlsServer(host, log), config.host, config.tlsPort)));
    if (config.plaintextPort !== undefined) {
      servers.push((plainServer = await listen(createPlaintextMigrationServer(host, log), config.host, config.plaintextPort)));
    }
  } catch (e) {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    await host.close();
    throw e;
  }
  host.start();
  const urlOf = (scheme: string, s: http.Server) => `${scheme}://${config.host}:${(s.address() as AddressInfo).port}`;
  let closing: Promise<void> | undefined;
  return {
    socketPath: config.socketPath,
    tlsUrl: urlOf('https', tlsServer),
    plaintextUrl: plainServer && urlOf('http', plainServer),
    host,
    close() {
      closing ??= (async () => {
        // Closing the control server also removes its socket file.
        const stopped = Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
        closeStreams();
        await host.close();
        for (const s of servers) s.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}
