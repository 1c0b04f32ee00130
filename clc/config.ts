/**
 * CLC configuration: commander flags with FERRY_CLC_* environment fallbacks, compiled once into a
 * frozen, typed object (STYLE habit 7). Every bad field is named by its flag; main exits 2.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { compileConfig, isLoopbackV4 } from '../shared/config/compileConfig.js';
import { checkConnectionLimits, connectionLimitFields, connectionLimitShape } from '../shared/config/connectionFlags.js';
import { flagNames, HelpShown, intFlag, readFlags } from '../shared/config/flagTable.js';
import { checkWireSecurityFlags, insecurePlaintextFlag, peerScheme, peerUrlProblem, tlsDirFlag } from '../shared/config/wireSecurityFlags.js';
import { metricsFields, metricsShape } from '../shared/config/metricsFlags.js';
import { checkReplicaFlags, isHttpOriginUrl, replicaFields, replicaShape } from '../shared/config/replicaFlags.js';
import { checkStoreFlags, storeFields, storeShape } from '../shared/config/storeFlags.js';
import { WIRE_ENCODING_FLAG, WIRE_ENCODING_HELP, wireEncodingFlag } from '../shared/config/wireEncodingFlag.js';
import { partitionSchema } from '../shared/protocol/common.js';
import type { PartitionInfo } from './clusters/clusters.js';
import { DEFAULT_GATE_LIMITS } from './core/gate.js';
import { DEFAULT_EVENT_HISTORY } from './events/eventLog.js';

const MiB = 1024 * 1024;

const isHttpUrl = isHttpOriginUrl;

/** The event webhook: https:// anywhere, or plain http:// to a loopback address only (a local relay, tests). */
export function webhookUrlProblem(s: string): string | undefined {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return 'is not a URL';
  }
  if (u.username !== '' || u.password !== '') return 'must not carry credentials (use --events-webhook-token-file)';
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:') return isLoopbackV4(u.hostname) ? undefined : 'plain http:// is allowed only to a loopback address (127.x); use https://';
  return 'must be an https:// (or loopback http://) URL';
}

/**
 * `cluster01=https://127.0.0.1:8774[,https://127.0.0.2:8774][,cluster02=URL]`: partition (= availability
 * zone) → its CC, or its CC replicas (issue 21): a URL without `name=` is one more replica of the partition before it.
 */
const clusterList = z.string().transform((s, ctx): PartitionInfo[] => {
  const out: Array<{ name: string; endpoints: string[] }> = [];
  for (const entry of s.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const eq = entry.indexOf('=');
    const last = out[out.length - 1];
    if (eq < 0 && last !== undefined && isHttpUrl(entry)) {
      const url = new URL(entry).origin;
      if (last.endpoints.includes(url)) ctx.addIssue({ code: 'custom', message: `${last.name}: ${url} is given twice` });
      else last.endpoints.push(url);
      continue;
    }
    const name = eq < 0 ? '' : entry.slice(0, eq);
    const endpoint = eq < 0 ? '' : entry.slice(eq + 1);
    if (!partitionSchema.safeParse(name).success) ctx.addIssue({ code: 'custom', message: `"${entry}" does not start with a partition name and "="` });
    else if (!isHttpUrl(endpoint)) ctx.addIssue({ code: 'custom', message: `${name}: "${endpoint}" is not an http(s)://host:port URL` });
    else if (out.some((p) => p.name === name)) ctx.addIssue({ code: 'custom', message: `partition ${name} is given twice` });
    else out.push({ name, endpoints: [new URL(endpoint).origin] });
  }
  if (out.length === 0) ctx.addIssue({ code: 'custom', message: 'at least one partition=URL is required' });
  return out.map((p) => partitionInfo(p.name, p.endpoints));
});

function partitionInfo(name: string, endpoints: readonly string[]): PartitionInfo {
  return Object.freeze({ name, endpoint: endpoints[0] ?? '', endpoints: Object.freeze([...endpoints]) });
}

