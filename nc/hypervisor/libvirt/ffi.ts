/**
 * Raw koffi bindings into libvirt.so.0 (why koffi: docs/libvirt.md). Only declarations and the
 * C constants live here; libvirtApi.ts wraps them into promises that run off the event loop.
 * Handles (virConnectPtr, virDomainPtr) are koffi 3 pointers: bigint, or null for NULL.
 */
import { createRequire } from 'node:module';
import type koffiModule from 'koffi';

export type Ptr = bigint;

/** Lazily loaded, so importing the driver on a machine without libvirt does not throw. */
let bound: LibvirtFunctions | undefined;
let lastReported: VirErrorRecord | undefined;

/** The last error libvirt reported on any thread (only for calls that have no connection). */
export function lastReportedError(): VirErrorRecord | undefined {
  return lastReported;
}

export interface AsyncFn {
  (...args: unknown[]): unknown;
  async: (...args: unknown[]) => void;
}

export interface LibvirtFunctions {
  readonly virConnectOpen: AsyncFn;
  readonly virConnectClose: AsyncFn;
  readonly virConnGetLastError: AsyncFn;
  readonly virConnResetLastError: AsyncFn;
  readonly virGetLastError: AsyncFn;
  readonly virResetLastError: AsyncFn;
  readonly virSetErrorFunc: AsyncFn;
  readonly virConnectListAllDomains: AsyncFn;
  readonly virDomainGetName: AsyncFn;
  readonly virDomainLookupByName: AsyncFn;
  readonly virDomainDefineXML: AsyncFn;
  readonly virDomainCreate: AsyncFn;
  readonly virDomainDestroy: AsyncFn;
  readonly virDomainSuspend: AsyncFn;
  readonly virDomainResume: AsyncFn;
  readonly virDomainShutdown: AsyncFn;
  readonly virDomainReboot: AsyncFn;
  readonly virDomainReset: AsyncFn;
  readonly virDomainUndefineFlags: AsyncFn;
  readonly virDomainGetState: AsyncFn;
  readonly virDomainGetXMLDesc: AsyncFn;
  readonly virDomainAttachDeviceFlags: AsyncFn;
  readonly virDomainDetachDeviceFlags: AsyncFn;
  readonly virDomainMigrateToURI3: AsyncFn;
  readonly virDomainMigrateSetMaxDowntime: AsyncFn;
  readonly virDomainAbortJob: AsyncFn;
  readonly virDomainGetJobStats: AsyncFn;
  readonly virDomainFree: AsyncFn;
  readonly virNodeGetInfo: AsyncFn;
  readonly virTypedParamsAddString: AsyncFn;
  readonly virTypedParamsAddULLong: AsyncFn;
  readonly virTypedParamsGetULLong: AsyncFn;
  readonly virTypedParamsFree: AsyncFn;
  readonly virEventRegisterDefaultImpl: AsyncFn;
  readonly virEventRunDefaultImpl: AsyncFn;
  readonly virConnectDomainEventRegisterAny: AsyncFn;
  /** The same C function, its callback typed as the reboot event's (a generic callback: no event, no detail). */
  readonly virConnectDomainEventRegisterReboot: AsyncFn;
  readonly virConnectDomainEventDeregisterAny: AsyncFn;
  readonly free: AsyncFn;
}

type Koffi = typeof koffiModule;

interface KoffiTypes {
  readonly koffi: Koffi;
  readonly virError: ReturnType<Koffi['struct']>;
  readonly errorFunc: ReturnType<Koffi['proto']>;
  readonly lifecycleCallback: ReturnType<Koffi['proto']>;
  readonly rebootCallback: ReturnType<Koffi['proto']>;
}

let types: KoffiTypes | undefined;

/**
 * koffi and the C types, loaded on first use: an NC on the simulated hypervisor never loads the
 * native FFI module (nor needs libvirt installed).
 */
function ffi(): KoffiTypes {
  if (types) return types;
  const koffi = createRequire(import.meta.url)('koffi') as Koffi;
  const virError = koffi.struct('ferry_virError', {
    code: 'int',
    domain: 'int',
    message: 'const char *',
    level: 'int',
    conn: 'void *',
    dom: 'void *',
    str1: 'const char *',
    str2: 'const char *',
    str3: 'const char *',
    int1: 'int',
    int2: 'int',
    net: 'void *',
  });
  koffi.struct('ferry_virNodeInfo', {
    model: koffi.array('char', 32, 'String'),
    memory: 'unsigned long',
    cpus: 'unsigned int',
    mhz: 'unsigned int',
    nodes: 'unsigned int',
    sockets: 'unsigned int',
    cores: 'unsigned int',
    threads: 'unsigned int',
  });
  const errorFunc = koffi.proto('void ferry_virErrorFunc(void *userData, void *error)');
  // virConnectDomainEventCallback (VIR_DOMAIN_EVENT_ID_LIFECYCLE).
  const lifecycleCallback = koffi.proto('void ferry_virLifecycleCb(void *conn, void *dom, int event, int detail, void *opaque)');
  // virConnectDomainEventGenericCallback (VIR_DOMAIN_EVENT_ID_REBOOT): the guest reset in place.
  const rebootCallback = koffi.proto('void ferry_virRebootCb(void *conn, void *dom, void *opaque)');
  types = { koffi, virError, errorFunc, lifecycleCallback, rebootCallback };
  return types;
}

