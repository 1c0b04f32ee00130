/**
 * A hand-written fake of one libvirtd behind the driver's narrow LibvirtSession interface: domains
 * in a map, libvirt's error numbers for the cases the driver tells apart, and a migration the test
 * controls. No koffi, no daemon.
 */
import { VIR_ERR } from '../../../../nc/hypervisor/libvirt/errorMap.js';
import { VIR, type Ptr, type VirNodeInfoRecord } from '../../../../nc/hypervisor/libvirt/ffi.js';
import { LibvirtCallError, type JobStatsRecord, type LibvirtSession, type OpenLibvirt } from '../../../../nc/hypervisor/libvirt/libvirtApi.js';

export interface FakeDomain {
  xml: string;
  state: number;
  reason: number;
  jobType: number;
  completed?: JobStatsRecord;
  /** The persistent definition when it differs from `xml` (the running guest's). */
  config?: string;
}

export interface FakeMigration {
  readonly name: string;
  readonly destUri: string;
  readonly params: Readonly<Record<string, string | number>>;
  readonly flags: number;
}

const err = (op: string, code: number, message: string): LibvirtCallError => new LibvirtCallError(op, { code, domain: 10, message });

export class FakeLibvirtd {
  readonly domains = new Map<string, FakeDomain>();
  node: VirNodeInfoRecord = { memory: 4096 * 1024, cpus: 4 };
  reachable = true;
  opens = 0;
  /** Sessions opened and not closed yet. */
  openSessions = 0;
  /** Makes the next start fail (after the define), like a QEMU that will not start. */
  failStart: LibvirtCallError | undefined;
  readonly migrations: FakeMigration[] = [];
  readonly aborted: string[] = [];
  /** A guest that never acknowledges a disk unplug: live detaches are accepted and never complete. */
  ignoreUnplug = false;
  /** A guest with no ACPI daemon: a graceful shutdown is accepted and never powers it off. */
  ignoreAcpi = false;
  /** Domains rebooted (virDomainReboot), in order. */
  readonly reboots: string[] = [];
  /** Domains reset (virDomainReset), in order. */
  readonly resets: string[] = [];
  /** Reboot-event listeners (VIR_DOMAIN_EVENT_ID_REBOOT). */
  readonly rebootListeners: ((name: string) => void)[] = [];
  readonly lifecycleListeners: ((name: string, event: number, detail: number) => void)[] = [];
  /** What a migration does; by default it completes at once with a completed job record. */
  migrate: (name: string, d: FakeDomain) => Promise<void> = async (_name, d) => this.complete(d);
  /** Runs before each job-statistics read (e.g. a job that ends just then). */
  beforeJobStats: (d: FakeDomain) => void = () => undefined;

  readonly open: OpenLibvirt = async (uri) => {
    this.opens++;
    if (!this.reachable) throw err('virConnectOpen', VIR_ERR.SYSTEM_ERROR, `unable to connect to server at '${uri}': Connection refused`);
    this.openSessions++;
    return new FakeSession(this, uri);
  };

  /** What libvirtd's event loop would deliver. */
  fire(name: string, event: number, detail: number): void {
    for (const l of this.lifecycleListeners) l(name, event, detail);
  }

  /** A domain as libvirt leaves it on the source after it migrated away. */
  complete(d: FakeDomain): void {
    d.state = VIR.DOMAIN_STATE.SHUTOFF;
    d.reason = VIR.SHUTOFF_REASON.MIGRATED;
    d.jobType = VIR.JOB_TYPE.NONE;
    d.completed = { type: VIR.JOB_TYPE.COMPLETED, fields: { time_elapsed: 550, downtime: 17, data_processed: 623_000, memory_iteration: 2 } };
  }

  /** Adds a domain as the destination libvirtd would while receiving (paused) or after (running). */
  put(name: string, xml: string, state: number): void {
    this.domains.set(name, { xml, state, reason: 0, jobType: VIR.JOB_TYPE.NONE });
  }
}

let nextHandle = 1n;

class FakeSession implements LibvirtSession {
  private readonly handles = new Map<Ptr, string>();
  private closed = false;

  constructor(private readonly host: FakeLibvirtd, readonly uri: string) {}

  async withDomain<T>(name: string, fn: (dom: Ptr) => Promise<T>): Promise<T | undefined> {
    this.check('virDomainLookupByName');
    if (!this.host.domains.has(name)) return undefined;
    const h = nextHandle++;
    this.handles.set(h, name);
    try {
      return await fn(h);
    } finally {
      this.handles.delete(h);
    }
  }

  async listDomainNames(): Promise<string[]> {
    this.check('virConnectListAllDomains');
    return [...this.host.domains.keys()];
  }

