/**
 * libvirt failures → Ferry's hypervisor error codes, at the adapter boundary (STYLE habit 6).
 * Pure: a table from virErrorNumber to a code, refined by what the caller was doing.
 */
import { isFerryError, type FerryError } from '../../../shared/errors/registry.js';
import { HypervisorErrors } from '../errors.js';
import { LibvirtCallError } from './libvirtApi.js';

/** virErrorNumber values Ferry tells apart (virterror.h, libvirt 9.0). */
export const VIR_ERR = {
  INTERNAL_ERROR: 1,
  NO_SUPPORT: 3,
  NO_CONNECT: 5,
  INVALID_CONN: 6,
  INVALID_ARG: 8,
  OPERATION_FAILED: 9,
  XML_ERROR: 27,
  DOM_EXIST: 28,
  SYSTEM_ERROR: 38,
  RPC: 39,
  NO_DOMAIN: 42,
  AUTH_FAILED: 45,
  OPERATION_INVALID: 55,
  CONFIG_UNSUPPORTED: 67,
  OPERATION_TIMEOUT: 68,
  OPERATION_ABORTED: 78,
  OPERATION_UNSUPPORTED: 84,
  AUTH_UNAVAILABLE: 94,
} as const;

/** The daemon could not be reached or went away: retrying later can help. */
const UNREACHABLE = new Set<number>([VIR_ERR.NO_CONNECT, VIR_ERR.INVALID_CONN, VIR_ERR.SYSTEM_ERROR, VIR_ERR.RPC, VIR_ERR.OPERATION_TIMEOUT, VIR_ERR.AUTH_FAILED, VIR_ERR.AUTH_UNAVAILABLE]);
const BAD_REQUEST = new Set<number>([VIR_ERR.INVALID_ARG, VIR_ERR.XML_ERROR, VIR_ERR.CONFIG_UNSUPPORTED]);

export interface FailureContext {
  /** The libvirt URI the driver talks to. */
  readonly uri: string;
  /** The host name HostInfo reports. */
  readonly host: string;
  /** What the driver was doing, in words ("start", "migrate"). */
  readonly operation: string;
  readonly id?: string;
  /** Set while migrating out: most failures then mean "this migration failed", not "host down". */
  readonly migrationId?: string;
  /** The domain's state when known (for DomainStateConflict). */
  readonly state?: string;
}

export function translateLibvirtError(e: unknown, c: FailureContext): FerryError {
  if (isFerryError(e)) return e;
  const id = c.id ?? '?';
  if (!(e instanceof LibvirtCallError)) {
    const detail = e instanceof Error ? e.message : String(e);
    return HypervisorErrors.make('HypervisorInternalError', { detail: `${c.operation}: ${detail}` });
  }
  const detail = `${e.message} (${e.op}, libvirt error ${e.code})`;
  if (e.code === VIR_ERR.NO_DOMAIN) return HypervisorErrors.make('DomainNotFound', { id, host: c.host });
  if (e.code === VIR_ERR.OPERATION_INVALID) {
    return HypervisorErrors.make('DomainStateConflict', { id, host: c.host, state: c.state ?? `in a state libvirt refuses (${e.message})`, operation: c.operation });
  }
  if (c.migrationId !== undefined) {
    if (e.code === VIR_ERR.OPERATION_ABORTED) return HypervisorErrors.make('MigrationAborted', { migrationId: c.migrationId, id });
    return HypervisorErrors.make('MigrationFailed', { migrationId: c.migrationId, id, detail });
  }
  if (e.code === VIR_ERR.DOM_EXIST) return HypervisorErrors.make('DomainExists', { id, host: c.host, detail });
  if (UNREACHABLE.has(e.code)) return HypervisorErrors.make('HypervisorUnavailable', { uri: c.uri, detail });
  if (BAD_REQUEST.has(e.code)) return HypervisorErrors.make('HypervisorBadRequest', { detail });
  return HypervisorErrors.make('HypervisorInternalError', { detail });
}
