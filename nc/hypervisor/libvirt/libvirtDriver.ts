/**
 * HypervisorDriver over a real libvirtd (docs/libvirt.md). VMs live in libvirt: Ferry's view of a
 * domain (image, accounted resources) is kept in the domain's own <metadata>, so list() re-adopts
 * domains after an NC restart and the record moves with the domain in a migration. Every libvirt
 * failure is translated into a HypervisorErrors code here (errorMap.ts).
 */
import { join } from 'node:path';
import { systemClock, type Clock } from '../../../shared/clock.js';
import { isFerryError } from '../../../shared/errors/registry.js';
import type { Resources } from '../../../shared/model/resources.js';
import { sleepOn } from '../clockSleep.js';
import type {
  DomainInfo, DomainSpec, HostInfo, HypervisorDriver, HypervisorEvent, MigrationCredential, MigrationStats, MigrationTarget, VolumeAttachmentSpec,
} from '../driver.js';
import { HypervisorErrors } from '../errors.js';
import { EventHub } from '../eventHub.js';
import {
  buildDomainXml, domainStateOf, guestSize, migratedAway, parseFerryMetadata, parseSizing, type DirectKernelBoot, type LibvirtDomainType,
} from './domainXml.js';
import { translateLibvirtError, VIR_ERR, type FailureContext } from './errorMap.js';
import { VIR } from './ffi.js';
import { ensureDisk } from './guestDisk.js';
import { lifecycleMeaning } from './domainEvents.js';
import { startLibvirtEventLoop } from './eventLoop.js';
import { domainTypeFor, probeKvm } from './kvmProbe.js';
import { IncomingMigrations } from './incomingMigrations.js';
import { LibvirtCallError, LibvirtConnection, type LibvirtSession, type OpenLibvirt } from './libvirtApi.js';
import { destinationHost } from './migrationParams.js';
import { MigrationTunnels, type TunnelSettings } from './migrationTunnels.js';
import { OutgoingMigrations, type MigrationRouteHold } from './outgoingMigrations.js';
import { MigrationTlsDir } from './tlsFiles.js';
import { buildVolumeDiskXml, parseDisks, parseVolumes, volumeAttachConflict, type DomainDisk } from './volumeDiskXml.js';

/** How long close() waits for the connection's calls in flight. */
const CLOSE_WAIT_MS = 2_000;
/** How often a volume detach re-reads the live XML while the guest releases the disk. */
const UNPLUG_POLL_MS = 100;
/** How often a graceful shutdown re-reads the domain's state while the guest powers off. */
const SHUTDOWN_POLL_MS = 100;
/** How long a graceful shutdown waits for the guest by default before it powers the domain off (EC2 waits minutes; a lab guest has no ACPI daemon). */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

export interface LibvirtDriverOptions {
  /** This host's libvirt URI, e.g. qemu:///system or qemu+tcp://127.0.0.1:16511/system. */
  readonly uri: string;
  /** The host's own address, reported in HostInfo. */
  readonly host: string;
  /**
   * Carry every credentialed migration through a per-migration TLS tunnel between the NCs
   * (migrationTunnels.ts): concurrent, and checked as the simulated path checks. Preferred.
   */
  readonly tunnel?: TunnelSettings;
  /**
   * qemu.conf's migrate_tls_x509_cert_dir of this host's libvirtd: libvirt's own TLS, used for
   * credentialed migrations only without a tunnel (one at a time per host and direction; CA-only check).
   */
  readonly migrationTlsDir?: string;
  /** 'auto' (default) probes the machine for usable KVM; see kvmProbe.ts. */
  readonly domainType?: LibvirtDomainType | 'auto';
  readonly emulator?: string;
  /** Caps on what a guest really gets (a lab runs 64 MiB firmware-only guests); accounting keeps the VM type. */
  readonly guestMemoryCapMiB?: number;
  readonly guestVcpuCap?: number;
  /** Disk capacity to report (libvirt knows no instance-store size). */
  readonly diskCapacityGiB?: number;
  /** How often a running migration's job statistics become migration-progress events. */
  readonly progressIntervalMs?: number;
  /** Caps each outgoing migration stream, MiB/s (default: QEMU's). */
  readonly migrationBandwidthMiBs?: number;
  /** How long a prepared incoming migration waits for its domain before its TLS files go. */
  readonly incomingTimeoutMs?: number;
  readonly clock?: Clock;
  /** How to reach libvirt (default: koffi into libvirt.so.0); unit tests pass a fake. */
  readonly open?: OpenLibvirt;
  /** Boot guests from this kernel and initrd instead of firmware only (test labs). */
  readonly directKernel?: DirectKernelBoot;
  /**
   * The cluster's shared disk directory: each guest gets a root disk `<dir>/<id>.img` (a sparse raw
   * file of the VM type's size, made at its first start and kept when it stops: a fenced host's
   * guest restarts elsewhere on it, and only the storage layer may decide it is garbage).
   */
  readonly diskDir?: string;
  /** Directory for each guest's serial log, `<id>.serial` (shared by the hosts, so it follows a migration). */
  readonly serialLogDir?: string;
  /** Subscribe to libvirt's lifecycle events (default: with the real libvirt, yes). */
  readonly lifecycleEvents?: boolean;
  /**
   * How long a volume detach from a running guest waits for the guest to release the disk (ACPI
   * eject) before it answers VolumeDetachTimeout (default 30 s; libvirt itself waits 5 s of it).
   */
  readonly volumeDetachTimeoutMs?: number;
  /** How long a graceful shutdown (StopInstances without force) waits for the guest before it powers it off (default 30 s). */
  readonly shutdownTimeoutMs?: number;
}

