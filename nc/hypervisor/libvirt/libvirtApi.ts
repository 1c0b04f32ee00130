/**
 * Promise-returning libvirt calls over the koffi bindings. Every call that talks to libvirtd runs
 * with koffi's `.async` on a worker thread, so a slow or hung daemon never blocks the event loop.
 * Calls on one connection are serialized: a failed call's error is then read exactly from that
 * connection (virConnGetLastError), not from a thread-local that belongs to a worker thread.
 * A migration gets a connection of its own, so it never holds up the others.
 */
import {
  decodeError, decodePointers, lastReportedError, libvirt, registerLifecycleCallback, registerRebootCallback, unregisterCallback, VIR, type AsyncFn, type Ptr, type VirErrorRecord, type VirNodeInfoRecord } from './ffi.js';

/** A libvirt call failed; `code` is virErrorNumber (0 when libvirt gave no error object). */
export class LibvirtCallError extends Error {
  readonly code: number;
  readonly op: string;
  constructor(op: string, record: VirErrorRecord | undefined) {
    super(record?.message ?? `${op} failed (libvirt gave no error)`);
    this.name = 'LibvirtCallError';
    this.code = record?.code ?? 0;
    this.op = op;
  }
}

/** A non-Error rejection from koffi is made an Error; translateLibvirtError (errorMap.ts) codes it at the driver's boundary. */
function callAsync(fn: AsyncFn, ...args: unknown[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    fn.async(...args, (err: unknown, res: unknown) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(res)));
  });
}

const VIR_ERR_NO_DOMAIN = 42;

export interface JobStatsRecord {
  /** virDomainJobType. */
  readonly type: number;
  /** Every unsigned-long-long field we asked for that libvirt filled in. */
  readonly fields: Readonly<Record<string, number>>;
}

/** The ULLONG job-statistics fields Ferry reads (libvirt-domain.h VIR_DOMAIN_JOB_*). */
export const JOB_FIELDS = [
  'time_elapsed', 'downtime', 'data_total', 'data_processed', 'data_remaining',
  'memory_total', 'memory_processed', 'memory_remaining', 'memory_iteration', 'setup_time',
] as const;

/**
 * What the driver needs of one libvirt connection: the narrow interface (STYLE habit 4) that
 * LibvirtConnection implements over koffi and unit tests fake. Domain methods take a handle from
 * withDomain and run inside its callback.
 */
export interface LibvirtSession {
  readonly uri: string;
  /** Looks a domain up by name and hands it to `fn`; undefined when the domain does not exist. */
  withDomain<T>(name: string, fn: (dom: Ptr) => Promise<T>): Promise<T | undefined>;
  listDomainNames(): Promise<string[]>;
  defineAndStart(xml: string): Promise<void>;
  /** virDomainDefineXML alone: the domain is defined, shut off. */
  define(xml: string): Promise<void>;
  nodeInfo(): Promise<VirNodeInfoRecord>;
  state(dom: Ptr): Promise<number>;
  stateAndReason(dom: Ptr): Promise<{ state: number; reason: number }>;
  /** The running guest's XML (its definition when shut off); VIR.XML.INACTIVE: always the definition. */
  xmlDesc(dom: Ptr, flags?: number): Promise<string>;
  /** virDomainAttachDeviceFlags with VIR.AFFECT flags. */
  attachDevice(dom: Ptr, xml: string, flags: number): Promise<void>;
  /** virDomainDetachDeviceFlags: a live unplug may still be pending in the guest when it returns. */
  detachDevice(dom: Ptr, xml: string, flags: number): Promise<void>;
  start(dom: Ptr): Promise<void>;
  destroy(dom: Ptr): Promise<void>;
  /** virDomainSuspend / virDomainResume: freeze and thaw the guest's vCPUs. */
  suspend(dom: Ptr): Promise<void>;
  resume(dom: Ptr): Promise<void>;
  /** virDomainShutdown: asks the guest to power off (ACPI); returns before it has. */
  shutdown(dom: Ptr): Promise<void>;
  /** virDomainReboot (default method): asks the guest to restart in place (ACPI); it may ignore it. */
  reboot(dom: Ptr): Promise<void>;
  /** virDomainReset: the guest restarts at once, unasked (a hard reboot). */
  reset(dom: Ptr): Promise<void>;
  /** Reboot events (VIR_DOMAIN_EVENT_ID_REBOOT: the guest reset in place, by itself or by reset()); absent from fakes without them. */
  onReboot?(listener: (name: string) => void): Promise<void>;
  undefine(dom: Ptr): Promise<void>;
  abortJob(dom: Ptr): Promise<void>;
  setMaxDowntime(dom: Ptr, ms: number): Promise<void>;
  jobStats(dom: Ptr, flags: number): Promise<JobStatsRecord>;
  /** Blocks until the migration ends; use a session opened for it alone. */
  migrateToUri3(dom: Ptr, destUri: string, params: Readonly<Record<string, string | number>>, flags: number): Promise<void>;
  /**
   * Delivers this connection's domain lifecycle events (virDomainEventType and detail) until it
   * closes; needs libvirt's event loop running before the connection was opened (eventLoop.ts).
   */
  onLifecycle(listener: (name: string, event: number, detail: number) => void): Promise<void>;
  close(): Promise<void>;
}

