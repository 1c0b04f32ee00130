/**
 * CC configuration: commander flags with FERRY_CC_* environment fallbacks, compiled once into a
 * frozen, typed object (STYLE habit 7). Every bad field is named by its flag; main exits 2.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { compileConfig, ConfigError, isLoopbackV4 } from '../shared/config/compileConfig.js';
import { checkConnectionLimits, connectionLimitFields, connectionLimitShape } from '../shared/config/connectionFlags.js';
import { metricsFields, metricsShape } from '../shared/config/metricsFlags.js';
import { flagNames, HelpShown, readFlags } from '../shared/config/flagTable.js';
import { checkReplicaFlags, replicaFields, replicaShape } from '../shared/config/replicaFlags.js';
import { checkStoreFlags, storeFields, storeShape } from '../shared/config/storeFlags.js';
import { checkWireSecurityFlags, insecurePlaintextFlag, tlsDirFlag } from '../shared/config/wireSecurityFlags.js';
import { WIRE_ENCODING_FLAG, WIRE_ENCODING_HELP, wireEncodingFlag } from '../shared/config/wireEncodingFlag.js';
import { randomHex8 } from '../shared/model/ids.js';
import { partitionSchema } from '../shared/protocol/common.js';
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS, DEFAULT_TLS_URI_TEMPLATE, DEFAULT_URI_TEMPLATE, type MigrationSettings } from './migration/settings.js';

export const SCHEDULE_POLICIES = ['spread', 'greedy'] as const;
export type SchedulePolicy = (typeof SCHEDULE_POLICIES)[number];

const loopback = z.string().refine(isLoopbackV4, 'expected a loopback IPv4 address (127.x.y.z)');
const port = z.coerce.number().int().min(0).max(65535);
const positiveMs = z.coerce.number().int().min(1);
const positiveCount = z.coerce.number().int().min(1);

const nodeList = z.string().transform((s, ctx) => {
  const hosts = s.split(',').map((h) => h.trim()).filter((h) => h !== '');
  const seen = new Set<string>();
  for (const h of hosts) {
    if (!isLoopbackV4(h)) ctx.addIssue({ code: 'custom', message: `${h} is not a loopback IPv4 address` });
    if (seen.has(h)) ctx.addIssue({ code: 'custom', message: `${h} is registered twice` });
    seen.add(h);
  }
  return hosts;
});

export const ccConfigSchema = z.object({
  host: loopback.default('127.0.0.1'),
  port: port.default(8774),
  partition: partitionSchema.default('cluster01'),
  /** NC hosts in registration order (euca_conf --register-nodes); greedy scheduling follows it. */
  nodes: nodeList.default([]),
  /** The same list in a file (one host per line or comma-separated): a command line holds about 10,000 hosts at most. */
  nodesFile: z.string().min(1).optional(),
  ncPort: port.refine((p) => p > 0, 'must be a real port').default(8775),
  stateDir: z.string({ error: 'required' }).min(1, 'required'),
  pollIntervalMs: positiveMs.default(5000),
  ncTimeoutMs: positiveMs.default(3000),
  /** Calls that start or stop a guest wait for the hypervisor: a bound of their own. */
  ncInstanceTimeoutMs: positiveMs.default(60_000),
  schedulePolicy: z.enum(SCHEDULE_POLICIES).default('spread'),
  maxMigrationsPerSource: positiveCount.default(DEFAULT_LIMITS.perSource),
  maxMigrationsPerDestination: positiveCount.default(DEFAULT_LIMITS.perDestination),
  maxMigrationsPerCluster: positiveCount.default(DEFAULT_LIMITS.perCluster),
  migrationPrepareTimeoutMs: positiveMs.default(DEFAULT_TIMEOUTS.prepareMs),
  migrationReadyTimeoutMs: positiveMs.default(DEFAULT_TIMEOUTS.readyMs),
  migrationBaseTimeoutMs: positiveMs.default(DEFAULT_TIMEOUTS.migratingBaseMs),
  migrationPerGibTimeoutMs: positiveMs.default(DEFAULT_TIMEOUTS.migratingPerGiBMs),
  migrationStallTimeoutMs: positiveMs.default(DEFAULT_TIMEOUTS.stallMs),
  /** Default: DEFAULT_TLS_URI_TEMPLATE with --tls-dir, DEFAULT_URI_TEMPLATE without. */
  migrationUriTemplate: z.string().refine((t) => t.includes('{host}'), 'must contain {host}').optional(),
  /** Per-migration key pairs made ahead (cc/migration/keyPool.ts); 0: each made when issued. */
  migrationKeyPool: z.coerce.number().int().min(0).max(256).default(8),
  /** ferry-init's output directory: serve the CLC and call NCs over mutual TLS (docs/SECURITY.md). */
  tlsDir: tlsDirFlag,
  /** Plaintext on purpose; exactly one of the two is required. */
  insecurePlaintext: insecurePlaintextFlag,
  /** What calls to the NCs are sent in (the server reads both). */
  wireEncoding: wireEncodingFlag,
  /** The wire server's header and request timeouts and pending-connection caps (shared/net/connectionGuard.ts). */
  ...connectionLimitShape,
  /** Prometheus metrics on their own listener (shared/metrics/listener.ts). */
  ...metricsShape,
  /** Where the view cache is kept: cc.json, or etcd (shared/config/storeFlags.ts). */
  ...storeShape,
  /** Replicas (issue 21, --store etcd): --advertise-url (absent: this CC's own URL) and --leader-ttl-seconds. */
  ...replicaShape,
}).superRefine((r, ctx) => {
  checkWireSecurityFlags(r, ctx);
  checkConnectionLimits(r, ctx);
  checkStoreFlags(r, ctx);
  checkReplicaFlags(r, ctx);
}).transform((r) => ({
  ...r,
  advertiseUrl: r.advertiseUrl ?? `${r.tlsDir !== undefined ? 'https' : 'http'}://${r.host}:${r.port}`,
}));