export class LibvirtDriver implements HypervisorDriver {
  private readonly clock: Clock;
  private readonly events = new EventHub<HypervisorEvent>();
  private readonly tls: MigrationTlsDir | undefined;
  private readonly tunnels: MigrationTunnels | undefined;
  private readonly incoming: IncomingMigrations;
  private readonly outgoing: OutgoingMigrations;
  private readonly open: OpenLibvirt;
  private connection: Promise<LibvirtSession> | undefined;
  private domainType: LibvirtDomainType | undefined;
  private closed = false;
  private readonly wantsEvents: boolean;
  /** libvirt reports started/stopped itself on the shared connection: the driver does not repeat them. */
  private libvirtEvents = false;

  constructor(private readonly o: LibvirtDriverOptions) {
    this.clock = o.clock ?? systemClock;
    this.open = o.open ?? ((uri) => LibvirtConnection.open(uri));
    this.wantsEvents = o.lifecycleEvents ?? o.open === undefined;
    // Before any connection opens: only connections opened after it deliver events.
    if (this.wantsEvents && o.open === undefined) startLibvirtEventLoop();
    this.tls = o.migrationTlsDir ? new MigrationTlsDir(o.migrationTlsDir, o.uri) : undefined;
    this.tunnels = o.tunnel ? new MigrationTunnels(o.tunnel, o.host, this.clock) : undefined;
    const tlsDir = this.tls;
    this.outgoing = new OutgoingMigrations({
      uri: o.uri, host: o.host, clock: this.clock, progressIntervalMs: o.progressIntervalMs ?? 500, bandwidthMiBs: o.migrationBandwidthMiBs, sharedDisks: o.diskDir !== undefined,
      conn: () => this.conn(), open: this.open, emit: (e) => this.emit(e), fail: (e, c) => this.fail(e, c),
      route: (id, target) => this.routeFor(id, target),
    });
    this.incoming = new IncomingMigrations({
      host: o.host, clock: this.clock,
      credentials: this.tunnels ?? (tlsDir && {
        hold: (_id, migrationId, c) => tlsDir.holdDestination(migrationId, c),
        release: (_id, migrationId) => tlsDir.releaseDestination(migrationId),
      }),
      timeoutMs: o.incomingTimeoutMs ?? 600_000,
      info: (id) => this.info(id), list: () => this.list(), connect: () => this.connect(), destroy: (id) => this.destroy(id),
      emit: (e) => this.emit(e),
    });
  }

  async connect(): Promise<HostInfo> {
    const c = await this.conn();
    const node = await c.nodeInfo().catch((e: unknown) => this.rethrow(e, { operation: 'read node info' }));
    const capacity: Resources = {
      cores: node.cpus, memoryMiB: Math.floor(Number(node.memory) / 1024), diskGiB: this.o.diskCapacityGiB ?? 100,
    };
    return { host: this.o.host, capacity, hypervisor: 'libvirt' };
  }

