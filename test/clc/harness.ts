/** Builds the admin API in-process over a fake Clusters, a memory store and a manual clock. */
import type { Express } from 'express';
import { createServer, type Server } from 'node:http';
import { pino, type Logger } from 'pino';
import request from 'supertest';
import xml2js from 'xml2js';
import { buildClcApp, CLC_PATH } from '../../clc/api/app.js';
import { acceptUnsigned, type Authenticator } from '../../clc/api/auth.js';
import type { Clusters } from '../../clc/clusters/clusters.js';
import type { GateLimits } from '../../clc/core/gate.js';
import type { Leadership, ReplicaProbe } from '../../clc/core/leadership.js';
import type { HaNodeHooks } from '../../clc/core/nodeHooks.js';
import { PartitionGate } from '../../clc/core/partitionGate.js';
import { openMemoryEventsStore } from '../../clc/events/eventStore.js';
import { EventStream } from '../../clc/events/eventStream.js';
import { gateEventsObserver } from '../../clc/events/gateEvents.js';
import type { HaProvider, HaServiceActions } from '../../clc/ha/haProvider.js';
import { openMemoryBmcStore } from '../../clc/ha/power/bmcStore.js';
import { openMemoryClcStore, type ClcState } from '../../clc/state/clcStore.js';
import { ManualClock } from '../../shared/clock.js';
import { silentLogger } from '../../shared/log.js';
import type { Store } from '../../shared/store/store.js';
import { twoZoneCloud, type FakeClusters } from './fakeClusters.js';
import { setUpHa } from './ha/haSetup.js';
import { notWiredHa } from './ha/notWired.js';

export const START = Date.UTC(2013, 5, 1, 12, 0, 0);

/** Deterministic 8-hex ids: 00000001, 00000002, ... */
export function counterIds(): () => string {
  let n = 0;
  return () => (++n).toString(16).padStart(8, '0');
}

export interface Harness {
  readonly app: Express;
  readonly clusters: FakeClusters;
  readonly store: Store<ClcState>;
  readonly clock: ManualClock;
  readonly gate: PartitionGate;
  /** Host HA's facade, runner and BMC store (absent with `ha: false`). */
  readonly ha?: Awaited<ReturnType<typeof setUpHa>>;
  /** The event stream (with `events: true`), over a memory store. */
  readonly events?: EventStream;
}

export interface HarnessOptions {
  readonly clusters?: FakeClusters;
  /** Stands between the app and the fake, e.g. to watch the store during a call. */
  readonly wrap?: (fake: FakeClusters) => Clusters;
  readonly store?: Store<ClcState>;
  readonly logger?: Logger;
  readonly maxBodyBytes?: number;
  readonly gateLimits?: GateLimits;
  /** How requests are authenticated; unsigned-as-admin (acceptUnsigned) unless given. */
  readonly authenticator?: (clock: ManualClock) => Authenticator;
  /** Host HA's provider and actions (notWiredHa() unless given); false: the CLC is built without HA. */
  readonly ha?: { provider: HaProvider; actions: HaServiceActions } | false;
  /** Host HA's hooks into node changes (clc/core/nodeHooks.ts); none unless given. */
  readonly haHooks?: HaNodeHooks;
  /** Build the CLC with its event stream (clc/events), recorded into a memory store. */
  readonly events?: boolean;
  /** Whether this CLC leads (issue 21); the sole CLC's (always) unless given. */
  readonly leadership?: Leadership;
  /** Whether other CLC replicas answer (DescribeServices at a replica). */
  readonly replicaProbe?: ReplicaProbe;
}