export type CcConfig = Readonly<z.infer<typeof ccConfigSchema>>;

/** Flag name, env var and help for every field, in one table so they cannot drift. */
const FIELDS = [
  ['host', '--host <addr>', 'FERRY_CC_HOST', 'loopback address to listen on (127.0.0.1)'],
  ['port', '--port <n>', 'FERRY_CC_PORT', 'port to listen on (8774)'],
  ['partition', '--partition <name>', 'FERRY_CC_PARTITION', 'partition / availability zone this CC serves (cluster01)'],
  ['nodes', '--nodes <hosts>', 'FERRY_CC_NODES', 'comma-separated NC host addresses, in registration order'],
  ['nodesFile', '--nodes-file <file>', 'FERRY_CC_NODES_FILE', 'the NC host addresses from a file, one per line, in registration order (instead of --nodes)'],
  ['ncPort', '--nc-port <n>', 'FERRY_CC_NC_PORT', 'port every NC listens on (8775)'],
  ['stateDir', '--state-dir <dir>', 'FERRY_CC_STATE_DIR', 'directory for cc.json, the cached view (with --store file)'],
  ['pollIntervalMs', '--poll-interval-ms <ms>', 'FERRY_CC_POLL_INTERVAL_MS', 'safety-net poll of every NC (5000)'],
  ['ncTimeoutMs', '--nc-timeout-ms <ms>', 'FERRY_CC_NC_TIMEOUT_MS', 'timeout of one call to an NC (3000)'],
  ['ncInstanceTimeoutMs', '--nc-instance-timeout-ms <ms>', 'FERRY_CC_NC_INSTANCE_TIMEOUT_MS', 'timeout of an NC call that starts or stops a guest, which waits for the hypervisor (60000)'],
  ['schedulePolicy', '--schedule-policy <p>', 'FERRY_CC_SCHEDULE_POLICY', 'spread (most free first) or greedy (first fit)'],
  ['maxMigrationsPerSource', '--max-migrations-per-source <n>', 'FERRY_CC_MAX_MIGRATIONS_PER_SOURCE', 'live migrations in flight from one node (2)'],
  ['maxMigrationsPerDestination', '--max-migrations-per-destination <n>', 'FERRY_CC_MAX_MIGRATIONS_PER_DESTINATION', 'live migrations in flight to one node (2)'],
  ['maxMigrationsPerCluster', '--max-migrations-per-cluster <n>', 'FERRY_CC_MAX_MIGRATIONS_PER_CLUSTER', 'live migrations in flight in the partition (8)'],
  ['migrationPrepareTimeoutMs', '--migration-prepare-timeout-ms <ms>', 'FERRY_CC_MIGRATION_PREPARE_TIMEOUT_MS', 'a destination not ready within this is rolled back (60000)'],
  ['migrationReadyTimeoutMs', '--migration-ready-timeout-ms <ms>', 'FERRY_CC_MIGRATION_READY_TIMEOUT_MS', 'a ready item not committed within this is rolled back (60000)'],
  ['migrationBaseTimeoutMs', '--migration-base-timeout-ms <ms>', 'FERRY_CC_MIGRATION_BASE_TIMEOUT_MS', 'migrating allowance: this plus per-GiB × memory (60000)'],
  ['migrationPerGibTimeoutMs', '--migration-per-gib-timeout-ms <ms>', 'FERRY_CC_MIGRATION_PER_GIB_TIMEOUT_MS', 'migrating allowance per GiB of memory (150000)'],
  ['migrationStallTimeoutMs', '--migration-stall-timeout-ms <ms>', 'FERRY_CC_MIGRATION_STALL_TIMEOUT_MS', 'a migration without progress this long is aborted by its source NC (150000)'],
  ['migrationUriTemplate', '--migration-uri-template <t>', 'FERRY_CC_MIGRATION_URI_TEMPLATE', 'destination hypervisor migration endpoint, {host} replaced (https://{host}:16514 with --tls-dir, else http://{host}:16509)'],
  ['migrationKeyPool', '--migration-key-pool <n>', 'FERRY_CC_MIGRATION_KEY_POOL', 'per-migration key pairs made ahead, off the critical path (8; 0 makes each when issued; at most 256)'],
  ['tlsDir', '--tls-dir <dir>', 'FERRY_CC_TLS_DIR', 'ferry-init directory (ca.pem, cc-HOST.pem/.key, migration-ca.pem/.key): mutual TLS with the CLC and NCs (this or --insecure-plaintext is required)'],
  ['insecurePlaintext', '--insecure-plaintext', 'FERRY_CC_INSECURE_PLAINTEXT', 'serve and call over plain HTTP without TLS, on purpose (logged as a warning)'],
  ['wireEncoding', WIRE_ENCODING_FLAG, 'FERRY_CC_WIRE_ENCODING', WIRE_ENCODING_HELP],
  ...connectionLimitFields('FERRY_CC'),
  ...metricsFields('FERRY_CC'),
  ...storeFields('FERRY_CC', 'the cached view'),
  ...replicaFields('FERRY_CC', 'CC'),
] as const;