  async define(xml: string): Promise<void> {
    this.check('virDomainDefineXML');
    const name = /<name>([^<]*)<\/name>/.exec(xml)?.[1] ?? '';
    if (this.host.domains.has(name)) throw err('virDomainDefineXML', VIR_ERR.OPERATION_FAILED, `domain '${name}' already exists`);
    this.host.domains.set(name, { xml, state: VIR.DOMAIN_STATE.SHUTOFF, reason: 0, jobType: VIR.JOB_TYPE.NONE });
  }

  async defineAndStart(xml: string): Promise<void> {
    this.check('virDomainDefineXML');
    const name = /<name>([^<]*)<\/name>/.exec(xml)?.[1] ?? '';
    if (this.host.domains.has(name)) throw err('virDomainDefineXML', VIR_ERR.OPERATION_FAILED, `domain '${name}' already exists`);
    const d: FakeDomain = { xml, state: VIR.DOMAIN_STATE.SHUTOFF, reason: 0, jobType: VIR.JOB_TYPE.NONE };
    this.host.domains.set(name, d);
    const failure = this.host.failStart;
    this.host.failStart = undefined;
    if (failure) throw failure;
    d.state = VIR.DOMAIN_STATE.RUNNING;
  }

  async nodeInfo(): Promise<VirNodeInfoRecord> {
    this.check('virNodeGetInfo');
    return this.host.node;
  }

  async state(dom: Ptr): Promise<number> {
    return this.dom(dom).state;
  }

  async stateAndReason(dom: Ptr): Promise<{ state: number; reason: number }> {
    const d = this.dom(dom);
    return { state: d.state, reason: d.reason };
  }

  async xmlDesc(dom: Ptr, flags = 0): Promise<string> {
    const d = this.dom(dom);
    const live = d.state !== VIR.DOMAIN_STATE.SHUTOFF && (flags & VIR.XML.INACTIVE) === 0;
    return live ? d.xml : d.config ?? d.xml;
  }

  /** Adds the device XML before </devices> of the live XML and/or the definition, as the flags say. */
  async attachDevice(dom: Ptr, xml: string, flags: number): Promise<void> {
    this.check('virDomainAttachDeviceFlags');
    this.editDevices(dom, flags, (devices) => devices.replace('</devices>', `${xml}\n</devices>`));
  }

  /** Removes the <disk> with the device's target; a guest that ignores unplugs keeps it live. */
  async detachDevice(dom: Ptr, xml: string, flags: number): Promise<void> {
    this.check('virDomainDetachDeviceFlags');
    const target = /<target dev='(\w+)'/.exec(xml)?.[1] ?? '?';
    const drop = (x: string): string => x.replace(new RegExp(`<disk\\b[^>]*>(?:(?!</disk>)[\\s\\S])*<target dev='${target}'[\\s\\S]*?</disk>\\n?`), '');
    const live = this.host.ignoreUnplug ? flags & ~VIR.AFFECT.LIVE : flags;
    this.editDevices(dom, live, drop);
  }

  private editDevices(dom: Ptr, flags: number, edit: (xml: string) => string): void {
    const d = this.dom(dom);
    const config = d.config ?? d.xml;
    const running = d.state !== VIR.DOMAIN_STATE.SHUTOFF;
    if ((flags & VIR.AFFECT.LIVE) !== 0 && !running) throw err('virDomainAttachDeviceFlags', VIR_ERR.OPERATION_INVALID, 'domain is not running');
    if ((flags & VIR.AFFECT.LIVE) !== 0) d.xml = edit(d.xml);
    if ((flags & VIR.AFFECT.CONFIG) !== 0) d.config = edit(config);
  }

  async start(dom: Ptr): Promise<void> {
    const d = this.dom(dom);
    d.xml = d.config ?? d.xml;
    d.state = VIR.DOMAIN_STATE.RUNNING;
  }

  async destroy(dom: Ptr): Promise<void> {
    const d = this.dom(dom);
    if (d.state === VIR.DOMAIN_STATE.SHUTOFF) throw err('virDomainDestroy', VIR_ERR.OPERATION_INVALID, 'domain is not running');
    d.state = VIR.DOMAIN_STATE.SHUTOFF;
  }

  async suspend(dom: Ptr): Promise<void> {
    const d = this.dom(dom);
    if (d.state !== VIR.DOMAIN_STATE.RUNNING) throw err('virDomainSuspend', VIR_ERR.OPERATION_INVALID, 'domain is not running');
    d.state = VIR.DOMAIN_STATE.PAUSED;
    d.reason = VIR.PAUSED_REASON.USER;
  }

