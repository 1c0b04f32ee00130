/**
 * NC configuration: commander flags with FERRY_NC_* environment fallbacks, compiled once with zod
 * into a frozen NcConfig (STYLE habit 7). Every bad field is named; the entry point exits 2.
 */
import { DEFAULT_REBOOT_TIMEOUT_MS } from './rebootWatcher.js';
import { Command, CommanderError } from 'commander';
import { resolve } from 'node:path';
import { z } from 'zod';
import { compileConfig, ConfigError, isLoopbackV4 } from '../shared/config/compileConfig.js';
import { checkConnectionLimits, connectionLimitFlags, connectionLimitsOf, connectionLimitShape } from '../shared/config/connectionFlags.js';
import { metricsFields, metricsShape } from '../shared/config/metricsFlags.js';
import { intFlag } from '../shared/config/flagTable.js';
import { unknownSettings } from '../shared/config/unknownSettings.js';
import type { ConnectionLimits } from '../shared/net/connectionGuard.js';
import { defaultSocketPath, MAX_SOCKET_PATH_BYTES } from './hypervisor/sim/config.js';
import type { TunnelSettings } from './hypervisor/libvirt/migrationTunnels.js';
import { checkWireSecurityFlags, insecurePlaintextFlag, peerUrlProblem, tlsDirFlag } from '../shared/config/wireSecurityFlags.js';
import { WIRE_ENCODING_FLAG, WIRE_ENCODING_HELP, wireEncodingFlag } from '../shared/config/wireEncodingFlag.js';
import type { WireEncoding } from '../shared/wire/wireEncoding.js';

export const DEFAULT_NC_PORT = 8775;
const MiB = 1024 * 1024;

/** Which hypervisor adapter, with what it needs. */
export type HypervisorConfig =
  | {
    readonly kind: 'sim';
    /** The simulated hypervisor's control socket (only its owner may open it; the NC runs as that user). */
    readonly socket: string;
  }
  | {
    readonly kind: 'libvirt';
    /** This host's libvirtd, e.g. qemu:///system (docs/libvirt.md). */
    readonly uri: string;
    /** libvirtd's qemu.conf migrate_tls_x509_cert_dir: where per-migration TLS files go. */
    readonly migrationTlsDir?: string;
    /** Caps the RAM a guest really gets (test labs); the VM type is still what is accounted. */
    readonly guestMemoryCapMiB?: number;
    /** Caps each outgoing migration stream, MiB/s. */
    readonly migrationBandwidthMiBs?: number;
    /** Per-migration TLS tunnels between the NCs (docs/libvirt.md); preferred over migrationTlsDir. */
    readonly tunnel?: TunnelSettings;
    /** The cluster's shared disk directory: each guest's root disk is `<dir>/<id>.img` (docs/libvirt.md). */
    readonly diskDir?: string;
    /** Boot guests from this kernel and initrd (test labs; firmware only without). */
    readonly directKernel?: { readonly kernel: string; readonly initrd: string };
  };

export interface NcConfig {
  readonly host: string;
  readonly port: number;
  readonly stateDir: string;
  readonly maxBodyBytes: number;
  readonly hypervisor: HypervisorConfig;
  /** The CC to hint at when migrations or instances change (ccNodeEvent); none: the CC's polls only. The first of ccUrls. */
  readonly ccUrl?: string;
  /** Every CC replica's URL (issue 21): hints go to the leader, following NotLeader (shared/leader/leaderRouting.ts). */
  readonly ccUrls?: readonly string[];
  /** ferry-init's directory (ca.pem, nc-HOST.pem/.key): serve and call the CC over mutual TLS. */
  readonly tlsDir?: string;
  /** --insecure-plaintext: plain HTTP chosen on purpose (logged as a warning); exactly one of the two is set. */
  readonly insecurePlaintext?: true;
  /** The cluster's shared storage root (the simulated hypervisors' --storage-dir): neighbours' activity checks read it. */
  readonly storageDir?: string;
  /** The server's header and request timeouts and pending-connection caps. */
  readonly connections: ConnectionLimits;
  /** What hints to the CC are sent in (the server reads both). */
  readonly wireEncoding: WireEncoding;
  /** Prometheus metrics on their own listener at HOST:metricsPort (shared/metrics/listener.ts); absent: off. */
  readonly metricsPort?: number;
  readonly metricsTokenFile?: string;
  /** RebootInstances: how long a guest asked to reboot has before it is reset (nc/rebootFallback.ts). */
  readonly rebootTimeoutMs: number;
}