/** Opens a session to a libvirt URI; fails with LibvirtCallError. */
export type OpenLibvirt = (uri: string) => Promise<LibvirtSession>;

export class LibvirtConnection implements LibvirtSession {
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  private lifecycle: { readonly id: number; readonly handle: bigint } | undefined;
  private rebootEvents: { readonly id: number; readonly handle: bigint } | undefined;

  private constructor(readonly uri: string, private readonly ptr: Ptr) {}

  static async open(uri: string): Promise<LibvirtConnection> {
    const lv = libvirt();
    const ptr = (await callAsync(lv.virConnectOpen, uri)) as Ptr | null;
    if (!ptr) throw new LibvirtCallError('virConnectOpen', lastOpenError());
    return new LibvirtConnection(uri, ptr);
  }

  /** Runs `fn` after every earlier call on this connection has finished. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** One libvirt call; a failure result (`failed(res)`) becomes a LibvirtCallError read from this connection. */
  private async call(op: string, failed: (res: unknown) => boolean, ...args: unknown[]): Promise<unknown> {
    if (this.closed) throw new LibvirtCallError(op, { code: 0, domain: 0, message: 'connection closed' });
    const lv = libvirt();
    const fn = lv[op as keyof typeof lv];
    const res = await callAsync(fn, ...args);
    if (failed(res)) {
      const record = decodeError(lv.virConnGetLastError(this.ptr) as Ptr | null);
      lv.virConnResetLastError(this.ptr);
      throw new LibvirtCallError(op, record);
    }
    return res;
  }

  private int(op: string, ...args: unknown[]): Promise<number> {
    return this.call(op, (r) => (r as number) < 0, ...args) as Promise<number>;
  }

  private pointer(op: string, ...args: unknown[]): Promise<Ptr> {
    return this.call(op, (r) => !r, ...args) as Promise<Ptr>;
  }

  /** Looks a domain up by name and hands it to `fn`; undefined when the domain does not exist. */
  withDomain<T>(name: string, fn: (dom: Ptr) => Promise<T>): Promise<T | undefined> {
    return this.serial(async () => {
      let dom: Ptr;
      try {
        dom = await this.pointer('virDomainLookupByName', this.ptr, name);
      } catch (e) {
        if (e instanceof LibvirtCallError && e.code === VIR_ERR_NO_DOMAIN) return undefined;
        throw e;
      }
      try {
        return await fn(dom);
      } finally {
        libvirt().virDomainFree(dom);
      }
    });
  }

  listDomainNames(): Promise<string[]> {
    return this.serial(async () => {
      const out: [Ptr | null] = [null];
      const n = await this.int('virConnectListAllDomains', this.ptr, out, VIR.LIST_ALL);
      const lv = libvirt();
      const doms = out[0] ? decodePointers(out[0], n) : [];
      const names = doms.map((d) => lv.virDomainGetName(d) as string);
      for (const d of doms) lv.virDomainFree(d);
      if (out[0]) lv.free(out[0]);
      return names;
    });
  }

  defineAndStart(xml: string): Promise<void> {
    return this.serial(async () => {
      const dom = await this.pointer('virDomainDefineXML', this.ptr, xml);
      try {
        await this.int('virDomainCreate', dom);
      } finally {
        libvirt().virDomainFree(dom);
      }
    });
  }

  define(xml: string): Promise<void> {
    return this.serial(async () => {
      const dom = await this.pointer('virDomainDefineXML', this.ptr, xml);
      libvirt().virDomainFree(dom);
    });
  }

  nodeInfo(): Promise<VirNodeInfoRecord> {
    return this.serial(async () => {
      const info: Record<string, unknown> = {};
      await this.int('virNodeGetInfo', this.ptr, info);
      return info as unknown as VirNodeInfoRecord;
    });
  }

  // The domain calls below run inside withDomain (already serialized).
  async state(dom: Ptr): Promise<number> {
    return (await this.stateAndReason(dom)).state;
  }

  /** virDomainState and its reason (e.g. SHUTOFF because MIGRATED). */
  async stateAndReason(dom: Ptr): Promise<{ state: number; reason: number }> {
    const state: [number] = [0];
    const reason: [number] = [0];
    await this.int('virDomainGetState', dom, state, reason, 0);
    return { state: state[0], reason: reason[0] };
  }

  async xmlDesc(dom: Ptr, flags = 0): Promise<string> {
    return (await this.call('virDomainGetXMLDesc', (r) => r === null, dom, flags)) as string;
  }

  async attachDevice(dom: Ptr, xml: string, flags: number): Promise<void> {
    await this.int('virDomainAttachDeviceFlags', dom, xml, flags);
  }

  async detachDevice(dom: Ptr, xml: string, flags: number): Promise<void> {
    await this.int('virDomainDetachDeviceFlags', dom, xml, flags);
  }

