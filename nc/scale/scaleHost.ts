/**
 * One simulated host of the scale mode (nc/scale/main.ts): a real NodeController over an in-process
 * SimHost (InProcessDriver), serving NC_OPS over mutual TLS on its own loopback address with its own
 * certificate from the cloud CA (checked against NC_ACCESS exactly as ferry-nc does), and telling
 * the CC about changes as itself. What it leaves out of a real host: durable stores (the NC's and
 * the hypervisor's stores are in memory) and live migration (its dialer refuses): the scale mode
 * measures supervision, not durability or streams. fail() is a dead host: the listener and every
 * connection close, the heartbeat on shared storage stops, nothing answers any more.
 */
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/log.js';
import { guardConnections, httpsServerOptions, NODE_KEEP_ALIVE_IDLE_MS, type ConnectionLimits } from '../../shared/net/connectionGuard.js';
import type { TlsIdentity } from '../../shared/pki/tlsIdentity.js';
import type { RefusalLog } from '../../shared/refusalLog.js';
import { wireRefusalReporter } from '../../shared/refusalLog.js';
import { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { clientTlsOptions, serverTlsOptions } from '../../shared/wire/tls.js';
import { CC_PATH } from '../../shared/wire/transport.js';
import { DEFAULT_NOTIFY_TIMEOUT_MS, WireCcNotifier } from '../ccNotifier.js';
import type { SharedStorageView } from '../ha/activityCheck.js';
import type { DiskIo } from '../hypervisor/sim/diskIo.js';
import { openSimHvMemoryStore } from '../hypervisor/sim/hostStore.js';
import { InProcessDriver } from '../hypervisor/sim/inProcessDriver.js';
import type { MigrationDialer } from '../hypervisor/sim/migrationChannel.js';
import { MIGRATION_DEFAULTS } from '../hypervisor/sim/migrationModel.js';
import { SimHost } from '../hypervisor/sim/simHost.js';
import { openMemoryNcStore } from '../ncStore.js';
import { NodeController } from '../nodeController.js';
import { createNcApp } from '../server.js';
import { serveNodeWatch } from '../watchEndpoint.js';
import { HypervisorErrors } from '../hypervisor/errors.js';
import type { Resources } from '../../shared/model/resources.js';

export interface ScaleHostOptions {
  readonly identity: TlsIdentity;
  readonly port: number;
  readonly ccUrl: string;
  readonly capacity: Resources;
  readonly storageDir: string;
  /** Shared storage: where this host's heartbeat goes and where neighbours' activity is read. */
  readonly disk: DiskIo;
  readonly sharedStorage: SharedStorageView;
  readonly writeIntervalMs: number;
  /** Kept open between the CC's polls (ms): longer than its poll period, or each poll is a new TLS handshake. */
  readonly keepAliveMs: number;
  readonly limits: ConnectionLimits;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly refusals: RefusalLog;
}

export interface ScaleHost {
  readonly host: string;
  /** Dead host: stops answering (listener and connections closed) and stops writing its heartbeat. */
  fail(): Promise<void>;
  close(): Promise<void>;
}

/** No live migration in the scale mode: a stream to or from a scale host is refused. */
const NO_MIGRATIONS: MigrationDialer = {
  open: () => Promise.reject(HypervisorErrors.make('HypervisorOperationUnsupported', { kind: 'scale-mode sim', operation: 'migrate', detail: 'the scale mode runs no migration streams' })),
};

export async function startScaleHost(o: ScaleHostOptions): Promise<ScaleHost> {
  const { host } = o.identity;
  const logger = o.logger.child({ host });
  const sim = await SimHost.open(
    { host, capacity: o.capacity, storageDir: o.storageDir, migration: MIGRATION_DEFAULTS, writeIntervalMs: o.writeIntervalMs, timeScale: 1, requireMigrationCredentials: true },
    { clock: o.clock, store: await openSimHvMemoryStore(), disk: o.disk, dialer: NO_MIGRATIONS, log: logger },
  );
  sim.start();
  // Calls the CC from its own address, as a real host does (not 127.0.0.1, which would make every host one peer).
  const transport = new HttpWireTransport({ path: CC_PATH, defaultTimeoutMs: DEFAULT_NOTIFY_TIMEOUT_MS, tls: { ...clientTlsOptions(o.identity), localAddress: host } });
  const notifier = new WireCcNotifier({ transport, ccUrl: o.ccUrl, logger, clock: o.clock });
  const controller = new NodeController({
    host, hypervisor: 'sim', store: await openMemoryNcStore(), driver: new InProcessDriver(sim), clock: o.clock, logger, notifier,
    requireMigrationCredentials: true,
  });
  await controller.start();
  const app = createNcApp({ controller, logger, checkPeers: true, onRefused: wireRefusalReporter(o.refusals), sharedStorage: o.sharedStorage });
  const server = https.createServer({ ...serverTlsOptions(o.identity), ...httpsServerOptions(o.limits) }, app);
  server.keepAliveTimeout = o.keepAliveMs;
  const guard = guardConnections(server, { limits: o.limits, refusals: o.refusals, keepAliveIdleMs: NODE_KEEP_ALIVE_IDLE_MS });
  const watch = serveNodeWatch(server, { describe: () => controller.describe(), checkPeers: true, logger, established: (s) => guard.established(s) });
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  notifier.notify({ host, kind: 'node' });

  let down: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    down ??= (async () => {
      notifier.close();
      transport.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A dead host: its connections go with it (destroyed, not drained).
      for (const s of sockets) s.destroy();
      watch.close();
      await closed;
      await sim.close();
    })();
    return down;
  };
  return {
    host,
    fail: stop,
    async close() {
      await stop();
      await controller.stop();
    },
  };
}