/** The connection-limit flags, as every serving daemon names them (shared/config/connectionFlags.ts). */
const CONN = connectionLimitFlags('FERRY_NC');
const METRICS = Object.fromEntries(metricsFields('FERRY_NC').map(([field, flag, env, help]) => [field, { flag, env, help }])) as
  Readonly<Record<'metricsPort' | 'metricsTokenFile', { readonly flag: string; readonly env: string; readonly help: string }>>;
const bare = (flag: string): string => flag.split(' ')[0] ?? flag;

/** Flag (and env) name per schema field, so errors name what the operator typed. */
const FIELDS = {
  host: ['--host', 'FERRY_NC_HOST'],
  port: ['--port', 'FERRY_NC_PORT'],
  stateDir: ['--state-dir', 'FERRY_NC_STATE_DIR'],
  hypervisor: ['--hypervisor', 'FERRY_NC_HYPERVISOR'],
  simSocket: ['--sim-socket', 'FERRY_NC_SIM_SOCKET'],
  simUrl: ['--sim-url', 'FERRY_NC_SIM_URL'],
  libvirtUri: ['--libvirt-uri', 'FERRY_NC_LIBVIRT_URI'],
  libvirtTlsDir: ['--libvirt-tls-dir', 'FERRY_NC_LIBVIRT_TLS_DIR'],
  libvirtGuestMemoryCap: ['--libvirt-guest-memory-cap', 'FERRY_NC_LIBVIRT_GUEST_MEMORY_CAP'],
  libvirtMigrationBandwidth: ['--libvirt-migration-bandwidth', 'FERRY_NC_LIBVIRT_MIGRATION_BANDWIDTH'],
  libvirtTunnelPort: ['--libvirt-tunnel-port', 'FERRY_NC_LIBVIRT_TUNNEL_PORT'],
  libvirtTunnelLocal: ['--libvirt-tunnel-local', 'FERRY_NC_LIBVIRT_TUNNEL_LOCAL'],
  libvirtTunnelDataPorts: ['--libvirt-tunnel-data-ports', 'FERRY_NC_LIBVIRT_TUNNEL_DATA_PORTS'],
  libvirtDiskDir: ['--libvirt-disk-dir', 'FERRY_NC_LIBVIRT_DISK_DIR'],
  libvirtGuestKernel: ['--libvirt-guest-kernel', 'FERRY_NC_LIBVIRT_GUEST_KERNEL'],
  libvirtGuestInitrd: ['--libvirt-guest-initrd', 'FERRY_NC_LIBVIRT_GUEST_INITRD'],
  maxBodyBytes: ['--max-body-bytes', 'FERRY_NC_MAX_BODY_BYTES'],
  rebootTimeoutMs: ['--reboot-timeout-ms', 'FERRY_NC_REBOOT_TIMEOUT_MS'],
  ccUrl: ['--cc-url', 'FERRY_NC_CC_URL'],
  tlsDir: ['--tls-dir', 'FERRY_NC_TLS_DIR'],
  insecurePlaintext: ['--insecure-plaintext', 'FERRY_NC_INSECURE_PLAINTEXT'],
  storageDir: ['--storage-dir', 'FERRY_NC_STORAGE_DIR'],
  wireEncoding: ['--wire-encoding', 'FERRY_NC_WIRE_ENCODING'],
  headersTimeoutMs: [bare(CONN.headersTimeoutMs.flag), CONN.headersTimeoutMs.env],
  requestTimeoutMs: [bare(CONN.requestTimeoutMs.flag), CONN.requestTimeoutMs.env],
  maxPendingConnections: [bare(CONN.maxPendingConnections.flag), CONN.maxPendingConnections.env],
  maxPendingPerPeer: [bare(CONN.maxPendingPerPeer.flag), CONN.maxPendingPerPeer.env],
  metricsPort: [bare(METRICS.metricsPort.flag), METRICS.metricsPort.env],
  metricsTokenFile: [bare(METRICS.metricsTokenFile.flag), METRICS.metricsTokenFile.env],
} as const;
type Field = keyof typeof FIELDS;