export async function harness(opts: HarnessOptions = {}): Promise<Harness> {
  const clusters = opts.clusters ?? twoZoneCloud();
  const store = opts.store ?? await openMemoryClcStore();
  const clock = new ManualClock(START);
  clusters.clock = clock;
  const logger = opts.logger ?? silentLogger();
  const events = opts.events === true ? new EventStream({ store: await openMemoryEventsStore(), clock }) : undefined;
  const gate = new PartitionGate({
    clock, logger, ...(opts.gateLimits ? { limits: opts.gateLimits } : {}), ...(events ? { observer: gateEventsObserver(events, logger) } : {}),
  });
  const ha = opts.ha === false ? undefined : await setUpHa({
    store, clock, partitions: clusters.partitions.map((p) => p.name), bmc: await openMemoryBmcStore(), ...(opts.ha ?? notWiredHa()),
  });
  const app = buildClcApp({
    clusters: opts.wrap ? opts.wrap(clusters) : clusters, store, clock, logger,
    ids: counterIds(), requestIds: () => 'req-1', gate, authenticator: opts.authenticator ? opts.authenticator(clock) : acceptUnsigned,
    ...(opts.maxBodyBytes !== undefined ? { maxBodyBytes: opts.maxBodyBytes } : {}),
    ...(ha ? { ha: ha.control } : {}),
    ...(opts.haHooks ? { haHooks: opts.haHooks } : {}),
    ...(events ? { events } : {}),
    ...(opts.leadership ? { leadership: opts.leadership } : {}),
    ...(opts.replicaProbe ? { replicaProbe: opts.replicaProbe } : {}),
  });
  return { app, clusters, store, clock, gate, ...(ha ? { ha } : {}), ...(events ? { events } : {}) };
}

/** A logger whose lines (parsed JSON) land in `lines`. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => { lines.push(JSON.parse(s) as Record<string, unknown>); } });
  return { logger, lines };
}

export interface QueryReply {
  readonly status: number;
  readonly text: string;
  /** Parsed with explicitArray off and attributes dropped, as a plain client would. */
  readonly doc: Record<string, any>;
}

export async function parseXml(text: string): Promise<Record<string, any>> {
  return (await xml2js.parseStringPromise(text, { explicitArray: false, ignoreAttrs: true })) as Record<string, any>;
}

/** The admin API's test address: every request these tests send stays on 127.0.12.x. */
export const API_HOST = '127.0.12.1';

/** Serves `app` on API_HOST for the length of `fn`. */
async function withServer<T>(app: Express, fn: (server: Server) => Promise<T>): Promise<T> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, API_HOST, resolve));
  try {
    return await fn(server);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

/** POSTs a form; `Version` is added unless given. */
export async function query(app: Express, params: Record<string, string>): Promise<QueryReply> {
  return withServer(app, async (server) => {
    const res = await request(server).post(CLC_PATH).type('form').send(new URLSearchParams({ Version: '2013-02-01', ...params }).toString());
    return { status: res.status, text: res.text, doc: await parseXml(res.text) };
  });
}

/** Launches `count` instances of `type` in `zone` through the API and marks them running; their ids. */
export async function launchRunning(h: Harness, zone: string, type = 'm1.small', count = 1): Promise<string[]> {
  const r = await query(h.app, { Action: 'RunInstances', ImageId: 'emi-00000001', InstanceType: type, MinCount: String(count), 'Placement.AvailabilityZone': zone });
  if (r.status !== 200) throw new Error(`launch failed: ${r.text}`);
  const ids = items(r.doc.RunInstancesResponse.instancesSet).map((i) => i.instanceId as string);
  for (const id of ids) h.clusters.setInstanceState(id, 'running');
  return ids;
}

/** Resolves once `cond` holds, checking between event-loop turns (requests in flight need a few). */
export async function eventually(cond: () => boolean, what: string, turns = 500): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** The `<item>` list of a set element as parsed with explicitArray off. */
export function items(set: unknown): any[] {
  if (set === undefined || set === '' || set === null) return [];
  const it = (set as { item?: unknown }).item;
  if (it === undefined) return [];
  return Array.isArray(it) ? it : [it];
}

export function errorCode(r: QueryReply): string | undefined {
  return r.doc.Response?.Errors?.Error?.Code;
}