export interface VirErrorRecord {
  readonly code: number;
  readonly domain: number;
  readonly message: string | null;
}

export interface VirNodeInfoRecord {
  readonly memory: number | bigint;
  readonly cpus: number;
}

export function libvirt(): LibvirtFunctions {
  if (bound) return bound;
  const { koffi, errorFunc, rebootCallback } = ffi();
  const lib = koffi.load('libvirt.so.0');
  const libc = koffi.load('libc.so.6');
  const f = (proto: string): AsyncFn => lib.func(proto) as unknown as AsyncFn;
  bound = {
    virConnectOpen: f('void *virConnectOpen(const char *name)'),
    virConnectClose: f('int virConnectClose(void *conn)'),
    virConnGetLastError: f('void *virConnGetLastError(void *conn)'),
    virConnResetLastError: f('void virConnResetLastError(void *conn)'),
    virGetLastError: f('void *virGetLastError()'),
    virResetLastError: f('void virResetLastError()'),
    virSetErrorFunc: f('void virSetErrorFunc(void *userData, ferry_virErrorFunc *handler)'),
    virConnectListAllDomains: f('int virConnectListAllDomains(void *conn, _Out_ void **domains, unsigned int flags)'),
    virDomainGetName: f('const char *virDomainGetName(void *dom)'),
    virDomainLookupByName: f('void *virDomainLookupByName(void *conn, const char *name)'),
    virDomainDefineXML: f('void *virDomainDefineXML(void *conn, const char *xml)'),
    virDomainCreate: f('int virDomainCreate(void *dom)'),
    virDomainDestroy: f('int virDomainDestroy(void *dom)'),
    virDomainSuspend: f('int virDomainSuspend(void *dom)'),
    virDomainResume: f('int virDomainResume(void *dom)'),
    virDomainShutdown: f('int virDomainShutdown(void *dom)'),
    virDomainReboot: f('int virDomainReboot(void *dom, unsigned int flags)'),
    virDomainReset: f('int virDomainReset(void *dom, unsigned int flags)'),
    virDomainUndefineFlags: f('int virDomainUndefineFlags(void *dom, unsigned int flags)'),
    virDomainGetState: f('int virDomainGetState(void *dom, _Out_ int *state, _Out_ int *reason, unsigned int flags)'),
    virDomainGetXMLDesc: f('char *! virDomainGetXMLDesc(void *dom, unsigned int flags)'),
    virDomainAttachDeviceFlags: f('int virDomainAttachDeviceFlags(void *dom, const char *xml, unsigned int flags)'),
    virDomainDetachDeviceFlags: f('int virDomainDetachDeviceFlags(void *dom, const char *xml, unsigned int flags)'),
    virDomainMigrateToURI3: f('int virDomainMigrateToURI3(void *dom, const char *dconnuri, void *params, unsigned int nparams, unsigned int flags)'),
    virDomainMigrateSetMaxDowntime: f('int virDomainMigrateSetMaxDowntime(void *dom, unsigned long long downtime, unsigned int flags)'),
    virDomainAbortJob: f('int virDomainAbortJob(void *dom)'),
    virDomainGetJobStats: f('int virDomainGetJobStats(void *dom, _Out_ int *type, _Out_ void **params, _Out_ int *nparams, unsigned int flags)'),
    virDomainFree: f('int virDomainFree(void *dom)'),
    virNodeGetInfo: f('int virNodeGetInfo(void *conn, _Out_ ferry_virNodeInfo *info)'),
    virTypedParamsAddString: f('int virTypedParamsAddString(_Inout_ void **params, _Inout_ int *nparams, _Inout_ int *maxparams, const char *name, const char *value)'),
    virTypedParamsAddULLong: f('int virTypedParamsAddULLong(_Inout_ void **params, _Inout_ int *nparams, _Inout_ int *maxparams, const char *name, unsigned long long value)'),
    virTypedParamsGetULLong: f('int virTypedParamsGetULLong(void *params, int nparams, const char *name, _Out_ unsigned long long *value)'),
    virTypedParamsFree: f('void virTypedParamsFree(void *params, int nparams)'),
    virEventRegisterDefaultImpl: f('int virEventRegisterDefaultImpl()'),
    virEventRunDefaultImpl: f('int virEventRunDefaultImpl()'),
    virConnectDomainEventRegisterAny: f('int virConnectDomainEventRegisterAny(void *conn, void *dom, int eventID, ferry_virLifecycleCb *cb, void *opaque, void *freecb)'),
    virConnectDomainEventRegisterReboot: lib.func('virConnectDomainEventRegisterAny', 'int', ['void *', 'void *', 'int', koffi.pointer(rebootCallback), 'void *', 'void *']) as unknown as AsyncFn,
    virConnectDomainEventDeregisterAny: f('int virConnectDomainEventDeregisterAny(void *conn, int callbackID)'),
    free: libc.func('void free(void *ptr)') as unknown as AsyncFn,
  };
  // Without a handler libvirt prints every error to stderr. Ours only keeps the last one, for
  // virConnectOpen (no connection to read it from); koffi runs it on the main thread while the
  // failing worker thread waits, so the error pointer is still valid here.
  const handler = koffi.register((_user: unknown, err: Ptr | null) => {
    lastReported = decodeError(err);
  }, koffi.pointer(errorFunc));
  bound.virSetErrorFunc(null, handler);
  return bound;
}

