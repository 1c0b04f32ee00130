/**
 * The NC's narrow interface to a hypervisor (STYLE habit 4). Two adapters implement it:
 * the simulated hypervisor (a small daemon per host, `nc/hypervisor/sim/`) and libvirt through its
 * C library (`nc/hypervisor/libvirt/`, docs/libvirt.md). VMs live in the hypervisor, not in the NC: the NC can die and re-adopt them with list().
 * Every method translates its adapter's failures into HypervisorError codes at this boundary.
 */
import type { Resources } from '../../shared/model/resources.js';
import type { MigrationCredential } from '../../shared/protocol/migrationProtocol.js';
import type { VolumeAttachmentSpec } from '../../shared/protocol/volumes.js';

/** One volume connected to a domain: which volume, the guest's device name, and where its data lives. */
export type { VolumeAttachmentSpec };

/**
 * One side's TLS credential for one migration item (shared/protocol/migrationProtocol.ts). Held in
 * memory only: never logged, never persisted. Each side accepts as its peer only a certificate of
 * `caPem` naming the same migration item and the other side's host (shared/pki/migrationPeer.ts).
 */
export type { MigrationCredential };

/** Hypervisor-level domain state (libvirt's virDomainState, reduced). */
export type DomainState =
  /** Defined and executing. */
  | 'running'
  /** Paused (e.g. the incoming side of a live migration before switchover). */
  | 'paused'
  /**
   * Paused by its administrator (PauseInstances, issue 18; libvirt: paused, reason user): frozen,
   * not writing, holding its memory, until resumed. Not a migration's pause, so it never reads as
   * an incoming domain still waiting for its stream.
   */
  | 'suspended'
  /** Defined but not executing (host rebooted, guest shut down). */
  | 'shutoff'
  /** Crashed. */
  | 'crashed';

export interface DomainSpec {
  /** Instance id, used as the domain name (unique per host). */
  readonly id: string;
  readonly resources: Resources;
  /** Image the root disk comes from; the sim only records it. */
  readonly imageId: string;
  /**
   * The volumes it holds (issue 18), in its definition before the guest runs (same locator on
   * shared storage, no data copied): `prepareIncoming` (a live migration moves the domain with them
   * attached), and `create` / `define` of a copy restarted elsewhere by host HA or re-homed when
   * stopped, so the guest sees its disks at boot (a shut-off domain gets those it lacks added before
   * it starts). Volumes attached to a running guest go through `attachVolume`.
   */
  readonly volumes?: readonly VolumeAttachmentSpec[];
}

export interface DomainInfo {
  readonly id: string;
  readonly state: DomainState;
  readonly resources: Resources;
  readonly imageId: string;
  /** Path of the domain's disk file on (shared) storage; written to while the domain runs. */
  readonly diskPath: string;
  /** Epoch ms when the domain was started on this host. */
  readonly startedAt: number;
  /** The volumes connected to it (issue 18), part of its persistent definition; absent or [] when none. */
  readonly volumes?: readonly VolumeAttachmentSpec[];
}

export interface HostInfo {
  /** The host's own address (127.0.1.N on one machine). */
  readonly host: string;
  readonly capacity: Resources;
  readonly hypervisor: 'sim' | 'libvirt';
}

/** Where and how to send a domain in a live migration. */
export interface MigrationTarget {
  readonly migrationId: string;
  /** The destination hypervisor's migration endpoint (sim: its base URL; libvirt: peer URI). */
  readonly destinationUri: string;
  /** Upper bound on pause at switchover, ms. */
  readonly maxDowntimeMs?: number;
  /** The source's credential; without one the stream is plaintext (only in --insecure-plaintext clouds). */
  readonly credential?: MigrationCredential;
}

export interface MigrationProgress {
  readonly migrationId: string;
  readonly id: string;
  readonly bytesTotal: number;
  readonly bytesTransferred: number;
  readonly bytesRemaining: number;
  readonly iteration: number;
}

export interface MigrationStats {
  readonly migrationId: string;
  readonly id: string;
  readonly elapsedMs: number;
  readonly downtimeMs: number;
  readonly bytesTransferred: number;
  readonly iterations: number;
}