const FLAG_NAMES = flagNames(FIELDS);

export { HelpShown };

/** Parses argv (without node and script) and env into a compiled config, or throws ConfigError. */
export function parseCcConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, out: (s: string) => void = () => {}): CcConfig {
  const raw = readFlags({ name: 'ferry-cc', envPrefix: 'FERRY_CC_', description: 'Ferry cluster controller: one per partition (or several replicas of one, with --store etcd)', fields: FIELDS, out }, argv, env);
  if (raw.nodesFile !== undefined) {
    if (raw.nodes !== undefined) throw new ConfigError(['--nodes-file: give the hosts with --nodes or --nodes-file, not both']);
    try {
      raw.nodes = readFileSync(raw.nodesFile, 'utf8').split(/[\n,]/).map((h) => h.trim()).filter((h) => h !== '').join(',');
    } catch (e) {
      throw new ConfigError([`--nodes-file: cannot read ${raw.nodesFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`]);
    }
  }
  return compileConfig(ccConfigSchema, raw, FLAG_NAMES);
}

/** The migration part of the config, as the service takes it. */
export function migrationSettingsOf(c: CcConfig): MigrationSettings {
  return {
    limits: { perSource: c.maxMigrationsPerSource, perDestination: c.maxMigrationsPerDestination, perCluster: c.maxMigrationsPerCluster },
    timeouts: {
      prepareMs: c.migrationPrepareTimeoutMs, readyMs: c.migrationReadyTimeoutMs, migratingBaseMs: c.migrationBaseTimeoutMs,
      migratingPerGiBMs: c.migrationPerGibTimeoutMs, stallMs: c.migrationStallTimeoutMs,
    },
    uriTemplate: c.migrationUriTemplate ?? (c.tlsDir !== undefined ? DEFAULT_TLS_URI_TEMPLATE : DEFAULT_URI_TEMPLATE),
    newHex: randomHex8,
  };
}

/** With --tls-dir every NC is called over https (mTLS); with --insecure-plaintext over plain http. */
export function ncEndpoint(config: Pick<CcConfig, 'ncPort'> & { readonly tlsDir?: string | undefined }, host: string): string {
  return `${config.tlsDir !== undefined ? 'https' : 'http'}://${host}:${config.ncPort}`;
}