export const clcConfigSchema = z.object({
  host: z.string().refine(isLoopbackV4, 'must be a loopback IPv4 address (127.x.y.z)').default('127.0.0.1'),
  port: intFlag(8773, 1, 65535),
  stateDir: z.string({ error: 'is required (a directory for clc.json)' }).min(1, 'is required (a directory for clc.json)'),
  /** Absent: cluster01 at 127.0.0.1:8774, https:// or http:// as the security flags say. */
  clusters: clusterList.optional(),
  ccTimeoutMs: intFlag(10_000, 100, 600_000),
  ccInstanceTimeoutMs: intFlag(150_000, 100, 1_800_000),
  maxBodyBytes: intFlag(MiB, 1024, 64 * MiB),
  gateMaxWaiting: intFlag(DEFAULT_GATE_LIMITS.maxWaiting, 1, 100_000),
  gateMaxWaitMs: intFlag(DEFAULT_GATE_LIMITS.maxWaitMs, 100, 600_000),
  /** sigv4: every request must be signed (docs/SECURITY.md); none: anyone on loopback is admin (tests, old scripts). */
  auth: z.enum(['sigv4', 'none'], { error: 'must be sigv4 or none' }).default('sigv4'),
  /** ferry-init's output directory: call the CCs over mutual TLS as clc-HOST. Not the admin API, which stays HTTP. */
  tlsDir: tlsDirFlag,
  /** Call the CCs over plain HTTP, on purpose; exactly one of the two is required. */
  insecurePlaintext: insecurePlaintextFlag,
  /** What calls to the CCs are sent in (compact JSON unless xml; a CC that reads only XML is called in XML). */
  wireEncoding: wireEncodingFlag,
  /** Host HA: how often the runner checks eligibility and lets time pass for every host (clc/ha/haRuntime.ts). */
  haTickMs: intFlag(2_000, 50, 600_000),
  /** Host HA: the per-host BMC settings file (mode 600); absent: <state-dir>/bmc.json. */
  bmcStore: z.string().min(1).optional(),
  /** Volumes (issue 18): the storage every host mounts; volume files go to <dir>/volumes/. Absent: no volumes. */
  storageDir: z.string().min(1, 'must name a directory').transform((d) => resolve(d)).optional(),
  /** The event stream (issue 20): how many events are kept, newest first. */
  eventsHistory: intFlag(DEFAULT_EVENT_HISTORY, 100, 1_000_000),
  /** How often the CCs are asked for migration progress while a plan is unfinished. */
  eventsPollMs: intFlag(2_000, 50, 600_000),
  /** POST every event here, in batches (clc/events/webhookDelivery.ts). */
  eventsWebhook: z.string().superRefine((s, ctx) => {
    const problem = webhookUrlProblem(s);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  }).optional(),
  /** A file holding the bearer token the webhook is called with. */
  eventsWebhookTokenFile: z.string().min(1).optional(),
  /** The admin API's header and request timeouts and pending-connection caps (shared/net/connectionGuard.ts). */
  ...connectionLimitShape,
  /** Prometheus metrics on their own listener (shared/metrics/listener.ts). */
  ...metricsShape,
  /** Where clc.json, events.json and bmc.json are kept: files, or etcd (shared/config/storeFlags.ts). */
  ...storeShape,
  /** Replicas (issue 21, --store etcd): --advertise-url (absent: http://HOST:PORT) and --leader-ttl-seconds. */
  ...replicaShape,
}).superRefine((r, ctx) => {
  checkWireSecurityFlags(r, ctx);
  checkConnectionLimits(r, ctx);
  checkStoreFlags(r, ctx);
  checkReplicaFlags(r, ctx);
  if (r.eventsWebhookTokenFile !== undefined && r.eventsWebhook === undefined) {
    ctx.addIssue({ code: 'custom', path: ['eventsWebhookTokenFile'], message: 'needs --events-webhook' });
  }
  for (const p of r.clusters ?? []) {
    for (const endpoint of p.endpoints ?? [p.endpoint]) {
      const problem = peerUrlProblem(r, endpoint);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['clusters'], message: `${p.name}: ${problem}` });
    }
  }
}).transform((r) => ({
  ...r,
  clusters: r.clusters ?? [partitionInfo('cluster01', [`${peerScheme(r)}//127.0.0.1:8774`])],
  advertiseUrl: r.advertiseUrl ?? `http://${r.host}:${r.port}`,
}));

export type ClcConfig = Readonly<z.infer<typeof clcConfigSchema>>;

