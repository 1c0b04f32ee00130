/**
 * The sim daemon's configuration: one table of fields (flag, env var, default, help), compiled once
 * from raw strings into a frozen, typed object (like Temporal's compileWorkerOptions). Errors name
 * the flag and the env var, so an operator knows which one to fix.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { insecurePlaintextFlag } from '../../../shared/config/wireSecurityFlags.js';
import type { Resources } from '../../../shared/model/resources.js';
import { MIGRATION_DEFAULTS, type MigrationTuning } from './migrationModel.js';
import { LOOPBACK_V4 } from './protocol.js';

export interface SimHvConfig {
  /** Loopback address the daemon binds; also the host's name on shared storage. */
  readonly host: string;
  /**
   * The control API's Unix socket (mode 0600: only its owner, root on a real host, may connect), as
   * libvirtd's /var/run/libvirt/libvirt-sock. The NC drives the host through it; nothing else does.
   */
  readonly socketPath: string;
  /**
   * --insecure-plaintext: migrations without per-migration credentials are allowed, and their streams
   * arrive on the plaintext TCP port. Without it every migration needs its credential (TLS port only).
   */
  readonly insecurePlaintext: boolean;
  /** The plaintext migration port, only with insecurePlaintext; 0 picks a free one. */
  readonly plaintextPort: number | undefined;
  /** Port of the mutually authenticated migration listener (per-migration credentials); 0 picks one. */
  readonly tlsPort: number;
  readonly stateDir: string;
  readonly storageDir: string;
  readonly capacity: Resources;
  readonly migration: MigrationTuning;
  readonly writeIntervalMs: number;
  readonly timeScale: number;
  /** Its guests ignore an ACPI reboot request, as a guest without an ACPI daemon does (a reset still reboots them). */
  readonly guestIgnoresAcpi: boolean;
}

export interface ConfigField {
  readonly flag: string;
  readonly env: string;
  readonly help: string;
  readonly default?: string;
  /** A bare flag (no value); its variable is true, false, 1 or 0. */
  readonly boolean?: true;
}

/** libvirt keeps its socket in /var/run/libvirt; one simhv per address, so one socket per host. */
export const defaultSocketPath = (host: string): string => `/run/ferry/simhv-${host}.sock`;

/** sockaddr_un's sun_path holds 108 bytes with the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107;

const PLAINTEXT_PORT = 16509;

/** Every setting, in --help order. Keys are the raw config's field names. */
export const CONFIG_FIELDS = {
  host: { flag: '--host', env: 'SIMHV_HOST', help: 'address to bind, in 127.0.0.0/8 (required)' },
  socket: { flag: '--socket', env: 'SIMHV_SOCKET', help: `control socket, mode 0600 (default ${defaultSocketPath('HOST')})` },
  tlsPort: { flag: '--tls-port', env: 'SIMHV_TLS_PORT', help: 'TLS migration port (libvirt uses 16514); 0 picks one', default: '16514' },
  insecurePlaintext: {
    flag: '--insecure-plaintext', env: 'SIMHV_INSECURE_PLAINTEXT', boolean: true,
    help: 'allow migrations without per-migration credentials, their streams in plaintext on --port (on purpose; logged as a warning)',
  },
  port: { flag: '--port', env: 'SIMHV_PORT', help: `plaintext migration port, only with --insecure-plaintext (default ${PLAINTEXT_PORT}, libvirt's TCP port); 0 picks one` },
  stateDir: { flag: '--state-dir', env: 'SIMHV_STATE_DIR', help: 'directory of this host\'s simhv.json (required)' },
  storageDir: { flag: '--storage-dir', env: 'SIMHV_STORAGE_DIR', help: 'shared storage root, the same for all hosts (required)' },
  cores: { flag: '--cores', env: 'SIMHV_CORES', help: 'host cores', default: '8' },
  memoryMiB: { flag: '--memory-mib', env: 'SIMHV_MEMORY_MIB', help: 'host memory, MiB', default: '16384' },
  diskGiB: { flag: '--disk-gib', env: 'SIMHV_DISK_GIB', help: 'host disk, GiB', default: '200' },
  bandwidthMbps: { flag: '--bandwidth-mbps', env: 'SIMHV_BANDWIDTH_MBPS', help: 'migration bandwidth, Mbit/s', default: String(MIGRATION_DEFAULTS.bandwidthMbps) },
  dirtyRateMiBps: { flag: '--dirty-rate-mibps', env: 'SIMHV_DIRTY_RATE_MIBPS', help: 'guest memory dirty rate, MiB/s', default: String(MIGRATION_DEFAULTS.dirtyRateMiBps) },
  maxDowntimeMs: { flag: '--max-downtime-ms', env: 'SIMHV_MAX_DOWNTIME_MS', help: 'default max pause at switchover, ms', default: String(MIGRATION_DEFAULTS.maxDowntimeMs) },
  maxIterations: { flag: '--max-iterations', env: 'SIMHV_MAX_ITERATIONS', help: 'pre-copy rounds before a migration fails', default: String(MIGRATION_DEFAULTS.maxIterations) },
  writeIntervalMs: { flag: '--write-interval-ms', env: 'SIMHV_WRITE_INTERVAL_MS', help: 'disk/heartbeat write period, ms', default: '1000' },
  timeScale: { flag: '--time-scale', env: 'SIMHV_TIME_SCALE', help: 'migration wall time = model time × this', default: '1' },
  guestIgnoresAcpi: {
    flag: '--guest-ignores-acpi', env: 'SIMHV_GUEST_IGNORES_ACPI', boolean: true,
    help: 'guests ignore an ACPI reboot request, as one without an ACPI daemon (the NC then resets them)',
  },
} as const satisfies Record<string, ConfigField>;