  async resume(dom: Ptr): Promise<void> {
    const d = this.dom(dom);
    if (d.state !== VIR.DOMAIN_STATE.PAUSED) throw err('virDomainResume', VIR_ERR.OPERATION_INVALID, 'domain is not paused');
    d.state = VIR.DOMAIN_STATE.RUNNING;
    d.reason = 0;
  }

  async shutdown(dom: Ptr): Promise<void> {
    const d = this.dom(dom);
    if (d.state !== VIR.DOMAIN_STATE.RUNNING) throw err('virDomainShutdown', VIR_ERR.OPERATION_INVALID, 'domain is not running');
    if (this.host.ignoreAcpi) return;
    d.state = VIR.DOMAIN_STATE.SHUTOFF;
    d.reason = VIR.SHUTOFF_REASON.SHUTDOWN;
  }

  async reboot(dom: Ptr): Promise<void> {
    const d = this.dom(dom);
    if (d.state !== VIR.DOMAIN_STATE.RUNNING) throw err('virDomainReboot', VIR_ERR.OPERATION_INVALID, 'domain is not running');
    const name = this.handles.get(dom) ?? '';
    this.host.reboots.push(name);
    // A guest without an ACPI daemon ignores the request: no reset, no event.
    if (!this.host.ignoreAcpi) for (const l of this.host.rebootListeners) l(name);
  }

  async reset(dom: Ptr): Promise<void> {
    const d = this.dom(dom);
    if (d.state !== VIR.DOMAIN_STATE.RUNNING) throw err('virDomainReset', VIR_ERR.OPERATION_INVALID, 'domain is not running');
    const name = this.handles.get(dom) ?? '';
    this.host.resets.push(name);
    for (const l of this.host.rebootListeners) l(name);
  }

  async onReboot(listener: (name: string) => void): Promise<void> {
    this.check('virConnectDomainEventRegisterAny');
    this.host.rebootListeners.push(listener);
  }

  async undefine(dom: Ptr): Promise<void> {
    this.dom(dom);
    this.host.domains.delete(this.handles.get(dom) ?? '');
  }

  async abortJob(dom: Ptr): Promise<void> {
    const d = this.dom(dom);
    if (d.jobType === VIR.JOB_TYPE.NONE) throw err('virDomainAbortJob', VIR_ERR.OPERATION_INVALID, 'no job is active on the domain');
    this.host.aborted.push(this.handles.get(dom) ?? '');
  }

  async setMaxDowntime(dom: Ptr): Promise<void> {
    this.dom(dom);
  }

  async jobStats(dom: Ptr, flags: number): Promise<JobStatsRecord> {
    const d = this.dom(dom);
    this.host.beforeJobStats(d);
    if (flags & VIR.JOB_STATS.COMPLETED) return d.completed ?? { type: VIR.JOB_TYPE.NONE, fields: {} };
    if (d.state === VIR.DOMAIN_STATE.SHUTOFF) throw err('virDomainGetJobStats', VIR_ERR.OPERATION_INVALID, 'domain is not running');
    return { type: d.jobType, fields: d.jobType === VIR.JOB_TYPE.NONE ? {} : { data_total: 1000, data_processed: 400, data_remaining: 600, memory_iteration: 1 } };
  }

  async migrateToUri3(dom: Ptr, destUri: string, params: Readonly<Record<string, string | number>>, flags: number): Promise<void> {
    const d = this.dom(dom);
    const name = this.handles.get(dom) ?? '';
    this.host.migrations.push({ name, destUri, params, flags });
    d.jobType = VIR.JOB_TYPE.UNBOUNDED;
    try {
      await this.host.migrate(name, d);
    } finally {
      if (d.jobType !== VIR.JOB_TYPE.NONE) d.jobType = VIR.JOB_TYPE.NONE;
    }
  }

  async onLifecycle(listener: (name: string, event: number, detail: number) => void): Promise<void> {
    this.check('virConnectDomainEventRegisterAny');
    this.host.lifecycleListeners.push(listener);
  }

  async close(): Promise<void> {
    if (!this.closed) this.host.openSessions--;
    this.closed = true;
  }

  private check(op: string): void {
    if (this.closed) throw err(op, VIR_ERR.INVALID_CONN, 'connection closed');
    if (!this.host.reachable) throw err(op, VIR_ERR.RPC, 'End of file while reading data: Input/output error');
  }

  private dom(h: Ptr): FakeDomain {
    const name = this.handles.get(h);
    const d = name === undefined ? undefined : this.host.domains.get(name);
    if (!d) throw err('virDomain', VIR_ERR.NO_DOMAIN, 'Domain not found');
    return d;
  }
}
