/**
 * The CLC process: config → store → admin credentials → CC clients (mutual TLS as clc-HOST with
 * --tls-dir) → change gate → admin API on HOST:PORT/services/Eucalyptus. The admin API stays plain
 * HTTP on loopback, signed with SigV4: it is the user's endpoint, not a link between tiers.
 * Prints one ready line on stdout; SIGTERM/SIGINT close the server and exit 0.
 */
import { readFile } from 'node:fs/promises';
import type { Etcd3 } from 'etcd3';
import http from 'node:http';
import { systemClock } from '../shared/clock.js';
import { ConfigError, runMain } from '../shared/config/compileConfig.js';
import { connectionLimitsOf } from '../shared/config/connectionFlags.js';
import { createLogger } from '../shared/log.js';
import { guardConnections, httpServerOptions } from '../shared/net/connectionGuard.js';
import { RefusalLog } from '../shared/refusalLog.js';
import { openFileStore } from '../shared/store/store.js';
import { storeBackendOf } from '../shared/store/storeBackend.js';
import { HttpWireTransport } from '../shared/wire/httpTransport.js';
import { clientTlsOf, warnIfPlaintext, wireSecurityOf } from '../shared/wire/tls.js';
import { CC_PATH } from '../shared/wire/transport.js';
import { startMetrics } from '../shared/metrics/listener.js';
import { buildClcApp, CLC_PATH, STATUS_PATH } from './api/app.js';
import { fileVolumeBackend } from './state/fileVolumeBackend.js';
import { VolumeRecovery } from './core/volumeRecoveryRunner.js';
import { acceptUnsigned, type Authenticator } from './api/auth.js';
import { sigv4Authenticator } from './api/sigv4Authenticator.js';
import { createClcCore } from './clcCore.js';
import { notLeaderError, SOLE_REPLICA, type Leadership } from './core/leadership.js';
import { httpReplicaProbe } from './replica/replicaProbe.js';
import { clcElection, type ClcElection } from './replica/clcElection.js';
import { LeaderDuties, type Duty } from '../shared/leader/leaderDuties.js';
import { createCcClusters } from './clusters/ccClusters.js';
import { HelpShown, parseClcConfig } from './config.js';
import { identityDirectory } from './core/identities.js';
import { BMC_STORE_OPTIONS, BMC_STORE_SPEC } from './ha/power/bmcStore.js';
import { loadOrCreateAdminCredentials } from './state/adminCredentials.js';
import { addClcMetrics } from './metrics.js';
import { addLeaderMetric } from '../shared/metrics/leaderMetrics.js';
import { CLC_STORE_SPEC } from './state/clcStore.js';
import { EVENTS_STORE_SPEC } from './events/eventStore.js';
import { EventStream } from './events/eventStream.js';
import { EventWatcher } from './events/eventWatcher.js';
import { httpPoster, WebhookDelivery } from './events/webhookDelivery.js';
import { ensurePagingKey } from './state/pagingKey.js';
import { adminLoginCheck, type LoginCheck } from './status/statusAuth.js';
import { statusPage } from './status/statusRoutes.js';
import { gatherSummary } from './status/statusSources.js';

/**
 * Volumes left attaching or detaching by a killed CLC are looked at this many CC timeouts after start:
 * by then every CC call the dead process made has answered or timed out (the CC's own NC calls are
 * shorter), so what the nodes show is final.
 */
const VOLUME_SETTLE_CC_TIMEOUTS = 2;