  /** Also drops definitions left behind by migrations whose NC died before it could (migratedAway). */
  async list(): Promise<DomainInfo[]> {
    const c = await this.conn();
    const names = await c.listDomainNames().catch((e: unknown) => this.rethrow(e, { operation: 'list domains' }));
    const out: DomainInfo[] = [];
    for (const name of names) {
      const seen = await this.inspect(name);
      if (seen === 'migrated-away' && !this.outgoing.isActive(name)) await c.withDomain(name, (dom) => c.undefine(dom)).catch(() => undefined);
      else if (seen && seen !== 'migrated-away') out.push(seen);
    }
    return out;
  }

  async info(id: string): Promise<DomainInfo | undefined> {
    const seen = await this.inspect(id);
    return seen === 'migrated-away' ? undefined : seen;
  }

  private async inspect(id: string): Promise<DomainInfo | 'migrated-away' | undefined> {
    const c = await this.conn();
    try {
      return await c.withDomain(id, async (dom) => {
        const state = await c.stateAndReason(dom);
        if (migratedAway(state)) return 'migrated-away' as const;
        const xml = await c.xmlDesc(dom);
        const meta = parseFerryMetadata(xml);
        return {
          id, state: domainStateOf(state.state, state.reason), resources: meta?.resources ?? parseSizing(xml), imageId: meta?.imageId ?? 'unknown',
          diskPath: '', startedAt: meta?.startedAt ?? 0, volumes: parseVolumes(xml),
        };
      });
    } catch (e) {
      // The domain went away between lookup and the next call (a migration finished): unknown here.
      if (e instanceof LibvirtCallError && e.code === VIR_ERR.NO_DOMAIN) return undefined;
      return this.rethrow(e, { operation: 'read domain', id });
    }
  }

  async create(spec: DomainSpec): Promise<DomainInfo> {
    const existing = await this.sameDomain(spec);
    if (existing && (existing.state === 'running' || existing.state === 'suspended')) return existing;
    // A shut-off domain gets the volumes its definition lacks first (attachVolume adds only what is missing).
    if (existing) for (const v of spec.volumes ?? []) await this.attachVolume(spec.id, v);
    const c = await this.conn();
    const xml = await this.domainXml(spec);
    try {
      if (existing) await c.withDomain(spec.id, (dom) => c.start(dom));
      else await c.defineAndStart(xml);
    } catch (e) {
      // A domain defined but not started would be adopted as shut off by the next list(): remove it.
      if (!existing) await c.withDomain(spec.id, (dom) => c.undefine(dom)).catch(() => undefined);
      return this.rethrow(e, { operation: 'start', id: spec.id });
    }
    this.emit({ kind: 'started', id: spec.id });
    const started = await this.info(spec.id);
    if (!started) throw HypervisorErrors.make('HypervisorInternalError', { detail: `domain ${spec.id} vanished right after it started` });
    return started;
  }

  /** The domain of `spec` when libvirt knows it; DomainExists when it knows one of that name with another spec. */
  private async sameDomain(spec: DomainSpec): Promise<DomainInfo | undefined> {
    const existing = await this.info(spec.id);
    if (existing && (existing.imageId !== spec.imageId || !sameResources(existing.resources, spec.resources))) {
      throw HypervisorErrors.make('DomainExists', { id: spec.id, host: this.o.host, detail: `image ${existing.imageId}` });
    }
    return existing;
  }

  /** The domain XML of `spec` on this host, its root disk (shared) made first or kept. */
  private async domainXml(spec: DomainSpec): Promise<string> {
    const disk = this.o.diskDir === undefined ? undefined : await ensureDisk(this.o.diskDir, spec);
    return buildDomainXml({
      spec, domainType: await this.typeOfDomains(), startedAt: this.clock.now(),
      emulator: this.o.emulator ?? '/usr/bin/qemu-system-x86_64',
      ...guestSize(spec.resources, { memoryMiB: this.o.guestMemoryCapMiB, vcpus: this.o.guestVcpuCap }),
      boot: this.o.directKernel,
      serialLog: this.o.serialLogDir === undefined ? undefined : join(this.o.serialLogDir, `${spec.id}.serial`),
      disk,
      volumeDisks: (spec.volumes ?? []).map(buildVolumeDiskXml),
    });
  }