/** Makes `fn` callable by libvirt as a lifecycle callback; koffi runs it on the main thread. */
export function registerLifecycleCallback(fn: (dom: Ptr, event: number, detail: number) => void): bigint {
  const { koffi, lifecycleCallback } = ffi();
  return koffi.register((_conn: Ptr, dom: Ptr, event: number, detail: number) => fn(dom, event, detail), koffi.pointer(lifecycleCallback));
}

/** Makes `fn` callable by libvirt as a reboot-event callback; koffi runs it on the main thread. */
export function registerRebootCallback(fn: (dom: Ptr) => void): bigint {
  const { koffi, rebootCallback } = ffi();
  return koffi.register((_conn: Ptr, dom: Ptr) => fn(dom), koffi.pointer(rebootCallback));
}

export function unregisterCallback(handle: bigint): void {
  ffi().koffi.unregister(handle);
}

export function decodeError(ptr: Ptr | null): VirErrorRecord | undefined {
  if (!ptr) return undefined;
  const { koffi, virError } = ffi();
  const e = koffi.decode(ptr, virError) as VirErrorRecord;
  return { code: e.code, domain: e.domain, message: e.message };
}

export function decodePointers(ptr: Ptr, count: number): Ptr[] {
  return count === 0 ? [] : (ffi().koffi.decode(ptr, 'void *', count) as Ptr[]);
}

/** C constants from libvirt-domain.h / virterror.h (libvirt 9.0). */
export const VIR = {
  DOMAIN_STATE: { NOSTATE: 0, RUNNING: 1, BLOCKED: 2, PAUSED: 3, SHUTDOWN: 4, SHUTOFF: 5, CRASHED: 6, PMSUSPENDED: 7 },
  /** virDomainShutoffReason: SHUTDOWN is a guest's own power-off (virDomainShutdown), MIGRATED a completed migration's source. */
  SHUTOFF_REASON: { SHUTDOWN: 1, MIGRATED: 4 },
  /** virDomainPausedReason: USER is virDomainSuspend's (and a migration's VIR_MIGRATE_PAUSED arrival). */
  PAUSED_REASON: { USER: 1 },
  LIST_ALL: 0,
  MIGRATE: { LIVE: 1 << 0, PEER2PEER: 1 << 1, PERSIST_DEST: 1 << 3, UNDEFINE_SOURCE: 1 << 4, UNSAFE: 1 << 9, TLS: 1 << 16 },
  MIGRATE_PARAM_URI: 'migrate_uri',
  MIGRATE_PARAM_BANDWIDTH: 'bandwidth',
  MIGRATE_PARAM_LISTEN_ADDRESS: 'listen_address',
  MIGRATE_PARAM_TLS_DESTINATION: 'tls.destination',
  JOB_STATS: { COMPLETED: 1 << 0, KEEP_COMPLETED: 1 << 1 },
  JOB_TYPE: { NONE: 0, BOUNDED: 1, UNBOUNDED: 2, COMPLETED: 3, FAILED: 4, CANCELLED: 5 },
  UNDEFINE: { NVRAM: 1 << 2 },
  /** virDomainModificationImpact: the running guest, its persistent definition, or both. */
  AFFECT: { LIVE: 1 << 0, CONFIG: 1 << 1 },
  /** virDomainXMLFlags: the persistent definition rather than the running guest's. */
  XML: { INACTIVE: 1 << 1 },
  EVENT_ID_LIFECYCLE: 0,
  EVENT_ID_REBOOT: 1,
  EVENT: { STARTED: 2, SUSPENDED: 3, RESUMED: 4, STOPPED: 5, SHUTDOWN: 6, CRASHED: 8 },
  EVENT_STARTED: { MIGRATED: 1 },
  EVENT_RESUMED: { MIGRATED: 1 },
  EVENT_STOPPED: { SHUTDOWN: 0, DESTROYED: 1, CRASHED: 2, MIGRATED: 3, SAVED: 4, FAILED: 5 },
} as const;