  async start(dom: Ptr): Promise<void> {
    await this.int('virDomainCreate', dom);
  }

  async destroy(dom: Ptr): Promise<void> {
    await this.int('virDomainDestroy', dom);
  }

  async suspend(dom: Ptr): Promise<void> {
    await this.int('virDomainSuspend', dom);
  }

  async resume(dom: Ptr): Promise<void> {
    await this.int('virDomainResume', dom);
  }

  async shutdown(dom: Ptr): Promise<void> {
    await this.int('virDomainShutdown', dom);
  }

  async reboot(dom: Ptr): Promise<void> {
    await this.int('virDomainReboot', dom, 0);
  }

  async reset(dom: Ptr): Promise<void> {
    await this.int('virDomainReset', dom, 0);
  }

  async undefine(dom: Ptr): Promise<void> {
    await this.int('virDomainUndefineFlags', dom, VIR.UNDEFINE.NVRAM);
  }

  async abortJob(dom: Ptr): Promise<void> {
    await this.int('virDomainAbortJob', dom);
  }

  async setMaxDowntime(dom: Ptr, ms: number): Promise<void> {
    await this.int('virDomainMigrateSetMaxDowntime', dom, ms, 0);
  }

  async jobStats(dom: Ptr, flags: number): Promise<JobStatsRecord> {
    const type: [number] = [0];
    const params: [Ptr | null] = [null];
    const nparams: [number] = [0];
    await this.int('virDomainGetJobStats', dom, type, params, nparams, flags);
    const lv = libvirt();
    const fields: Record<string, number> = {};
    if (params[0]) {
      for (const name of JOB_FIELDS) {
        const v: [number | bigint] = [0];
        if ((lv.virTypedParamsGetULLong(params[0], nparams[0], name, v) as number) === 1) fields[name] = Number(v[0]);
      }
      lv.virTypedParamsFree(params[0], nparams[0]);
    }
    return { type: type[0], fields };
  }

  /** Blocks (on a worker thread) until the migration ends; use a connection opened for it alone. */
  async migrateToUri3(dom: Ptr, destUri: string, params: Readonly<Record<string, string | number>>, flags: number): Promise<void> {
    const lv = libvirt();
    const list: [Ptr | null] = [null];
    const count: [number] = [0];
    const max: [number] = [0];
    try {
      for (const [k, v] of Object.entries(params)) {
        const add = typeof v === 'number' ? lv.virTypedParamsAddULLong : lv.virTypedParamsAddString;
        if ((add(list, count, max, k, v) as number) < 0) {
          throw new LibvirtCallError('virTypedParamsAdd', decodeError(lv.virGetLastError() as Ptr | null));
        }
      }
      await this.int('virDomainMigrateToURI3', dom, destUri, list[0], count[0], flags);
    } finally {
      if (list[0]) lv.virTypedParamsFree(list[0], count[0]);
    }
  }

  async onLifecycle(listener: (name: string, event: number, detail: number) => void): Promise<void> {
    const lv = libvirt();
    const handle = registerLifecycleCallback((dom, event, detail) => {
      try {
        listener(lv.virDomainGetName(dom) as string, event, detail);
      } catch {
        // A listener's bug must not unwind into libvirt's event thread.
      }
    });
    try {
      const id = await this.serial(() => this.int('virConnectDomainEventRegisterAny', this.ptr, null, VIR.EVENT_ID_LIFECYCLE, handle, null, null));
      this.lifecycle = { id, handle };
    } catch (e) {
      unregisterCallback(handle);
      throw e;
    }
  }

  async onReboot(listener: (name: string) => void): Promise<void> {
    const lv = libvirt();
    const handle = registerRebootCallback((dom) => {
      try {
        listener(lv.virDomainGetName(dom) as string);
      } catch {
        // A listener's bug must not unwind into libvirt's event thread.
      }
    });
    try {
      const id = await this.serial(() => this.int('virConnectDomainEventRegisterReboot', this.ptr, null, VIR.EVENT_ID_REBOOT, handle, null, null));
      this.rebootEvents = { id, handle };
    } catch (e) {
      unregisterCallback(handle);
      throw e;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.serial(async () => {
      const lifecycle = this.lifecycle;
      this.lifecycle = undefined;
      if (lifecycle) await this.int('virConnectDomainEventDeregisterAny', this.ptr, lifecycle.id).catch(() => undefined);
      const reboots = this.rebootEvents;
      this.rebootEvents = undefined;
      if (reboots) await this.int('virConnectDomainEventDeregisterAny', this.ptr, reboots.id).catch(() => undefined);
      this.closed = true;
      await callAsync(libvirt().virConnectClose, this.ptr);
      if (lifecycle) unregisterCallback(lifecycle.handle);
      if (reboots) unregisterCallback(reboots.handle);
    });
  }
}

/** virConnectOpen has no connection to read the error from; the error handler kept the last one. */
function lastOpenError(): VirErrorRecord | undefined {
  return lastReportedError();
}