  /** virDomainDefineXML of the domain create() would start, not started; its disk (shared) made or kept. */
  async define(spec: DomainSpec): Promise<DomainInfo> {
    const existing = await this.sameDomain(spec);
    if (existing) return existing;
    const c = await this.conn();
    const xml = await this.domainXml(spec);
    await c.define(xml).catch((e: unknown) => this.rethrow(e, { operation: 'define', id: spec.id }));
    const defined = await this.info(spec.id);
    if (!defined) throw HypervisorErrors.make('HypervisorInternalError', { detail: `domain ${spec.id} vanished right after it was defined` });
    return defined;
  }

  async destroy(id: string): Promise<void> {
    const c = await this.conn();
    const existed = await c.withDomain(id, async (dom) => {
      if (domainStateOf(await c.state(dom)) !== 'shutoff') {
        await c.destroy(dom).catch((e: unknown) => {
          if (!(e instanceof LibvirtCallError && e.code === VIR_ERR.OPERATION_INVALID)) throw e; // already stopped
        });
      }
      await c.undefine(dom);
      return true;
    }).catch((e: unknown) => this.rethrow(e, { operation: 'destroy', id }));
    if (existed) this.emit({ kind: 'stopped', id, reason: 'destroyed' });
  }

  /** virDomainSuspend of a running domain; a suspended one answers as is. */
  pause(id: string): Promise<DomainInfo> {
    return this.setRunState(id, 'running', 'suspended', 'pause');
  }

  /** virDomainResume of a suspended domain; a running one answers as is. */
  resume(id: string): Promise<DomainInfo> {
    return this.setRunState(id, 'suspended', 'running', 'resume');
  }

  /**
   * virDomainShutdown, then the state polled until the guest is off; virDomainDestroy (the
   * definition kept: no undefine) when `force` or the deadline passes. A shut-off or crashed domain
   * answers as is; a suspended, paused or migrating one is DomainStateConflict.
   */
  async shutdown(id: string, opts: { readonly force: boolean }): Promise<DomainInfo> {
    const c = await this.conn();
    if (this.outgoing.isActive(id)) throw HypervisorErrors.make('DomainStateConflict', { id, host: this.o.host, state: 'migrating', operation: 'shutdown' });
    const askedGuest = await c.withDomain(id, async (dom) => {
      const s = await c.stateAndReason(dom);
      const state = domainStateOf(s.state, s.reason);
      if (state === 'shutoff' || state === 'crashed') return false;
      if (state !== 'running') throw HypervisorErrors.make('DomainStateConflict', { id, host: this.o.host, state, operation: 'shutdown' });
      if (opts.force) await c.destroy(dom);
      else await c.shutdown(dom);
      return true;
    }).catch((e: unknown) => this.rethrow(e, { operation: 'shutdown', id }));
    if (askedGuest === undefined) throw HypervisorErrors.make('DomainNotFound', { id, host: this.o.host });
    if (askedGuest && !opts.force) await this.awaitPowerOff(c, id);
    if (askedGuest) this.emit({ kind: 'stopped', id, reason: 'shutdown' });
    const now = await this.info(id);
    if (!now) throw HypervisorErrors.make('DomainNotFound', { id, host: this.o.host });
    return now;
  }