async function main(): Promise<void> {
  let config;
  try {
    config = parseClcConfig(process.argv.slice(2), process.env, (s) => process.stdout.write(s));
  } catch (e) {
    if (e instanceof HelpShown) process.exit(0);
    throw e;
  }
  const logger = createLogger('clc');
  const security = wireSecurityOf(config, 'clc', config.host);
  warnIfPlaintext(security, logger, 'ferry-clc');
  // Replicas (issue 21): with --store etcd every CLC campaigns; only the leader changes things, and its
  // stores' writes are fenced by its election (a deposed leader's write is refused by etcd itself).
  let election: ClcElection | undefined;
  let etcdClient: Etcd3 | undefined;
  if (config.store === 'etcd' && config.etcdEndpoints !== undefined) {
    const { connectEtcd } = await import('../shared/store/etcdClient.js');
    etcdClient = connectEtcd({ endpoints: config.etcdEndpoints, callTimeoutMs: config.etcdTimeoutMs });
    election = clcElection({ client: etcdClient, etcdPrefix: config.etcdPrefix, self: config.advertiseUrl, ttlSeconds: config.leaderTtlSeconds, callTimeoutMs: config.etcdTimeoutMs, clock: systemClock, logger });
  }
  const leadership: Leadership = election ?? SOLE_REPLICA;
  // Files in --state-dir, or etcd (--store etcd): one factory, so the default path is unchanged.
  const backend = storeBackendOf(config, {
    stateDir: config.stateDir, clock: systemClock, onProblem: (e) => logger.warn({ err: e }, 'etcd store: a watched change could not be applied'),
    ...(election !== undefined && etcdClient !== undefined ? { fence: election.fence, etcdClient } : {}),
  });
  const store = await backend.open(CLC_STORE_SPEC);
  logger.info({ store: backend.kind, state: backend.where(CLC_STORE_SPEC) }, 'clc store opened');
  const origin = `http://${config.host}:${config.port}`;
  const url = `${origin}${CLC_PATH}`;
  let authenticator: Authenticator = acceptUnsigned;
  let loginCheck: LoginCheck | undefined;
  if (config.auth === 'sigv4') {
    const admin = await loadOrCreateAdminCredentials({ stateDir: config.stateDir, url, logger, now: systemClock.now() });
    loginCheck = adminLoginCheck(admin.identity);
    authenticator = sigv4Authenticator({ identities: identityDirectory([admin.identity]), clock: systemClock });
    logger.info({ path: admin.path, created: admin.created }, 'clc admin credentials (EC2_ACCESS_KEY, EC2_SECRET_KEY) are in this file');
  } else {
    logger.warn('--auth none: unsigned requests are accepted and act as the cloud administrator');
  }
  const transport = new HttpWireTransport({ path: CC_PATH, defaultTimeoutMs: config.ccTimeoutMs, encoding: config.wireEncoding, ...clientTlsOf(security) });
  const clusters = createCcClusters({ partitions: config.clusters, transport, timeoutMs: config.ccTimeoutMs, instanceTimeoutMs: config.ccInstanceTimeoutMs, leadership });
  // The event stream (issue 20): its own file beside clc.json; the core records into it before answering.
  const events = new EventStream({ store: await backend.open(EVENTS_STORE_SPEC), clock: systemClock, history: config.eventsHistory });
  const bmc = config.bmcStore !== undefined ? await openFileStore(config.bmcStore, BMC_STORE_OPTIONS) : await backend.open(BMC_STORE_SPEC);
  const volumes = config.storageDir !== undefined ? fileVolumeBackend(config.storageDir) : undefined;
  const { gate, ha, haControl } = createClcCore({
    store, bmc, clusters, clock: systemClock, logger, events, gateLimits: { maxWaiting: config.gateMaxWaiting, maxWaitMs: config.gateMaxWaitMs }, haTickMs: config.haTickMs,
    leading: () => leadership.leading(),
    ...(volumes ? { volumes } : {}),
  });
  const webhookToken = config.eventsWebhook !== undefined && config.eventsWebhookTokenFile !== undefined ? await readWebhookToken(config.eventsWebhookTokenFile) : undefined;
  // What only the leader runs, made afresh each time this replica leads (the single CLC: once, at start).
  const leaderDuties = (): Duty[] => {
    // Volumes a killed CLC (or a deposed leader) left creating, deleting, attaching or detaching (issue 18).
    const volumeRecovery = new VolumeRecovery({ store, clusters, clock: systemClock, logger, backend: volumes, settleMs: VOLUME_SETTLE_CC_TIMEOUTS * config.ccTimeoutMs });
    const webhook = config.eventsWebhook === undefined ? undefined
      : new WebhookDelivery({ stream: events, url: config.eventsWebhook, poster: httpPoster(config.eventsWebhook, webhookToken), clock: systemClock, logger });
    const watcher = new EventWatcher({ stream: events, clusters, clock: systemClock, logger, haLog: () => store.read().ha.events, pollMs: config.eventsPollMs });
    return [
      // Made before serving (or on taking over), so no read request has to write the store for it.
      { name: 'paging key', start: async () => { await ensurePagingKey(store); }, stop: () => Promise.resolve() },
      { name: 'host HA', start: () => ha.start(), stop: () => ha.stop() },
      { name: 'volume recovery', start: () => volumeRecovery.start(), stop: () => { volumeRecovery.stop(); return volumeRecovery.idle(); } },
      // Before the watcher's first round: a new URL's cursor starts before anything the watcher records.
      ...(webhook !== undefined ? [{ name: 'event webhook', start: () => webhook.start(), stop: () => webhook.stop() }] : []),
      { name: 'event watcher', start: () => { watcher.start(); return Promise.resolve(); }, stop: () => watcher.stop() },
    ];
  };
  const duties = new LeaderDuties({
    leadership, duties: leaderDuties, logger,
    // Requests waiting in the change gate were never run nor acknowledged: refused, their clients go to the new leader.
    onLost: () => {
      const refused = gate.refuseWaiting(() => notLeaderError(leadership), 'this CLC replica lost its leadership');
      if (refused > 0) logger.warn({ refused }, 'requests waiting in the change gate were refused NotLeader');
    },
  });
  if (election !== undefined) {
    election.onChange(() => duties.reconcile());
    election.start();
    // Serve once the election has an outcome (this replica leads, or another is seen), at most one lease.
    await election.settled(config.leaderTtlSeconds * 1000);
    logger.info({ self: config.advertiseUrl, leading: election.leading(), leader: election.leaderUrl() ?? null }, 'CLC replica: election settled');
  }
  duties.reconcile();
  // The single CLC (or a replica that leads at once) starts its duties before anything is served, as before;
  // the single CLC stops on a failed start as it always did (a replica logs it and tries at its next term).
  const failedStart = await duties.ready();
  if (failedStart !== undefined && election === undefined) throw failedStart;
  const refusals = new RefusalLog({ logger, clock: systemClock });
  // The status page logs in with the admin credentials; with --auth none there are none, and no page.
  const status = loginCheck === undefined ? undefined : statusPage({
    clock: systemClock, check: loginCheck, refusals, secureCookie: origin.startsWith('https:'),
    summary: () => gatherSummary({ clusters, store, clock: systemClock, logger, ha: haControl }),
  });
  const app = buildClcApp({
    clusters, store, clock: systemClock, logger, maxBodyBytes: config.maxBodyBytes, gate, authenticator, ha: haControl, haHooks: ha.hooks, origin, refusals,
    ...(status !== undefined ? { status } : {}),
    ...(volumes ? { volumes } : {}),
    events,
    leadership,
    ...(election !== undefined ? { replicaProbe: httpReplicaProbe() } : {}),
  });

  const limits = connectionLimitsOf(config);
  const server = http.createServer(httpServerOptions(limits), app);
  const guard = guardConnections(server, { limits, refusals });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const metrics = await startMetrics({
    daemon: 'clc', config, stateDir: config.stateDir, logger, add: (m) => {
      addClcMetrics(m, {
        store, gate, partitions: config.clusters.map((p) => p.name), events, clock: systemClock, ...(config.eventsWebhook !== undefined ? { webhookUrl: config.eventsWebhook } : {}),
      });
      addLeaderMetric(m, leadership);
    },
  });
  logger.info({ partitions: config.clusters.map((p) => p.name), auth: config.auth, ccLinks: security.kind, connections: guard.describe(), volumeStorage: config.storageDir ?? null }, 'clc started');
  if (status !== undefined) logger.info({ url: `${origin}${STATUS_PATH}` }, 'status page: log in with the admin access key id and secret key');
  process.stdout.write(`clc listening on ${url}\n`);

  const stop = (signal: string): void => {
    logger.info({ signal }, 'clc stopping');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    refusals.close();
    void metrics?.close();
    // Resigning revokes the lease: another replica leads at once rather than after the TTL.
    void duties.stop().then(() => election?.stop()).then(() => closed).then(() => backend.close()).finally(() => {
      transport.close();
      process.exit(0);
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** The webhook's bearer token: the file's first line; a missing or empty file stops start-up like a bad flag. */
async function readWebhookToken(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ConfigError([`--events-webhook-token-file: cannot read ${file}: ${(e as Error).message}`]);
  }
  const token = text.split('\n')[0]?.trim() ?? '';
  if (token === '') throw new ConfigError([`--events-webhook-token-file: ${file} is empty`]);
  return token;
}

void runMain(main);