export type ConfigKey = keyof typeof CONFIG_FIELDS;
export type RawSimHvConfig = Partial<Record<ConfigKey, string | number | boolean | undefined>>;

export interface ConfigIssue {
  readonly field: ConfigKey;
  readonly flag: string;
  readonly env: string;
  readonly message: string;
}

export class SimHvConfigError extends Error {
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(`invalid configuration: ${issues.map((i) => `${i.flag} (${i.env}): ${i.message}`).join('; ')}`);
    this.name = 'SimHvConfigError';
  }
}

/** A number given as a string (flags, env) or a number (programmatic use). */
const num = (inner: z.ZodNumber) =>
  z.union([z.number(), z.string().trim().min(1, 'is empty').transform(Number)]).pipe(inner);
const int = (min: number, max: number) => num(z.number().int().min(min).max(max));

/** Given or not ('' when not): a plaintext port or socket path is only filled in once the other fields are known. */
const optional = <T extends z.ZodType>(inner: T) => z.union([z.literal(''), inner]);

const Schema = z.object({
  host: z.string().regex(LOOPBACK_V4, 'must be an IPv4 address in 127.0.0.0/8'),
  socket: optional(z.string().refine((p) => Buffer.byteLength(resolve(p)) <= MAX_SOCKET_PATH_BYTES,
    `must be at most ${MAX_SOCKET_PATH_BYTES} bytes once made absolute (the limit of a Unix socket's path)`)),
  insecurePlaintext: z.union([z.literal(''), insecurePlaintextFlag]).transform((v) => v === true),
  port: optional(int(0, 65535)),
  tlsPort: int(0, 65535),
  stateDir: z.string().min(1, 'is required'),
  storageDir: z.string().min(1, 'is required'),
  cores: int(1, 1024),
  memoryMiB: int(1, 16 * 1024 * 1024),
  diskGiB: int(1, 1024 * 1024),
  bandwidthMbps: num(z.number().gt(0).max(1_000_000)),
  dirtyRateMiBps: num(z.number().min(0).max(1_000_000)),
  maxDowntimeMs: num(z.number().min(1).max(600_000)),
  maxIterations: int(1, 1000),
  writeIntervalMs: int(10, 3_600_000),
  timeScale: num(z.number().gt(0).max(1000)),
  guestIgnoresAcpi: z.union([z.literal(''), insecurePlaintextFlag]).transform((v) => v === true),
}).superRefine((c, ctx) => {
  // Silently ignoring it would leave an operator believing streams arrive there.
  if (c.port !== '' && !c.insecurePlaintext) {
    ctx.addIssue({ code: 'custom', path: ['port'], message: 'needs --insecure-plaintext: without it there is no plaintext port (migrations arrive on --tls-port)' });
  }
});

export function compileSimHvConfig(raw: RawSimHvConfig): SimHvConfig {
  const filled: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(CONFIG_FIELDS) as [ConfigKey, ConfigField][]) {
    filled[key] = raw[key] ?? field.default ?? '';
  }
  const parsed = Schema.safeParse(filled);
  if (!parsed.success) {
    throw new SimHvConfigError(parsed.error.issues.map((i) => {
      const field = String(i.path[0]) as ConfigKey;
      const { flag, env } = CONFIG_FIELDS[field];
      return { field, flag, env, message: i.message };
    }));
  }
  const c = parsed.data;
  return deepFreeze({
    host: c.host,
    socketPath: resolve(c.socket === '' ? defaultSocketPath(c.host) : c.socket),
    insecurePlaintext: c.insecurePlaintext,
    plaintextPort: c.insecurePlaintext ? (c.port === '' ? PLAINTEXT_PORT : c.port) : undefined,
    tlsPort: c.tlsPort,
    stateDir: resolve(c.stateDir),
    storageDir: resolve(c.storageDir),
    capacity: { cores: c.cores, memoryMiB: c.memoryMiB, diskGiB: c.diskGiB },
    migration: {
      bandwidthMbps: c.bandwidthMbps,
      dirtyRateMiBps: c.dirtyRateMiBps,
      maxDowntimeMs: c.maxDowntimeMs,
      maxIterations: c.maxIterations,
    },
    writeIntervalMs: c.writeIntervalMs,
    timeScale: c.timeScale,
    guestIgnoresAcpi: c.guestIgnoresAcpi,
  });
}

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (typeof v === 'object' && v !== null) deepFreeze(v as object);
  return Object.freeze(o);
}