  /** Polls until the guest is off, and powers it off (definition kept) once the deadline passes. */
  private async awaitPowerOff(c: LibvirtSession, id: string): Promise<void> {
    const deadline = this.clock.now() + (this.o.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
    for (;;) {
      const off = await c.withDomain(id, async (dom) => {
        const state = domainStateOf(await c.state(dom));
        if (state === 'shutoff' || state === 'crashed') return true;
        if (this.clock.now() < deadline) return false;
        await c.destroy(dom).catch((e: unknown) => {
          if (!(e instanceof LibvirtCallError && e.code === VIR_ERR.OPERATION_INVALID)) throw e; // it went off meanwhile
        });
        return true;
      }).catch((e: unknown) => this.rethrow(e, { operation: 'shutdown', id }));
      if (off !== false) return;
      await sleepOn(this.clock, SHUTDOWN_POLL_MS);
    }
  }

  /** virDomainReset of a running domain: the guest restarts at once, unasked; same definition and disk. */
  reset(id: string): Promise<DomainInfo> {
    return this.restartGuest(id, 'reset');
  }

  /** virDomainReboot of a running domain (ACPI: the guest may ignore it); same host, same definition and disk. */
  reboot(id: string): Promise<DomainInfo> {
    return this.restartGuest(id, 'reboot');
  }

  private async restartGuest(id: string, operation: 'reboot' | 'reset'): Promise<DomainInfo> {
    const c = await this.conn();
    if (this.outgoing.isActive(id)) throw HypervisorErrors.make('DomainStateConflict', { id, host: this.o.host, state: 'migrating', operation });
    const found = await c.withDomain(id, async (dom) => {
      const s = await c.stateAndReason(dom);
      const state = domainStateOf(s.state, s.reason);
      if (state !== 'running') throw HypervisorErrors.make('DomainStateConflict', { id, host: this.o.host, state, operation });
      await (operation === 'reset' ? c.reset(dom) : c.reboot(dom));
      return true;
    }).catch((e: unknown) => this.rethrow(e, { operation, id }));
    if (!found) throw HypervisorErrors.make('DomainNotFound', { id, host: this.o.host });
    const now = await this.info(id);
    if (!now) throw HypervisorErrors.make('DomainNotFound', { id, host: this.o.host });
    return now;
  }

  private async setRunState(id: string, from: 'running' | 'suspended', to: 'running' | 'suspended', operation: 'pause' | 'resume'): Promise<DomainInfo> {
    const c = await this.conn();
    if (this.outgoing.isActive(id)) throw HypervisorErrors.make('DomainStateConflict', { id, host: this.o.host, state: 'migrating', operation });
    const found = await c.withDomain(id, async (dom) => {
      const s = await c.stateAndReason(dom);
      const state = domainStateOf(s.state, s.reason);
      if (state === to) return true;
      if (state !== from) throw HypervisorErrors.make('DomainStateConflict', { id, host: this.o.host, state, operation });
      await (operation === 'pause' ? c.suspend(dom) : c.resume(dom));
      return true;
    }).catch((e: unknown) => this.rethrow(e, { operation, id }));
    if (!found) throw HypervisorErrors.make('DomainNotFound', { id, host: this.o.host });
    const now = await this.info(id);
    if (!now) throw HypervisorErrors.make('DomainNotFound', { id, host: this.o.host });
    return now;
  }

  /**
   * A volume as a virtio disk (volumeDiskXml.ts): live and in the definition of a running or paused
   * domain, in the definition only of a shut-off one. Checked first against every domain's disks here.
   */
  async attachVolume(id: string, volume: VolumeAttachmentSpec): Promise<DomainInfo> {
    const operation = `attach volume ${volume.volumeId}`;
    const c = await this.conn();
    const names = await c.listDomainNames().catch((e: unknown) => this.rethrow(e, { operation: 'list domains' }));
    const disks: { id: string; disks: DomainDisk[] }[] = [];
    let mine: { live: boolean; inLive: boolean; inConfig: boolean } | undefined;
    for (const name of names) {
      const seen = await c.withDomain(name, async (dom) => {
        const s = await c.stateAndReason(dom);
        if (migratedAway(s)) return undefined;
        const live = domainStateOf(s.state) !== 'shutoff' && domainStateOf(s.state) !== 'crashed';
        const liveDisks = live ? parseDisks(await c.xmlDesc(dom)) : [];
        // The definition's disks too: a disk a guest released live but that is still defined is still its.
        const configDisks = parseDisks(await c.xmlDesc(dom, VIR.XML.INACTIVE));
        const has = (ds: readonly DomainDisk[]): boolean => ds.some((d) => d.serial === volume.volumeId);
        return { live, inLive: has(liveDisks), inConfig: has(configDisks), disks: dedupe([...liveDisks, ...configDisks]) };
      }).catch((e: unknown) => this.rethrow(e, { operation, id: name }));
      if (!seen) continue;
      disks.push({ id: name, disks: seen.disks });
      if (name === id) mine = seen;
    }
    if (!mine) throw HypervisorErrors.make('DomainNotFound', { id, host: this.o.host });
    const clash = volumeAttachConflict(disks, id, volume);
    if (clash) throw HypervisorErrors.make('VolumeConflict', { id, host: this.o.host, detail: clash });
    // A repeat adds only what is missing (libvirt refuses a target the live guest or definition has).
    const flags = (mine.live && !mine.inLive ? VIR.AFFECT.LIVE : 0) | (mine.inConfig ? 0 : VIR.AFFECT.CONFIG);
    const done = flags === 0 || await c.withDomain(id, (dom) => c.attachDevice(dom, buildVolumeDiskXml(volume), flags).then(() => true))
      .catch((e: unknown) => this.rethrow(e, { operation, id }));
    return this.infoAfter(id, done);
  }

  /**
   * Unplugs the disk from a running guest first and waits, bounded, until its live XML lacks it;
   * only then drops it from the definition. A guest that never releases it keeps it attached in both
   * (VolumeDetachTimeout); the unplug request stays pending in the guest.
   */
  async detachVolume(id: string, volumeId: string): Promise<DomainInfo> {
    const operation = `detach volume ${volumeId}`;
    const c = await this.conn();
    const seen = await c.withDomain(id, async (dom) => {
      const s = await c.stateAndReason(dom);
      const live = domainStateOf(s.state) !== 'shutoff' && domainStateOf(s.state) !== 'crashed';
      return { live, inLive: live ? parseVolumes(await c.xmlDesc(dom)) : [], inConfig: parseVolumes(await c.xmlDesc(dom, VIR.XML.INACTIVE)) };
    }).catch((e: unknown) => this.rethrow(e, { operation, id }));
    if (!seen) throw HypervisorErrors.make('DomainNotFound', { id, host: this.o.host });
    const live = seen.inLive.find((v) => v.volumeId === volumeId);
    const config = seen.inConfig.find((v) => v.volumeId === volumeId);
    if (live) {
      await c.withDomain(id, (dom) => c.detachDevice(dom, buildVolumeDiskXml(live), VIR.AFFECT.LIVE))
        .catch((e: unknown) => this.rethrow(e, { operation, id }));
      await this.untilReleased(id, volumeId);
    }
    if (config) {
      await c.withDomain(id, (dom) => c.detachDevice(dom, buildVolumeDiskXml(config), VIR.AFFECT.CONFIG))
        .catch((e: unknown) => this.rethrow(e, { operation, id }));
    }
    return this.infoAfter(id, true);
  }

  /** Polls the live XML until the guest released the volume's disk, or VolumeDetachTimeout. */
  private async untilReleased(id: string, volumeId: string): Promise<void> {
    const ms = this.o.volumeDetachTimeoutMs ?? 30_000;
    const deadline = this.clock.now() + ms;
    for (;;) {
      const c = await this.conn();
      const held = await c.withDomain(id, async (dom) => parseVolumes(await c.xmlDesc(dom)).some((v) => v.volumeId === volumeId))
        .catch((e: unknown) => this.rethrow(e, { operation: `detach volume ${volumeId}`, id }));
      if (held === undefined) throw HypervisorErrors.make('DomainNotFound', { id, host: this.o.host });
      if (!held) return;
      if (this.clock.now() >= deadline) throw HypervisorErrors.make('VolumeDetachTimeout', { id, host: this.o.host, volumeId, ms });
      await sleepOn(this.clock, UNPLUG_POLL_MS);
    }
  }

  /** The domain after a change to it; it vanishing meanwhile (destroyed, migrated) is DomainNotFound. */
  private async infoAfter(id: string, found: boolean | undefined): Promise<DomainInfo> {
    const after = found ? await this.info(id) : undefined;
    if (!after) throw HypervisorErrors.make('DomainNotFound', { id, host: this.o.host });
    return after;
  }

  /** libvirt creates the incoming domain itself (peer-to-peer): see incomingMigrations.ts. */
  prepareIncoming(spec: DomainSpec, migrationId: string, credential?: MigrationCredential): Promise<void> {
    return this.incoming.prepare(spec, migrationId, credential);
  }

  abortIncoming(id: string, migrationId: string): Promise<void> {
    return this.incoming.abort(id, migrationId);
  }

  migrateOut(id: string, target: MigrationTarget): Promise<MigrationStats> {
    if (target.credential && !this.tls && !this.tunnels) {
      return Promise.reject(HypervisorErrors.make('MigrationFailed', {
        migrationId: target.migrationId, id, detail: 'a TLS migration needs the migration tunnel or the libvirt migration TLS directory configured',
      }));
    }
    return this.outgoing.start(id, target);
  }

  /** Plain TCP without a credential; with one, the tunnel when configured, else libvirt's TLS directory. */
  private async routeFor(id: string, target: MigrationTarget): Promise<MigrationRouteHold> {
    const c = target.credential;
    if (!c) return { tls: false, release: () => Promise.resolve() };
    if (this.tunnels) return this.tunnels.open(id, target, c);
    if (!this.tls) throw HypervisorErrors.make('HypervisorInternalError', { detail: `no migration TLS route for ${destinationHost(target.destinationUri)}` });
    const release = await this.tls.holdSource(target.migrationId, c);
    return { tls: true, release };
  }

  abortMigration(id: string, migrationId: string): Promise<void> {
    return this.outgoing.abort(id, migrationId);
  }

  onEvent(listener: (e: HypervisorEvent) => void): () => void {
    return this.events.on(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.incoming.close();
    await this.tunnels?.close();
    const c = this.connection;
    this.connection = undefined;
    // Bounded: closing waits for calls in flight, and a hung libvirtd must not hold the NC's exit.
    const closing = c?.then((x) => x.close()).catch(() => undefined);
    if (closing) await Promise.race([closing, sleepOn(this.clock, CLOSE_WAIT_MS)]);
  }

  /** The driver's own account of what it did; started/stopped come from libvirt when it reports them. */
  private emit(e: HypervisorEvent): void {
    if (this.libvirtEvents && (e.kind === 'started' || e.kind === 'stopped')) return;
    this.publish(e);
  }

  private publish(e: HypervisorEvent): void {
    if (e.kind === 'stopped') this.incoming.forget(e.id);
    this.events.emit(e);
  }

  private onLifecycle(name: string, event: number, detail: number): void {
    const m = lifecycleMeaning(name, event, detail);
    if (m.kind === 'event') this.publish(m.event);
    else if (m.kind === 'arrived') this.incoming.checkNow(m.id).catch(() => undefined);
  }

  /** The shared connection, opened on first use and re-opened after the daemon went away. */
  private conn(): Promise<LibvirtSession> {
    if (this.closed) return Promise.reject(HypervisorErrors.make('HypervisorUnavailable', { uri: this.o.uri, detail: 'driver closed' }));
    this.connection ??= this.open(this.o.uri).then(async (c) => {
      if (this.wantsEvents) {
        // Without events the driver reports what it does itself and the NC re-reads with list().
        this.libvirtEvents = await c.onLifecycle((name, event, detail) => this.onLifecycle(name, event, detail)).then(() => true, () => false);
        // A guest's reboot (its own, an ACPI request honoured, or a reset): what the NC's reboot fallback waits for.
        if (c.onReboot) await c.onReboot((name) => this.publish({ kind: 'rebooted', id: name })).catch(() => undefined);
      }
      return c;
    }, (e: unknown) => {
      this.connection = undefined;
      throw translateLibvirtError(e, { uri: this.o.uri, host: this.o.host, operation: 'connect' });
    });
    return this.connection;
  }

  private async typeOfDomains(): Promise<LibvirtDomainType> {
    const wanted = this.o.domainType ?? 'auto';
    this.domainType ??= wanted === 'auto' ? domainTypeFor(await probeKvm()) : wanted;
    return this.domainType;
  }

  private fail(e: unknown, c: Omit<FailureContext, 'uri' | 'host'>): never {
    const err = translateLibvirtError(e, { uri: this.o.uri, host: this.o.host, ...c });
    if (err.code === 'HypervisorUnavailable') this.dropConnection();
    throw err;
  }

  private rethrow(e: unknown, c: Omit<FailureContext, 'uri' | 'host'>): never {
    if (isFerryError(e)) throw e;
    return this.fail(e, c);
  }

  private dropConnection(): void {
    const c = this.connection;
    this.connection = undefined;
    c?.then((x) => x.close()).catch(() => undefined);
  }
}

/** A running domain's disks appear in both its live XML and its definition: each target once. */
function dedupe(disks: readonly DomainDisk[]): DomainDisk[] {
  const seen = new Map<string, DomainDisk>();
  for (const d of disks) if (!seen.has(`${d.target} ${d.serial ?? ''}`)) seen.set(`${d.target} ${d.serial ?? ''}`, d);
  return [...seen.values()];
}

function sameResources(a: Resources, b: Resources): boolean {
  return a.cores === b.cores && a.memoryMiB === b.memoryMiB && a.diskGiB === b.diskGiB;
}

