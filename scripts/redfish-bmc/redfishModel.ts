/**
 * The fencing lab's Redfish BMC, pure: one request in, one reply out (status, body, and the power
 * effect the server then applies to the lab host). It serves what ClusterLabs' fence_redfish uses
 * (docs/OPERATIONS.md "Redfish lab"): the service root, the Systems collection, one ComputerSystem
 * with PowerState and its #ComputerSystem.Reset action, HTTP basic auth on every resource but the
 * service root (as the Redfish specification allows). fence_redfish uses no sessions, so there is
 * no SessionService. Faults that need a socket (hang, closed) live in the server.
 */
import { timingSafeEqual } from 'node:crypto';

export type RedfishPower = 'On' | 'Off';

/**
 * none: a working BMC. wrong-credentials: every credential is refused (401), as after a password
 * change on the BMC. stuck: a reset is acknowledged (204) but the power never changes. hang: requests
 * are accepted and never answered. closed: nothing listens (connection refused).
 */
export const BMC_FAULTS = ['none', 'wrong-credentials', 'stuck', 'hang', 'closed'] as const;
export type BmcFault = (typeof BMC_FAULTS)[number];

export const isBmcFault = (s: string): s is BmcFault => (BMC_FAULTS as readonly string[]).includes(s);

/** fence_redfish sends On, ForceOff, ForceRestart (method=cycle) and Nmi (diag); the rest are common BMC values. */
export const RESET_TYPES = ['On', 'ForceOff', 'GracefulShutdown', 'ForceRestart', 'GracefulRestart', 'PowerCycle', 'Nmi'] as const;
export type ResetType = (typeof RESET_TYPES)[number];

/** What a reset does to the lab host; `restart` from Off powers it on. */
export type PowerEffect = 'on' | 'off' | 'restart';

const EFFECT_OF: Readonly<Record<ResetType, PowerEffect | null>> = {
  On: 'on',
  ForceOff: 'off',
  GracefulShutdown: 'off',
  ForceRestart: 'restart',
  GracefulRestart: 'restart',
  PowerCycle: 'restart',
  // A diagnostic interrupt: the lab host has no kernel to dump, so nothing happens.
  Nmi: null,
};

export interface BmcView {
  readonly power: RedfishPower;
  readonly fault: BmcFault;
  readonly user: string;
  readonly password: string;
}

export interface RedfishRequest {
  readonly method: string;
  /** The request target as sent (path and maybe a query). */
  readonly url: string;
  readonly authorization?: string;
  readonly contentType?: string;
  readonly body: string;
}

export interface RedfishReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** JSON; absent for 204. */
  readonly body?: unknown;
  readonly effect?: PowerEffect;
}

export const ROOT = '/redfish/v1';
export const SYSTEMS = `${ROOT}/Systems`;
export const SYSTEM = `${SYSTEMS}/1`;
export const RESET_TARGET = `${SYSTEM}/Actions/ComputerSystem.Reset`;
/** The largest request body the lab reads; a Reset body is a few dozen bytes. */
export const MAX_BODY = 16 * 1024;

const REALM = 'Basic realm="Ferry lab BMC"';

/** A Redfish error body (DSP0266 "Error responses"): a Base registry message id and text. */
function error(status: number, messageId: string, message: string, headers: Record<string, string> = {}): RedfishReply {
  return {
    status, headers,
    body: { error: { code: `Base.1.8.${messageId}`, message, '@Message.ExtendedInfo': [{ MessageId: `Base.1.8.${messageId}`, Message: message }] } },
  };
}

const ok = (body: unknown): RedfishReply => ({ status: 200, headers: {}, body });

function serviceRoot(): unknown {
  return {
    '@odata.id': `${ROOT}/`, '@odata.type': '#ServiceRoot.v1_5_0.ServiceRoot', Id: 'RootService', Name: 'Ferry lab Redfish BMC',
    RedfishVersion: '1.8.0', UUID: '6d1a2b3c-0000-4000-8000-0000000f3e44', Systems: { '@odata.id': SYSTEMS },
  };
}