const required = (what: string) => z.string({ error: `is required (${what})` }).min(1, `is required (${what})`);

const httpUrl = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}, 'must be an http:// or https:// URL');

const rawSchema = z.object({
  host: required('a loopback IPv4 address such as 127.0.1.1').refine(isLoopbackV4, 'must be a loopback IPv4 address (127.x.y.z)'),
  port: intFlag(DEFAULT_NC_PORT, 1, 65535),
  stateDir: required('a directory for nc.json'),
  hypervisor: z.enum(['sim', 'libvirt'], { error: 'must be one of: sim, libvirt' }).default('sim'),
  simSocket: z.string().min(1, 'must name a Unix socket')
    .refine((p) => Buffer.byteLength(resolve(p)) <= MAX_SOCKET_PATH_BYTES, `must be at most ${MAX_SOCKET_PATH_BYTES} bytes once made absolute (the limit of a Unix socket's path)`)
    .optional(),
  // Gone: the simulated hypervisor no longer serves its control API over TCP. Named, so old scripts learn why.
  simUrl: z.undefined({ error: 'was removed: the simulated hypervisor\'s control API is an owner-only Unix socket now; give --sim-socket PATH (its --socket)' }),
  libvirtUri: z.string().regex(/^[a-z][a-z0-9+]*:\/\//, 'must be a libvirt URI such as qemu:///system').optional(),
  libvirtTlsDir: z.string().min(1, 'must name a directory').optional(),
  libvirtGuestMemoryCap: z.string().regex(/^\d+$/, 'must be a whole number of MiB').optional()
    .transform((v) => (v === undefined ? undefined : Number(v)))
    .pipe(z.number().int().min(16, 'must be at least 16').optional()),
  libvirtMigrationBandwidth: z.string().regex(/^\d+$/, 'must be a whole number of MiB/s').optional()
    .transform((v) => (v === undefined ? undefined : Number(v)))
    .pipe(z.number().int().min(1, 'must be at least 1').optional()),
  libvirtTunnelPort: z.string().regex(/^\d+$/, 'must be a TCP port').optional()
    .transform((v) => (v === undefined ? undefined : Number(v)))
    .pipe(z.number().int().min(1, 'must be 1-65535').max(65535, 'must be 1-65535').optional()),
  libvirtTunnelLocal: z.enum(['loopback', 'host'], { error: 'must be one of: loopback, host' }).default('loopback'),
  libvirtTunnelDataPorts: z.string().regex(/^\d+-\d+$/, 'must be a port range MIN-MAX').optional()
    .transform((v) => (v === undefined ? undefined : { min: Number(v.split('-')[0]), max: Number(v.split('-')[1]) }))
    .refine((r) => r === undefined || (r.min >= 1 && r.min <= r.max && r.max <= 65535), 'must be MIN-MAX with 1 <= MIN <= MAX <= 65535'),
  libvirtDiskDir: z.string().min(1, 'must name a directory').optional(),
  libvirtGuestKernel: z.string().min(1, 'must name a file').optional(),
  libvirtGuestInitrd: z.string().min(1, 'must name a file').optional(),
  maxBodyBytes: intFlag(MiB, 1024, 64 * MiB),
  rebootTimeoutMs: intFlag(DEFAULT_REBOOT_TIMEOUT_MS, 100, 3_600_000),
  /** One URL, or the CC replicas' URLs comma-separated (issue 21). */
  ccUrl: z.string().transform((s, ctx) => {
    const urls = s.split(',').map((u) => u.trim()).filter((u) => u !== '');
    if (urls.length === 0 || urls.some((u) => !httpUrl.safeParse(u).success)) ctx.addIssue({ code: 'custom', message: 'must be an http:// or https:// URL (or several, comma-separated)' });
    return urls;
  }).optional(),
  tlsDir: tlsDirFlag,
  insecurePlaintext: insecurePlaintextFlag,
  storageDir: z.string().min(1, 'must name a directory').optional(),
  wireEncoding: wireEncodingFlag,
  ...connectionLimitShape,
  ...metricsShape,
}).superRefine((r, ctx) => {
  checkConnectionLimits(r, ctx);
  if (r.hypervisor === 'libvirt' && r.libvirtUri === undefined) ctx.addIssue({ code: 'custom', path: ['libvirtUri'], message: 'is required with --hypervisor libvirt' });
  if (r.hypervisor !== 'libvirt' && r.libvirtUri !== undefined) ctx.addIssue({ code: 'custom', path: ['libvirtUri'], message: 'needs --hypervisor libvirt' });
  if (r.hypervisor !== 'libvirt' && r.libvirtTunnelPort !== undefined) ctx.addIssue({ code: 'custom', path: ['libvirtTunnelPort'], message: 'needs --hypervisor libvirt' });
  if (r.libvirtTunnelPort === undefined && r.libvirtTunnelDataPorts !== undefined) ctx.addIssue({ code: 'custom', path: ['libvirtTunnelDataPorts'], message: 'needs --libvirt-tunnel-port' });
  for (const f of ['libvirtDiskDir', 'libvirtGuestKernel', 'libvirtGuestInitrd'] as const) {
    if (r.hypervisor !== 'libvirt' && r[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: 'needs --hypervisor libvirt' });
  }
  if ((r.libvirtGuestKernel === undefined) !== (r.libvirtGuestInitrd === undefined)) {
    ctx.addIssue({ code: 'custom', path: [r.libvirtGuestKernel === undefined ? 'libvirtGuestKernel' : 'libvirtGuestInitrd'], message: 'goes with --libvirt-guest-kernel and --libvirt-guest-initrd both' });
  }
  if (r.hypervisor !== 'sim' && r.simSocket !== undefined) ctx.addIssue({ code: 'custom', path: ['simSocket'], message: 'is for --hypervisor sim' });
  checkWireSecurityFlags(r, ctx);
  // The CC URL follows the choice: http:// hints would leave in clear under mTLS; https:// ones would fail every call without it.
  for (const u of r.ccUrl ?? []) {
    const ccUrlProblem = peerUrlProblem(r, u);
    if (ccUrlProblem !== undefined) ctx.addIssue({ code: 'custom', path: ['ccUrl'], message: ccUrlProblem });
  }
}).transform((r): NcConfig => ({
  host: r.host,
  port: r.port,
  stateDir: r.stateDir,
  maxBodyBytes: r.maxBodyBytes,
  rebootTimeoutMs: r.rebootTimeoutMs,
  hypervisor: r.hypervisor === 'libvirt'
    ? {
      kind: 'libvirt', uri: r.libvirtUri ?? '',
      ...(r.libvirtTlsDir !== undefined ? { migrationTlsDir: r.libvirtTlsDir } : {}),
      ...(r.libvirtGuestMemoryCap !== undefined ? { guestMemoryCapMiB: r.libvirtGuestMemoryCap } : {}),
      ...(r.libvirtMigrationBandwidth !== undefined ? { migrationBandwidthMiBs: r.libvirtMigrationBandwidth } : {}),
      ...(r.libvirtTunnelPort !== undefined
        ? { tunnel: { port: r.libvirtTunnelPort, local: r.libvirtTunnelLocal, ...(r.libvirtTunnelDataPorts ? { dataPorts: r.libvirtTunnelDataPorts } : {}) } }
        : {}),
      ...(r.libvirtDiskDir !== undefined ? { diskDir: resolve(r.libvirtDiskDir) } : {}),
      ...(r.libvirtGuestKernel !== undefined && r.libvirtGuestInitrd !== undefined
        ? { directKernel: { kernel: resolve(r.libvirtGuestKernel), initrd: resolve(r.libvirtGuestInitrd) } }
        : {}),
    }
    : { kind: 'sim', socket: resolve(r.simSocket ?? defaultSocketPath(r.host)) },
  ...(r.ccUrl !== undefined && r.ccUrl[0] !== undefined ? { ccUrl: r.ccUrl[0], ccUrls: Object.freeze([...r.ccUrl]) } : {}),
  ...(r.tlsDir !== undefined ? { tlsDir: r.tlsDir } : {}),
  ...(r.insecurePlaintext ? { insecurePlaintext: true as const } : {}),
  ...(r.storageDir !== undefined ? { storageDir: resolve(r.storageDir) } : {}),
  connections: connectionLimitsOf(r),
  wireEncoding: r.wireEncoding,
  ...(r.metricsPort !== undefined ? { metricsPort: r.metricsPort } : {}),
  ...(r.metricsTokenFile !== undefined ? { metricsTokenFile: r.metricsTokenFile } : {}),
}));

function command(): Command {
  const cmd = new Command('ferry-nc')
    .description('Ferry node controller: one per hypervisor host')
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined });
  const flags: Record<Field, string> = {
    host: '--host <addr>', port: '--port <n>', stateDir: '--state-dir <dir>', hypervisor: '--hypervisor <kind>',
    simSocket: '--sim-socket <path>', simUrl: '--sim-url <url>', libvirtUri: '--libvirt-uri <uri>', libvirtTlsDir: '--libvirt-tls-dir <dir>',
    libvirtGuestMemoryCap: '--libvirt-guest-memory-cap <MiB>', libvirtMigrationBandwidth: '--libvirt-migration-bandwidth <MiB/s>',
    libvirtTunnelPort: '--libvirt-tunnel-port <port>', libvirtTunnelLocal: '--libvirt-tunnel-local <loopback|host>', libvirtTunnelDataPorts: '--libvirt-tunnel-data-ports <min-max>',
    libvirtDiskDir: '--libvirt-disk-dir <dir>', libvirtGuestKernel: '--libvirt-guest-kernel <file>', libvirtGuestInitrd: '--libvirt-guest-initrd <file>', maxBodyBytes: '--max-body-bytes <n>', rebootTimeoutMs: '--reboot-timeout-ms <ms>', ccUrl: '--cc-url <url>',
    tlsDir: '--tls-dir <dir>', insecurePlaintext: '--insecure-plaintext', storageDir: '--storage-dir <dir>', wireEncoding: WIRE_ENCODING_FLAG,
    headersTimeoutMs: CONN.headersTimeoutMs.flag, requestTimeoutMs: CONN.requestTimeoutMs.flag,
    maxPendingConnections: CONN.maxPendingConnections.flag, maxPendingPerPeer: CONN.maxPendingPerPeer.flag,
    metricsPort: METRICS.metricsPort.flag, metricsTokenFile: METRICS.metricsTokenFile.flag,
  };
  const help: Record<Field, string> = {
    host: 'this host\'s loopback address, one per simulated host (127.0.1.N)', port: 'port to listen on (8775)',
    stateDir: 'directory for nc.json (required)', hypervisor: 'hypervisor driver: sim or libvirt (sim)', simSocket: 'the simulated hypervisor\'s control socket (/run/ferry/simhv-HOST.sock)',
    simUrl: 'removed: use --sim-socket',
    libvirtUri: 'libvirtd of this host, e.g. qemu:///system (with --hypervisor libvirt)',
    libvirtTlsDir: 'libvirtd\'s migrate_tls_x509_cert_dir, for per-migration TLS files',
    libvirtGuestMemoryCap: 'largest RAM a guest really gets, MiB (test labs; accounting keeps the VM type)',
    libvirtMigrationBandwidth: 'cap on each outgoing migration stream, MiB/s (default: QEMU\'s)',
    libvirtTunnelPort: 'carry TLS migrations through per-migration tunnels between the NCs, listening here (same port on every host)',
    libvirtTunnelLocal: 'where QEMU meets the tunnel: loopback (127.0.0.1) or host (the NC\'s address; one-machine labs)',
    libvirtTunnelDataPorts: 'ports QEMU\'s stream uses at the tunnel\'s local ends (49152-49215)',
    libvirtDiskDir: 'the cluster\'s shared disk directory (every host mounts it at this path): each guest\'s root disk is <dir>/<instance>.img, so a live migration moves no disk data and a fenced host\'s guests restart elsewhere on their own disks',
    libvirtGuestKernel: 'boot guests from this kernel (test labs; with --libvirt-guest-initrd)',
    libvirtGuestInitrd: 'the initrd that goes with --libvirt-guest-kernel',
    maxBodyBytes: 'largest request body accepted (1048576)',
    rebootTimeoutMs: `RebootInstances: a guest that has not rebooted this long after the request (ACPI) is reset (${DEFAULT_REBOOT_TIMEOUT_MS})`,
    ccUrl: 'the CC to tell about migration changes at once (optional); the URLs of a partition\'s CC replicas, comma-separated, with --store etcd CCs',
    tlsDir: 'ferry-init directory (ca.pem, nc-HOST.pem/.key): mutual TLS with the CC (this or --insecure-plaintext is required)',
    insecurePlaintext: 'serve and call over plain HTTP without TLS, on purpose (logged as a warning)',
    storageDir: 'shared storage root, for host HA activity checks of neighbours (optional)',
    wireEncoding: WIRE_ENCODING_HELP,
    headersTimeoutMs: CONN.headersTimeoutMs.help, requestTimeoutMs: CONN.requestTimeoutMs.help,
    maxPendingConnections: CONN.maxPendingConnections.help, maxPendingPerPeer: CONN.maxPendingPerPeer.help,
    metricsPort: METRICS.metricsPort.help, metricsTokenFile: METRICS.metricsTokenFile.help,
  };
  for (const field of Object.keys(FIELDS) as Field[]) cmd.option(flags[field], `${help[field]} [env ${FIELDS[field][1]}]`);
  return cmd;
}

/** Flags win over the environment; the result is validated once and frozen. */
export function parseNcConfig(argv: readonly string[], env: NodeJS.ProcessEnv): NcConfig {
  const cmd = command();
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError && e.exitCode === 0) throw e; // --help: let the caller exit 0
    throw new ConfigError([(e as Error).message.replace(/^error: /, '')]);
  }
  const unknown = unknownSettings(env, 'FERRY_NC_', Object.values(FIELDS).map(([, envName]) => envName));
  if (unknown.length > 0) throw new ConfigError(unknown);
  const opts = cmd.opts<Partial<Record<Field, string>>>();
  const raw: Partial<Record<Field, string>> = {};
  for (const field of Object.keys(FIELDS) as Field[]) raw[field] = opts[field] ?? env[FIELDS[field][1]];
  const names = Object.fromEntries(Object.entries(FIELDS).map(([k, [flag, envName]]) => [k, `${flag} (${envName})`]));
  const compiled = compileConfig(rawSchema, raw, names);
  return Object.freeze({ ...compiled, hypervisor: Object.freeze({ ...compiled.hypervisor }), connections: Object.freeze({ ...compiled.connections }) });
}
