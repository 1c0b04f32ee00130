/**
 * Splits the parameters every Query request may carry (Action, Version, the signature fields) from
 * the action's own, so each action's strict schema sees only what belongs to it.
 */
import { ClcErrors } from '../core/errors.js';
import { showKey } from '../core/showKey.js';
import type { ParamMap, ParamValue } from './queryParams.js';

/** Query-API envelope parameters (SigV2 and SigV4 names); the Authenticator reads them from the raw pairs. */
const ENVELOPE_PARAMS = new Set([
  'Action', 'Version', 'AWSAccessKeyId', 'SignatureMethod', 'SignatureVersion', 'Signature', 'Timestamp', 'Expires', 'SecurityToken',
]);
const SIGV4_PARAM = /^X-Amz-/;
/** EC2 API dates (any: responses are the same for all), or `eucalyptus`, which Eucalyptus 4's admin tools send. */
const VERSION = /^(\d{4}-\d{2}-\d{2}|eucalyptus)$/i;

export interface QueryEnvelope {
  readonly action: string;
  readonly version: string | undefined;
  readonly params: ParamMap;
}

function leaf(tree: ParamMap, name: string): string | undefined {
  const v: ParamValue | undefined = Object.prototype.hasOwnProperty.call(tree, name) ? tree[name] : undefined;
  if (v === undefined || typeof v === 'string') return v;
  throw ClcErrors.make('InvalidParameterValue', { parameter: name, value: '(a list or group of parameters)', detail: 'expected a single value' });
}

export function splitEnvelope(tree: ParamMap): QueryEnvelope {
  const action = leaf(tree, 'Action');
  if (action === undefined || action === '') throw ClcErrors.make('MissingParameter', { parameter: 'Action' });
  const version = leaf(tree, 'Version');
  if (version !== undefined && !VERSION.test(version)) {
    throw ClcErrors.make('InvalidParameterValue', { parameter: 'Version', value: showKey(version), detail: 'expected an API date such as 2013-02-01, or eucalyptus' });
  }
  const params: Record<string, ParamValue> = Object.create(null) as Record<string, ParamValue>;
  for (const [k, v] of Object.entries(tree)) {
    if (!ENVELOPE_PARAMS.has(k) && !SIGV4_PARAM.test(k)) params[k] = v;
  }
  return { action, version, params: Object.freeze(params) };
}
