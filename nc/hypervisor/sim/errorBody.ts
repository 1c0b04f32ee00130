/**
 * Coded errors on the sim's HTTP protocol: `{ error: { code, message, fields } }`. One function
 * turns any error into a body (daemon side), one turns a body back into a HypervisorErrors error
 * (driver side); an unknown code or a shapeless body is a protocol error, never passed through raw.
 */
import { HypervisorErrors } from '../errors.js';
import { isFerryError, type FerryError } from '../../../shared/errors/registry.js';
import { ErrorBodySchema, type ErrorBody } from './protocol.js';

export type ErrorPayload = ErrorBody['error'];

export interface CodedResponse {
  readonly status: number;
  readonly body: ErrorBody;
}

/** Any error as an HTTP status and body. Only HypervisorErrors codes leave; anything else is internal. */
export function toCodedResponse(e: unknown): CodedResponse {
  const err = isFerryError(e) && HypervisorErrors.has(e.code)
    ? e
    : HypervisorErrors.make('HypervisorInternalError', { detail: (e as Error)?.message ?? String(e) });
  return { status: err.status, body: { error: payloadOf(err) } };
}

export function payloadOf(err: FerryError): ErrorPayload {
  const fields: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(err.fields)) if (v !== undefined) fields[k] = v;
  return { code: err.code, message: err.message, fields };
}

/** Rebuilds a coded error from a payload received from `uri`. */
export function fromPayload(payload: ErrorPayload, uri: string): FerryError {
  if (!HypervisorErrors.has(payload.code)) {
    return HypervisorErrors.make('HypervisorProtocolError', { uri, detail: `unknown error code ${payload.code}: ${payload.message}` });
  }
  return HypervisorErrors.withMessage(payload.code, payload.message, payload.fields ?? {});
}

/** Parses an error response's text; anything but a well-formed coded body is a protocol error. */
export function fromErrorText(text: string, status: number, uri: string): FerryError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return HypervisorErrors.make('HypervisorProtocolError', { uri, detail: `HTTP ${status} with a non-JSON body` });
  }
  const parsed = ErrorBodySchema.safeParse(json);
  if (!parsed.success) {
    return HypervisorErrors.make('HypervisorProtocolError', { uri, detail: `HTTP ${status} without a coded error body` });
  }
  return fromPayload(parsed.data.error, uri);
}