/** Flag, env var and help for every field, in one table so they cannot drift. */
const FIELDS = [
  ['host', '--host <addr>', 'FERRY_CLC_HOST', 'loopback address to listen on (127.0.0.1)'],
  ['port', '--port <n>', 'FERRY_CLC_PORT', 'port to listen on (8773)'],
  ['stateDir', '--state-dir <dir>', 'FERRY_CLC_STATE_DIR', 'directory for clc.json (required)'],
  ['clusters', '--clusters <list>', 'FERRY_CLC_CLUSTERS', 'partition=CC URL pairs, comma-separated; a URL without partition= is another CC replica of the partition before it; https:// with --tls-dir (cluster01=https://127.0.0.1:8774)'],
  ['ccTimeoutMs', '--cc-timeout-ms <ms>', 'FERRY_CLC_CC_TIMEOUT_MS', 'timeout of one call to a CC (10000)'],
  ['ccInstanceTimeoutMs', '--cc-instance-timeout-ms <ms>', 'FERRY_CLC_CC_INSTANCE_TIMEOUT_MS', 'timeout of a CC call that starts or stops guests; the CC waits for hypervisors and re-places (150000)'],
  ['maxBodyBytes', '--max-body-bytes <n>', 'FERRY_CLC_MAX_BODY_BYTES', 'largest request body accepted (1048576)'],
  ['gateMaxWaiting', '--gate-max-waiting <n>', 'FERRY_CLC_GATE_MAX_WAITING', 'changes that may wait per partition for a DisableService or MigrateInstances (4096)'],
  ['auth', '--auth <mode>', 'FERRY_CLC_AUTH', 'sigv4: requests must be signed with the keys in <state-dir>/admin.credentials; none: unsigned requests act as admin (sigv4)'],
  ['gateMaxWaitMs', '--gate-max-wait-ms <ms>', 'FERRY_CLC_GATE_MAX_WAIT_MS', 'how long a change may wait for one before it is refused with PartitionBusy (30000)'],
  ['tlsDir', '--tls-dir <dir>', 'FERRY_CLC_TLS_DIR', 'ferry-init directory (ca.pem, clc-HOST.pem/.key): call the CCs over mutual TLS (this or --insecure-plaintext is required; the admin API stays HTTP)'],
  ['haTickMs', '--ha-tick-ms <ms>', 'FERRY_CLC_HA_TICK_MS', 'host HA: interval of the HA runner\'s checks and timers (2000)'],
  ['bmcStore', '--bmc-store <file>', 'FERRY_CLC_BMC_STORE', 'host HA: per-host BMC (fence agent) settings, mode 600 (<state-dir>/bmc.json, or etcd with --store etcd; this file when given)'],
  ['storageDir', '--storage-dir <dir>', 'FERRY_CLC_STORAGE_DIR', 'volumes: the shared storage every host mounts; volume files go to <dir>/volumes (no volumes without it)'],
  ['insecurePlaintext', '--insecure-plaintext', 'FERRY_CLC_INSECURE_PLAINTEXT', 'call the CCs over plain HTTP without TLS, on purpose (logged as a warning)'],
  ['wireEncoding', WIRE_ENCODING_FLAG, 'FERRY_CLC_WIRE_ENCODING', WIRE_ENCODING_HELP],
  ['eventsHistory', '--events-history <n>', 'FERRY_CLC_EVENTS_HISTORY', `event stream: how many events <state-dir>/events.json keeps, oldest dropped first (${DEFAULT_EVENT_HISTORY})`],
  ['eventsPollMs', '--events-poll-ms <ms>', 'FERRY_CLC_EVENTS_POLL_MS', 'event stream: how often the CCs are asked for migration progress while a migration runs (2000)'],
  ['eventsWebhook', '--events-webhook <url>', 'FERRY_CLC_EVENTS_WEBHOOK', 'event stream: POST events here as JSON batches, retried until acknowledged (https://, or http:// to 127.x)'],
  ['eventsWebhookTokenFile', '--events-webhook-token-file <file>', 'FERRY_CLC_EVENTS_WEBHOOK_TOKEN_FILE', 'event stream: a file whose content is sent as "Authorization: Bearer <token>" to the webhook'],
  ...connectionLimitFields('FERRY_CLC'),
  ...metricsFields('FERRY_CLC'),
  ...storeFields('FERRY_CLC', 'the CLC\'s state (clc.json, events.json, bmc.json)'),
  ...replicaFields('FERRY_CLC', 'admin API'),
] as const;

const FLAG_NAMES = flagNames(FIELDS);

export { HelpShown };

/** Parses argv (without node and script) and env into a compiled config, or throws ConfigError. */
export function parseClcConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, out: (s: string) => void = () => {}): ClcConfig {
  const raw = readFlags({ name: 'ferry-clc', envPrefix: 'FERRY_CLC_', description: 'Ferry cloud controller: the admin AWS-Query API', fields: FIELDS, out }, argv, env);
  return compileConfig(clcConfigSchema, raw, FLAG_NAMES);
}
