/**
 * Which processes make up a cloud on this machine, with which flags: one description used by the
 * demo (detached daemons) and by the integration tests (children they kill by PID). Every tier link
 * is mutual TLS with the cloud PKI in `<baseDir>/certs` (ensureCloudPki writes it) unless the
 * layout opts out with `insecurePlaintext`.
 */
import { join } from 'node:path';
import { initCloudPki, RANDOM_PKI_SOURCES, type InitReport } from '../shared/pki/pkiFiles.js';
import { buildCloudPkiSpec } from '../shared/pki/spec.js';

export interface ProcessSpec {
  /** Unique within the cloud: clc, cc, nc-127.0.1.1, simhv-127.0.1.1, heartbeat-127.0.1.1. */
  readonly name: string;
  /** Built entry point, relative to the project root. */
  readonly entry: string;
  readonly args: readonly string[];
  /** What the daemon prints on stdout when it serves. */
  readonly ready: string;
}

export interface CloudLayoutOptions {
  /** Where state, shared storage, logs and the cloud PKI (certs/) go. */
  readonly baseDir: string;
  /** Address of the CLC and CC (127.0.0.1 for the demo). */
  readonly controllerHost: string;
  /** NC host addresses, one loopback address per simulated host (127.0.1.N). */
  readonly nodeHosts: readonly string[];
  readonly partition?: string;
  /** Plain HTTP between the tiers (--insecure-plaintext) instead of mutual TLS: an explicit opt-out. */
  readonly insecurePlaintext?: boolean;
  /** Extra simhv flags, e.g. --time-scale for fast tests. */
  readonly simArgs?: readonly string[];
  readonly ccArgs?: readonly string[];
  readonly ncArgs?: readonly string[];
  readonly clcArgs?: readonly string[];
  /**
   * Flags that point each NC at a hypervisor other than the simulated one (e.g. --hypervisor libvirt
   * --libvirt-uri ...); when given, no simhv process runs.
   */
  readonly hypervisorArgs?: (host: string) => readonly string[];
  /**
   * libvirtd's runtime directory on each libvirt host (its /run/libvirt): when given, each host also
   * runs ferry-heartbeat (host HA's heartbeat and VM activity links on the shared storage), a process
   * of its own beside the NC so that it outlives the NC.
   */
  readonly libvirtRunDir?: (host: string) => string;
  /** ferry-heartbeat's --interval-ms (its default when undefined). */
  readonly heartbeatIntervalMs?: number;
  /**
   * Where each NC reaches its simhv's control socket (undefined: simSocketOf): a test may put
   * something in between, e.g. a proxy that holds one request (test/helpers/hypervisorHold.ts).
   */
  readonly simSocket?: (host: string) => string | undefined;
}

/** simhv: its plaintext migration port, open only in a plaintext cloud (its control API is a Unix socket). */
export const PORTS = Object.freeze({ clc: 8773, cc: 8774, nc: 8775, simhv: 16509 });

/** Names the cloud in every certificate subject (O=Ferry cloud ferry). */
export const CLOUD_ID = 'ferry';

export function certsDirOf(o: Pick<CloudLayoutOptions, 'baseDir'>): string {
  return join(o.baseDir, 'certs');
}

/** The shared storage root every host of the cloud mounts (VM activity, heartbeats, volumes under volumes/). */
export function storageDirOf(o: Pick<CloudLayoutOptions, 'baseDir'>): string {
  return join(o.baseDir, 'storage');
}

const schemeOf = (o: CloudLayoutOptions): string => (o.insecurePlaintext === true ? 'http' : 'https');

/** The CC's wire endpoint, as the NCs and the CLC dial it. */
export function ccUrl(o: CloudLayoutOptions): string {
  return `${schemeOf(o)}://${o.controllerHost}:${PORTS.cc}`;
}

/** One NC's wire endpoint, as the CC dials it. */
export function ncUrl(o: CloudLayoutOptions, host: string): string {
  return `${schemeOf(o)}://${host}:${PORTS.nc}`;
}

/**
 * Where host `host`'s simhv serves its control API: an owner-only Unix socket in its state dir, which
 * its NC (the same user) is given. Nothing else can drive the hypervisor.
 */
export function simSocketOf(o: Pick<CloudLayoutOptions, 'baseDir'>, host: string): string {
  return join(o.baseDir, 'hosts', host, 'simhv', 'simhv.sock');
}

/**
 * simhv's migration flags: under mutual TLS none (every migration carries its credential, on the
 * TLS port); a plaintext cloud's hosts take credential-less streams on the plaintext port.
 */
function simSecurityArgs(o: CloudLayoutOptions): string[] {
  return o.insecurePlaintext === true ? ['--insecure-plaintext', '--port', String(PORTS.simhv)] : [];
}