export type HypervisorEvent =
  | { readonly kind: 'started'; readonly id: string }
  | { readonly kind: 'stopped'; readonly id: string; readonly reason: 'destroyed' | 'shutdown' | 'migrated' | 'crashed' | 'host-down' }
  | { readonly kind: 'migration-progress'; readonly progress: MigrationProgress }
  | { readonly kind: 'migration-incoming-done'; readonly migrationId: string; readonly id: string }
  /** The guest restarted in place (its own reboot, an ACPI request honoured, or a reset). */
  | { readonly kind: 'rebooted'; readonly id: string };

export interface HypervisorDriver {
  /** Connects and describes the host; fails with HypervisorUnavailable when it cannot. */
  connect(): Promise<HostInfo>;
  /** All domains the hypervisor knows, running or not: used to re-adopt at NC start. */
  list(): Promise<DomainInfo[]>;
  /** One domain, or undefined when the hypervisor does not know it. */
  info(id: string): Promise<DomainInfo | undefined>;
  /** Defines and starts a domain. Idempotent: creating a running domain with the same spec returns it. */
  create(spec: DomainSpec): Promise<DomainInfo>;
  /**
   * Defines a domain without starting it (a stopped instance's cold move, issue 18: libvirt's
   * virDomainDefineXML alone); it is started later by create(). Idempotent: the same spec answers the
   * domain as it is; another spec is DomainExists.
   */
  define(spec: DomainSpec): Promise<DomainInfo>;
  /** Stops and undefines a domain. Idempotent: an unknown domain is not an error. */
  destroy(id: string): Promise<void>;
  /**
   * Connects a volume to a defined domain, live and in its persistent definition (libvirt's
   * VIR_DOMAIN_AFFECT_LIVE|CONFIG). Idempotent: the same volume on the same device answers the domain;
   * a device or volume already used otherwise is VolumeConflict, an unknown domain DomainNotFound.
   */
  attachVolume(id: string, volume: VolumeAttachmentSpec): Promise<DomainInfo>;
  /** Disconnects a volume, live and from the definition. Idempotent: a volume not attached is not an error. */
  detachVolume(id: string, volumeId: string): Promise<DomainInfo>;
  /**
   * Freezes a running domain (libvirt's virDomainSuspend): it stops executing and writing, keeps its
   * memory. Idempotent: a suspended domain answers as is. Unknown: DomainNotFound; shut off, crashed
   * or migrating: DomainStateConflict.
   */
  pause(id: string): Promise<DomainInfo>;
  /** Lets a suspended domain run again (virDomainResume). Idempotent: a running domain answers as is. */
  resume(id: string): Promise<DomainInfo>;
  /**
   * Stops a running domain and keeps its persistent definition and disk (StopInstances, issue 18):
   * a graceful ACPI shutdown (virDomainShutdown) waited for up to the adapter's deadline, then a
   * power-off without undefine (virDomainDestroy) when `force` or the deadline passes. Idempotent:
   * a shut-off or crashed domain answers as is. Unknown: DomainNotFound; suspended, paused or
   * migrating: DomainStateConflict.
   */
  shutdown(id: string, opts: { readonly force: boolean }): Promise<DomainInfo>;
  /** Reboots a running domain in place (virDomainReboot). Unknown: DomainNotFound; not running or migrating: DomainStateConflict. */
  reboot(id: string): Promise<DomainInfo>;
  /**
   * Resets a running domain (libvirt's virDomainReset): the guest restarts at once without being
   * asked, same definition and disk; the fallback for a guest that ignores reboot(). Refused unless
   * it runs (DomainStateConflict).
   */
  reset(id: string): Promise<DomainInfo>;
  /**
   * Destination side: get ready to receive `spec` for `migrationId` (paused, resources held). With a
   * credential, the incoming stream is accepted only over TLS from a source presenting a certificate
   * for this same migration; a repeat with a new credential replaces the old one.
   */
  prepareIncoming(spec: DomainSpec, migrationId: string, credential?: MigrationCredential): Promise<void>;
  /** Destination side: forget a prepared or half-received incoming domain. Idempotent. */
  abortIncoming(id: string, migrationId: string): Promise<void>;
  /** Source side: live-migrate; resolves when the domain runs on the destination. */
  migrateOut(id: string, target: MigrationTarget): Promise<MigrationStats>;
  /** Source side: abort an in-flight migration; the domain keeps running here. Idempotent. */
  abortMigration(id: string, migrationId: string): Promise<void>;
  /** Subscribes to lifecycle and migration events; returns an unsubscribe function. */
  onEvent(listener: (e: HypervisorEvent) => void): () => void;
  close(): Promise<void>;
}