function systemsCollection(): unknown {
  return {
    '@odata.id': SYSTEMS, '@odata.type': '#ComputerSystemCollection.ComputerSystemCollection', Name: 'Computer System Collection',
    Members: [{ '@odata.id': SYSTEM }], 'Members@odata.count': 1,
  };
}

function system(power: RedfishPower): unknown {
  return {
    '@odata.id': SYSTEM, '@odata.type': '#ComputerSystem.v1_10_0.ComputerSystem', Id: '1', Name: 'Ferry lab host', SystemType: 'Physical',
    PowerState: power,
    Actions: { '#ComputerSystem.Reset': { target: RESET_TARGET, 'ResetType@Redfish.AllowableValues': [...RESET_TYPES] } },
  };
}

/** Constant-time comparison of the basic credentials; anything malformed is simply not them. */
export function credentialsMatch(authorization: string | undefined, user: string, password: string): boolean {
  const m = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(authorization?.trim() ?? '');
  if (!m?.[1]) return false;
  const given = Buffer.from(m[1], 'base64');
  const expected = Buffer.from(`${user}:${password}`, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** `/redfish/v1/` and `/redfish/v1` are one resource; a query string is ignored. */
export function normalizePath(url: string): string {
  const path = url.split('?', 1)[0] ?? '';
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

const ALLOWED: Readonly<Record<string, string>> = {
  '/redfish': 'GET', [ROOT]: 'GET', [SYSTEMS]: 'GET', [SYSTEM]: 'GET', [RESET_TARGET]: 'POST',
};

function resetReply(req: RedfishRequest, view: BmcView): RedfishReply {
  if (!/^application\/json\b/i.test(req.contentType ?? '')) return error(415, 'UnsupportedMediaType', 'The request body must be application/json');
  let parsed: unknown;
  try {
    parsed = JSON.parse(req.body);
  } catch {
    return error(400, 'MalformedJSON', 'The request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return error(400, 'MalformedJSON', 'The request body must be a JSON object');
  const resetType = (parsed as Record<string, unknown>).ResetType;
  if (resetType === undefined) return error(400, 'ActionParameterMissing', 'The action ComputerSystem.Reset requires the parameter ResetType');
  if (typeof resetType !== 'string' || !(RESET_TYPES as readonly string[]).includes(resetType)) {
    return error(400, 'ActionParameterValueNotInList', `ResetType ${JSON.stringify(resetType)} is not one of ${RESET_TYPES.join(', ')}`);
  }
  const effect = view.fault === 'stuck' ? null : EFFECT_OF[resetType as ResetType];
  return effect === null ? { status: 204, headers: {} } : { status: 204, headers: {}, effect };
}

/** The reply to one request. The server has already applied the hang and closed faults. */
export function handleRedfish(req: RedfishRequest, view: BmcView): RedfishReply {
  const path = normalizePath(req.url);
  const allowed = ALLOWED[path];
  if (allowed === undefined) return error(404, 'ResourceMissingAtURI', `The resource at ${path.slice(0, 200)} was not found`);
  if (req.method !== allowed) return error(405, 'OperationNotAllowed', `${req.method.slice(0, 20)} is not allowed on ${path}`, { Allow: allowed });
  if (path === '/redfish') return ok({ v1: `${ROOT}/` });
  if (path === ROOT) return ok(serviceRoot());
  if (view.fault === 'wrong-credentials' || !credentialsMatch(req.authorization, view.user, view.password)) {
    return error(401, 'NoValidSession', 'Authentication is required: the credentials were missing or wrong', { 'WWW-Authenticate': REALM });
  }
  if (path === SYSTEMS) return ok(systemsCollection());
  if (path === SYSTEM) return ok(system(view.power));
  return resetReply(req, view);
}