/** --tls-dir <baseDir>/certs, or the explicit opt-out. */
function securityArgs(o: CloudLayoutOptions): string[] {
  return o.insecurePlaintext === true ? ['--insecure-plaintext'] : ['--tls-dir', certsDirOf(o)];
}

/**
 * Creates the cloud CA and a certificate per component in `<baseDir>/certs`, keeping files that
 * exist (so a restarted demo keeps its PKI; a re-run issues only missing components). Nothing to do
 * for a plaintext layout. Throws the PKI's coded errors (PkiFileExists, TlsFileUnreadable, ...).
 */
export function ensureCloudPki(o: CloudLayoutOptions): InitReport | undefined {
  if (o.insecurePlaintext === true) return undefined;
  const spec = buildCloudPkiSpec({
    cloudId: CLOUD_ID, clc: o.controllerHost, cc: [`${o.partition ?? 'cluster01'}=${o.controllerHost}`], nc: [o.nodeHosts.join(',')],
  });
  return initCloudPki({ dir: certsDirOf(o), spec, force: false, rotateCa: false, now: new Date(), ...RANDOM_PKI_SOURCES });
}

/** The processes, in start order (hosts first, then CC, then CLC). Pure: call ensureCloudPki before starting them. */
export function cloudLayout(o: CloudLayoutOptions): ProcessSpec[] {
  const partition = o.partition ?? 'cluster01';
  const security = securityArgs(o);
  const listening = (tier: string): string => `${tier} listening on ${schemeOf(o)}://`;
  const specs: ProcessSpec[] = [];
  for (const host of o.nodeHosts) {
    if (!o.hypervisorArgs) {
      specs.push({
        name: `simhv-${host}`,
        entry: 'dist/nc/hypervisor/sim/main.js',
        args: ['--host', host, '--socket', simSocketOf(o, host), ...simSecurityArgs(o), '--state-dir', join(o.baseDir, 'hosts', host, 'simhv'),
          '--storage-dir', storageDirOf(o), ...(o.simArgs ?? [])],
        ready: 'simhv listening on',
      });
    }
    if (o.libvirtRunDir) {
      specs.push({
        name: `heartbeat-${host}`,
        entry: 'dist/nc/ha/heartbeat/main.js',
        args: ['--host', host, '--storage-dir', storageDirOf(o), '--libvirt-run-dir', o.libvirtRunDir(host),
          ...(o.heartbeatIntervalMs !== undefined ? ['--interval-ms', String(o.heartbeatIntervalMs)] : [])],
        ready: 'heartbeat running for',
      });
    }
    specs.push({
      name: `nc-${host}`,
      entry: 'dist/nc/main.js',
      args: ['--host', host, '--port', String(PORTS.nc), '--state-dir', join(o.baseDir, 'hosts', host, 'nc'),
        ...(o.hypervisorArgs?.(host) ?? ['--sim-socket', o.simSocket?.(host) ?? simSocketOf(o, host)]),
        '--cc-url', ccUrl(o), '--storage-dir', storageDirOf(o), ...security, ...(o.ncArgs ?? [])],
      ready: listening('nc'),
    });
  }
  specs.push({
    name: 'cc',
    entry: 'dist/cc/main.js',
    args: ['--host', o.controllerHost, '--port', String(PORTS.cc), '--partition', partition,
      '--nodes', o.nodeHosts.join(','), '--nc-port', String(PORTS.nc), '--state-dir', join(o.baseDir, 'cc'), ...security, ...(o.ccArgs ?? [])],
    ready: listening('cc'),
  });
  specs.push({
    name: 'clc',
    entry: 'dist/clc/main.js',
    args: ['--host', o.controllerHost, '--port', String(PORTS.clc), '--state-dir', join(o.baseDir, 'clc'),
      '--clusters', `${partition}=${ccUrl(o)}`, '--storage-dir', storageDirOf(o), ...security, ...(o.clcArgs ?? [])],
    // The admin API stays plain HTTP (SigV4-signed): it is the user's endpoint, not a tier link.
    ready: 'clc listening on http://',
  });
  return specs;
}

export function clcUrl(controllerHost: string): string {
  return `http://${controllerHost}:${PORTS.clc}/services/Eucalyptus`;
}

/** A process of a layout under another name, with some flags' values replaced (added when absent) and `extra` flags appended. */
export function withFlags(spec: ProcessSpec, name: string, set: Readonly<Record<string, string>>, extra: readonly string[] = []): ProcessSpec {
  const args = [...spec.args];
  for (const [flag, value] of Object.entries(set)) {
    const i = args.indexOf(flag);
    if (i < 0) args.push(flag, value);
    else args[i + 1] = value;
  }
  return { ...spec, name, args: [...args, ...extra] };
}
